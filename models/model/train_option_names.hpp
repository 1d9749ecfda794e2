// The command-line names of a training run's enum choices (train_options.hpp, attention_choice.hpp):
// one name table per enum, in the order help lists them, shared by `gcbench train` and
// `gcbench plan` (bench/common/cli.hpp enum_names turns a table into a flag's transformer, so the
// options hold the enums). A later name for a value already named is an alias: accepted, not listed.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "models/model/attention_choice.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

template <typename E>
using NameTable = std::vector<std::pair<std::string, E>>;

// The table of `values` under the names `name` gives them (the *_name functions of the enums).
template <typename E, typename Name>
NameTable<E> names_of(std::initializer_list<E> values, Name name) {
  NameTable<E> t;
  for (const E v : values) t.emplace_back(std::string(name(v)), v);
  return t;
}

// --schedule
inline NameTable<PipeSchedule> pipe_schedule_names() {
  return {{"gpipe", PipeSchedule::gpipe}, {"1f1b", PipeSchedule::one_f_one_b}};
}

// --recompute
inline NameTable<Recompute> recompute_names() {
  return {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
}

// --zero: the ZeRO stages by number (train: one; plan: a list).
inline NameTable<ZeroStage> zero_names() {
  return {{"0", ZeroStage::none}, {"1", ZeroStage::one}, {"2", ZeroStage::two}, {"3", ZeroStage::three}};
}

// plan's --sp and --overlap: lists of off and on.
inline NameTable<bool> on_off_names() { return {{"off", false}, {"on", true}}; }

// --precision: precision_name's spellings.
inline NameTable<Precision> precision_names() { return names_of({Precision::fp32, Precision::bf16}, precision_name); }

// --offload: offload_name's spellings, and the alias activations+optimizer.
inline NameTable<Offload> offload_names() {
  NameTable<Offload> t =
      names_of({Offload::none, Offload::optimizer, Offload::activations, Offload::optimizer_activations}, offload_name);
  t.emplace_back("activations+optimizer", Offload::optimizer_activations);
  return t;
}

// --lr-schedule: lr_schedule_name's spellings.
inline NameTable<LrSchedule> lr_schedule_names() {
  return names_of({LrSchedule::constant, LrSchedule::cosine}, lr_schedule_name);
}

// --attn: auto and the attention registry's rows that train (attention_choice.hpp).
inline NameTable<AttentionRequest> attention_names() { return attention_request_names(); }

// The first name of `value` in `names` ("?" when it has none).
template <typename E>
std::string name_in(const NameTable<E>& names, E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

inline std::string pipe_schedule_name(PipeSchedule s) { return name_in(pipe_schedule_names(), s); }

}  // namespace gcb::models
