// The torch side of `gcbench train --peer-torch` (scripts/peers/torch_gpt.py): the inputs it
// trains on (the same GPT-2, the same initial weights in Hugging Face's safetensors format, the
// same token sequences, the same AdamW), and its measurement turned into result rows next to ours:
// train/<layout>/vs_torch_eager and vs_torch_compile (tokens/s ours ÷ torch) with the loss after
// every step compared. Running the script is the caller's (bench/train/train_peer.cpp), in two
// rounds that alternate ours and torch's (kPeerOrder).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/run/training_run.hpp"
#include "reports/result.hpp"
#include "reports/waived_result.hpp"

namespace gcb::models {

// Writes the run's initial weights (unless it starts from --init-from's file) and the token
// sequences of its warm-up and timed steps into `dir`, and returns the script's arguments (device
// cuda for a GPU backend, else cpu with the BLAS thread count).
std::string write_torch_peer_inputs(const TrainRequest& r, const std::filesystem::path& dir);

// Per layout of `ours`: train/<layout>/vs_torch_eager and vs_torch_compile, metric "ratio" =
// tokens/s ours ÷ torch's, and the loss after every step against torch's (FAIL beyond
// torch_loss_tolerance); WAIVED rows where either side has no figure, one WAIVED train/vs_torch
// row when the peer is unavailable. `peer` is the script's JSON.
std::vector<Result> train_torch_ratios(const std::vector<Result>& ours, const nlohmann::json& peer,
                                       Precision precision);
// Relative loss tolerance against torch: fp32 1e-4; bf16 2⁻⁷.
double torch_loss_tolerance(Precision p);

// The order of the comparison's runs: ours, torch (eager, then compile), torch (compile, then
// eager), ours again — an ABBA sequence, so that neither side (nor either torch mode) always runs
// first on a device whose clocks and temperature drift during the run, and a linear drift weighs
// on both sides alike. Every run has the request's warm-up and timed steps.
inline constexpr const char* kPeerOrder =
    "ours, torch (eager then compile), torch (compile then eager), ours: each side's tokens/s is the mean of its "
    "two runs, each the median step after the same warm-up";
// The script's JSON of several rounds as one of the same form: per mode (in the first round's
// order), median_s and tokens_per_s the mean over the rounds, null with that round's reason when
// a round has no figure; the losses of the first round; each round's tokens/s under
// "rounds_tokens_per_s". Unavailable when a round was (with its reason); kPeerOrder under "order".
nlohmann::json merge_torch_rounds(const std::vector<nlohmann::json>& rounds);
// Our results of several rounds (the same layouts in the same order) as the first round's, with
// tokens_per_s the mean over the rounds and each round's under extra "rounds_tokens_per_s"; a
// layout that did not pass in every round keeps its first round's result (PASS or not) untouched.
std::vector<Result> merge_our_rounds(const std::vector<std::vector<Result>>& rounds);

}  // namespace gcb::models
