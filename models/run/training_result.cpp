// training_result (training_result.hpp): one layout's Result from its ranks' measurements — step time statistics,
// throughput, MFU/HFU, time split, memory, communication and bubble beside theory.hpp's figures.
#include "models/run/training_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/stats.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models {
namespace {

size_t phase_index(const std::string& name) {
  const auto& names = train_phase_names();
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace

const std::vector<std::string>& train_phase_names() {
  static const std::vector<std::string> names = {"forward",
                                                 "backward",
                                                 "optimizer",
                                                 "comm:all_reduce",
                                                 "comm:reduce_scatter",
                                                 "comm:all_gather",
                                                 "comm:loss_all_reduce",
                                                 "comm:tp_all_reduce",
                                                 "comm:tp_all_gather",
                                                 "comm:tp_reduce_scatter",
                                                 "comm:pp_send_recv",
                                                 "comm:pp_embed",
                                                 "comm:bucket_wait",
                                                 "comm:grad_norm_all_reduce"};
  return names;
}

Result training_result(const LayoutMeasurement& m, double peak, const std::string& peak_source) {
  const TrainOptions& t = m.options;
  const LayoutSpec& l = m.layout;
  const StepTheory theory = step_theory(t, l.layout());
  const StageTheory& stage0 = theory.stages[0];  // world rank 0 is on the first pipeline stage
  Result r;
  r.key = "train/" + l.name;
  r.params = layout_params(l, t, m.global_batch);
  r.params["backend"] = m.backend;
  r.params["ranks"] = m.ranks;
  r.samples = m.samples;
  r.sample_flags = m.sample_flags;
  r.stats = summarize(m.samples);
  r.stop_reason = "max_samples";
  r.batch = 1;
  r.timer = m.timer;
  r.clocks = m.clocks;
  for (const RankFigures& f : m.ranks_figures) r.throttled = r.throttled || f.throttle != 0;
  const RankFigures& f0 = m.ranks_figures[0];
  const double step = f0.step_median;
  const auto tokens = static_cast<double>(theory.tokens_per_step);
  const double tps = tokens / step;
  const double mfu = 100.0 * tps * theory.flops_per_token_causal / peak;
  const double hfu = 100.0 * tps * theory.hardware_flops_per_token / peak;
  r.metrics.push_back({"step_time", step, "s", false, std::nullopt, ""});
  r.metrics.push_back({"tokens_per_s", tps, "tokens/s", true, std::nullopt, ""});
  r.metrics.push_back({"mfu", mfu, "%", true, 100.0, peak_source});
  r.metrics.push_back({"hfu", hfu, "%", true, 100.0, peak_source});
  r.metrics.push_back({"final_loss", f0.loss, "nats", false, std::nullopt, ""});
  // A utilisation above 100 % means the denominator is wrong (a peak measured on too small a
  // matmul, a spec that is not this machine's): an ERROR naming it, never a figure to gate on.
  if (hfu > 100.0 || mfu > 100.0) {
    r.status = Status::error;
    r.reason = fmt::format(
        "MFU {:.1f} % / HFU {:.1f} % exceed 100 %: the peak {:.4g} FLOP/s ({}) is below what this step achieved; give "
        "--peak-flops or a larger --peak-size",
        mfu, hfu, peak, peak_source);
  }
  r.model = {{"flops_per_token_causal", theory.flops_per_token_causal},
             {"flops_per_token_palm", theory.flops_per_token_palm},
             {"hardware_flops_per_token", theory.hardware_flops_per_token},
             {"tokens_per_step", tokens},
             {"peak_flops", peak}};

  nlohmann::json ex = nlohmann::json::object();
  ex["step_time_p10"] = f0.step_p10;
  ex["step_time_p90"] = f0.step_p90;
  ex["step_time_mean"] = f0.step_mean;
  ex["tokens_per_s_per_rank"] = tps / m.ranks;
  ex["vocab_padded"] = padded_vocab(t.model.vocab, l.layout().tp);  // the LM head's columns (config.hpp)
  ex["mfu_palm"] = 100.0 * tps * theory.flops_per_token_palm / peak;
  ex["peak_flops"] = peak;
  ex["peak_source"] = peak_source;
  ex["blas_threads"] = m.blas_threads;
  // Step time across ranks (each rank's median): min, median, max and the slowest rank, which
  // every synchronous step waits for.
  std::vector<double> rank_steps;
  size_t slowest = 0;
  for (size_t i = 0; i < m.ranks_figures.size(); ++i) {
    rank_steps.push_back(m.ranks_figures[i].step_median);
    if (rank_steps[i] > rank_steps[slowest]) slowest = i;
  }
  ex["step_time_min_rank"] = *std::min_element(rank_steps.begin(), rank_steps.end());
  ex["step_time_median_rank"] = percentile(rank_steps, 0.5);
  ex["step_time_max_rank"] = rank_steps[slowest];
  ex["slowest_rank"] = slowest;
  // Time split (rank 0, mean seconds per timed step; step_time_mean is its denominator). Every
  // comm:* phase blocked the rank's compute thread: that is the exposed communication. With
  // --overlap the gradient reductions ran on the comm lane instead; the rank blocked only in
  // comm:bucket_wait, so overlapped = lane busy time − that wait.
  nlohmann::json split = nlohmann::json::object();
  double comm_total = 0;
  for (size_t i = 0; i < train_phase_names().size(); ++i) {
    const double s = f0.phases[i];
    if (s == 0.0) continue;
    split[train_phase_names()[i]] = s;
    if (train_phase_names()[i].starts_with("comm:")) comm_total += s;
  }
  ex["time_split"] = split;
  ex["matmul_time"] = f0.matmul;
  ex["matmul_share"] = f0.matmul / f0.step_mean;
  ex["comm_exposed"] = comm_total;
  ex["comm_overlapped"] = std::max(0.0, f0.comm_lane - f0.phases[phase_index("comm:bucket_wait")]);
  ex["comm_overlap_note"] =
      l.overlap ? "dp gradient reductions on a second thread per rank; overlapped = its busy time − comm:bucket_wait"
                : "collectives block the rank (no --overlap): all communication is exposed";
  // Memory per category: rank 0's measured peak and persistent bytes next to the formulas.
  nlohmann::json mem = nlohmann::json::object();
  for (size_t k = 0; k < kMemCategories; ++k) {
    const auto cat = static_cast<MemCategory>(k);
    nlohmann::json e = {{"measured", m.memory.by_category[k].peak},
                        {"persistent", m.memory.by_category[k].current},
                        {"analytic", nullptr}};
    if (m.device_memory) {
      e["device"] = m.device_memory->by_category[k].peak;
      e["device_persistent"] = m.device_memory->by_category[k].current;
    }
    if (t.offload != Offload::none) {  // the host's side (ZeRO-Offload), measured and analytic
      e["host"] = m.host_memory.by_category[k].peak;
      e["host_persistent"] = m.host_memory.by_category[k].current;
      const StateBytes& h = stage0.host_states;
      size_t analytic = 0;
      switch (cat) {
        case MemCategory::params: analytic = h.params; break;
        case MemCategory::grads: analytic = h.grads; break;
        case MemCategory::master: analytic = h.master; break;
        case MemCategory::adam_m: analytic = h.adam_m; break;
        case MemCategory::adam_v: analytic = h.adam_v; break;
        case MemCategory::activations: analytic = stage0.host_activation_bytes; break;
        default: break;
      }
      e["host_analytic"] = analytic;
    }
    double max_rank = 0;
    for (const RankFigures& f : m.ranks_figures) max_rank = std::max(max_rank, f.memory_peak[k]);
    e["max_rank"] = max_rank;
    switch (cat) {
      case MemCategory::params: e["analytic"] = stage0.states.params; break;
      case MemCategory::grads: e["analytic"] = stage0.states.grads; break;
      case MemCategory::master: e["analytic"] = stage0.states.master; break;
      case MemCategory::adam_m: e["analytic"] = stage0.states.adam_m; break;
      case MemCategory::adam_v: e["analytic"] = stage0.states.adam_v; break;
      case MemCategory::activations: e["analytic"] = stage0.activation_bytes; break;
      default: break;
    }
    mem[std::string(mem_category_name(cat))] = e;
  }
  ex["memory"] = mem;
  ex["memory_note"] =
      "rank 0 (first pipeline stage); measured = peak, persistent = allocated between steps; analytic = the "
      "persistent formula for model states (ZeRO paper §3.1 per stage) and the peak for activations "
      "(Korthikanti et al. Table 2 adapted to flash attention); ZeRO-2/3 peaks add transient gradient buckets, "
      "ZeRO-3 peaks the gathered unit; under --offload host / host_persistent / host_analytic are the host's side: "
      "model states (optimizer: master, m, v, the gradients' copy, in bf16 the parameters' way back) and saved "
      "activations (activations: every layer's kept tensors per micro-batch in flight but the stage output)";
  // Communication per step, rank 0: measured logical bytes next to theory.
  nlohmann::json cb = nlohmann::json::object();
  for (size_t k = 0; k < kCommKinds; ++k) {
    const CommCounter& cc = m.comm.by_kind[k];
    if (cc.bytes == 0 && stage0.comm_bytes[k] == 0) continue;
    cb[std::string(comm_kind_name(static_cast<CommKind>(k)))] = {
        {"measured", cc.bytes}, {"theory", stage0.comm_bytes[k]}, {"calls", cc.calls}};
  }
  ex["comm_bytes"] = cb;
  if (t.offload != Offload::none) {
    ex["offload_bytes"] = {{"d2h", {{"measured", m.offload.d2h}, {"theory", stage0.offload.d2h}}},
                           {"h2d", {{"measured", m.offload.h2d}, {"theory", stage0.offload.h2d}}}};
  }
  // Pipeline bubble: time a rank waits in pipeline send/recv per step over the step time, next
  // to the theory (p − 1)/(m + p − 1) (Narayanan et al. 2021 §2.2).
  const size_t pp_idx = phase_index("comm:pp_send_recv");
  nlohmann::json per_rank = nlohmann::json::array();
  double bmin = 1, bmax = 0;
  for (const RankFigures& f : m.ranks_figures) {
    const double b = f.step_mean > 0 ? f.phases[pp_idx] / f.step_mean : 0.0;  // both means over timed steps
    per_rank.push_back(b);
    bmin = std::min(bmin, b);
    bmax = std::max(bmax, b);
  }
  ex["bubble"] = {
      {"per_rank", per_rank}, {"min", bmin}, {"max", bmax}, {"theory", theory.bubble}, {"micro_batches", t.grad_accum}};
  ex["losses"] = m.losses;
  // The optimizer as configured, and per step (warm-up included) the learning rate and the global
  // gradient norm before clipping (null where clipping is off: no norm is computed).
  const OptimizerOptions& op = t.optim;
  ex["optimizer"] = {
      {"name", "AdamW"},
      {"lr", op.adam.lr},
      {"beta1", op.adam.beta1},
      {"beta2", op.adam.beta2},
      {"eps", op.adam.eps},
      {"weight_decay", op.adam.weight_decay},
      {"decay_groups", op.decay_groups ? "matrices and embeddings (no decay on biases and LayerNorm)" : "every tensor"},
      {"lr_schedule", lr_schedule_name(op.schedule)},
      {"lr_warmup_steps", op.warmup_steps},
      {"grad_clip", op.grad_clip}};
  if (op.schedule == LrSchedule::cosine) {
    ex["optimizer"]["lr_decay_steps"] = op.decay_steps;
    ex["optimizer"]["min_lr"] = op.min_lr;
  }
  ex["lrs"] = m.lrs;
  nlohmann::json norms = nlohmann::json::array();
  for (double g : m.grad_norms) norms.push_back(std::isnan(g) ? nlohmann::json(nullptr) : nlohmann::json(g));
  ex["grad_norms"] = norms;
  // What reproduces the run: the synthetic tokens' seed (--seed) and the initialisation's (--init-seed).
  ex["seeds"] = {{"data", t.data_seed}, {"init", t.seed}};
  if (!m.notes.text.empty() || !m.notes.figures.empty()) {
    nlohmann::json b = nlohmann::json::object();
    for (const auto& [k, v] : m.notes.text) b[k] = v;
    for (const auto& [k, v] : m.notes.figures) b[k] = v;
    ex["backend_notes"] = b;
    // The device allocator's own peak next to the sum of the categories' peaks (the accounting
    // counts requested bytes; the pool rounds them and holds freed memory for reuse).
    ex["memory_device_note"] =
        "memory.*.measured / persistent: requested bytes per category; memory.*.device / device_persistent: the "
        "bytes the device pool took for that category's allocations (its used-bytes counter read around each "
        "allocation: 16-byte rounding and pool granularity included); backend_notes.pool_used_peak / "
        "pool_reserved_peak: the pool's own totals (stream-ordered reuse included); device_free / device_total: "
        "cudaMemGetInfo for the whole device";
  }
  nlohmann::json clocks = nlohmann::json::object();
  double clock_min = 0;
  uint64_t throttle = 0;
  for (const RankFigures& f : m.ranks_figures) {
    if (f.sm_clock_mhz > 0) clock_min = clock_min == 0 ? f.sm_clock_mhz : std::min(clock_min, f.sm_clock_mhz);
    throttle |= f.throttle;
  }
  if (clock_min > 0 || throttle != 0) {
    ex["sm_clock_mhz_min_rank"] = clock_min;
    ex["throttle_reasons_any_rank"] = throttle;
  }
  r.extra = ex;
  return r;
}

double sampled_sm_clock(const nlohmann::json& sample) {
  if (!sample.is_object() || !sample.contains("sm_clock_mhz")) return 0;
  const nlohmann::json& mhz = sample.at("sm_clock_mhz");
  return mhz.is_number() ? mhz.get<double>() : 0;
}

Result waived_training_result(const LayoutSpec& l, const TrainOptions& o, int global_batch, const std::string& backend,
                              const std::string& reason) {
  Result r;
  r.key = "train/" + l.name;
  r.params = layout_params(l, o, global_batch);
  r.params["backend"] = backend;
  r.status = Status::waived;
  r.reason = reason;
  return r;
}

}  // namespace gcb::models
