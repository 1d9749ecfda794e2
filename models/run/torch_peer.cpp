// The torch peer's inputs and rows: see models/run/torch_peer.hpp.
#include "models/run/torch_peer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <thread>

#include "core/error.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/param_init.hpp"
#include "models/io/hf_gpt2.hpp"
#include "models/model/param_layout.hpp"
#include "models/io/token_data.hpp"

namespace gcb::models {
namespace {

namespace fs = std::filesystem;

// The weights every layout starts from (models/model/param_layout.hpp init), in canonical order.
std::vector<float> initial_weights(const GptConfig& c, uint64_t seed) {
  const ParamLayout layout(c);
  CpuBackend be;
  std::vector<float> out(layout.total());
  for (int u = 0; u < layout.num_units(); ++u) {
    const size_t n = layout.unit_size(u);
    Buffer b = be.alloc(MemCategory::workspace, DType::f32, n);
    init_range(layout, be, b.view(), u, 0, n, seed);
    std::copy_n(b.f32(), n, out.begin() + static_cast<std::ptrdiff_t>(layout.unit_offset(u)));
  }
  return out;
}

// The sequences of `steps` global batches, as the engine numbers them: T + 1 tokens per row
// (inputs, then the last target), raw little-endian int32.
void write_peer_tokens(const std::string& path, const TrainRequest& r, int steps) {
  const GptConfig& c = r.base.model;
  const std::unique_ptr<TokenSource> src = r.base.data_file.empty() ? synthetic_tokens(r.base.data_seed, c.vocab)
                                                                    : open_token_file(r.base.data_file, c.vocab, c.seq);
  const int rows = steps * global_batch(r);
  std::vector<int32_t> tokens, targets, out;
  src->read(0, rows, c.seq, tokens, targets);
  const auto T = static_cast<size_t>(c.seq);
  for (size_t s = 0; s < static_cast<size_t>(rows); ++s) {
    out.insert(out.end(), tokens.begin() + static_cast<std::ptrdiff_t>(s * T),
               tokens.begin() + static_cast<std::ptrdiff_t>((s + 1) * T));
    out.push_back(targets[(s + 1) * T - 1]);
  }
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(int32_t)));
  if (!f) throw UsageError("cannot write " + path);
}

}  // namespace

double torch_loss_tolerance(Precision p) { return p == Precision::bf16 ? 0x1p-7 : 1e-4; }

nlohmann::json merge_torch_rounds(const std::vector<nlohmann::json>& rounds) {
  GCB_CHECK(!rounds.empty(), "merge_torch_rounds: no round");
  for (const nlohmann::json& r : rounds)
    if (!r.value("available", false)) return r;
  nlohmann::json out = rounds.front();
  out["order"] = kPeerOrder;
  for (nlohmann::json& entry : out.at("results")) {
    const std::string mode = entry.value("mode", "");
    std::vector<double> tps, median;
    nlohmann::json missing;  // the first round entry of this mode without a figure
    for (const nlohmann::json& r : rounds) {
      const auto& results = r.at("results");
      const auto it = std::find_if(results.begin(), results.end(),
                                   [&](const nlohmann::json& e) { return e.value("mode", "") == mode; });
      if (it == results.end()) {
        if (missing.is_null()) missing = {{"reason", "no " + mode + " entry in a round"}};
      } else if (!it->contains("tokens_per_s") || it->at("tokens_per_s").is_null()) {
        if (missing.is_null()) missing = *it;
      } else {
        tps.push_back(it->at("tokens_per_s").get<double>());
        median.push_back(it->value("median_s", 0.0));
      }
    }
    entry["rounds_tokens_per_s"] = tps;
    if (!missing.is_null()) {
      entry["tokens_per_s"] = nullptr;
      entry["reason"] = missing.value("reason", std::string("no timing"));
      continue;
    }
    const auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / static_cast<double>(v.size());
    };
    entry["tokens_per_s"] = mean(tps);
    entry["median_s"] = mean(median);
  }
  return out;
}

std::vector<Result> merge_our_rounds(const std::vector<std::vector<Result>>& rounds) {
  GCB_CHECK(!rounds.empty(), "merge_our_rounds: no round");
  std::vector<Result> out = rounds.front();
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<double> tps;
    for (const std::vector<Result>& round : rounds) {
      if (i >= round.size() || round[i].key != out[i].key || round[i].status != Status::pass) break;
      const Metric* m = round[i].metric("tokens_per_s");
      if (m == nullptr || !m->value) break;
      tps.push_back(*m->value);
    }
    if (tps.size() != rounds.size()) continue;
    double sum = 0;
    for (double x : tps) sum += x;
    for (Metric& m : out[i].metrics)
      if (m.name == "tokens_per_s") m.value = sum / static_cast<double>(tps.size());
    out[i].extra["rounds_tokens_per_s"] = tps;
  }
  return out;
}

std::string write_torch_peer_inputs(const TrainRequest& r, const fs::path& dir) {
  std::string weights = r.init_from;
  if (weights.empty()) {
    weights = (dir / "model.safetensors").string();
    save_hf_gpt2(weights, r.base.model, initial_weights(r.base.model, r.base.seed));
  }
  const std::string tokens = (dir / "tokens.i32").string();
  write_peer_tokens(tokens, r, r.warmup + r.steps);
  const bool gpu = r.backend.memory == MemorySpace::device;
  const int threads =
      cpu_matmul_threads() > 0 ? cpu_matmul_threads() : static_cast<int>(std::thread::hardware_concurrency());
  // The optimizer as ours: groups, schedule and clipping (scripts/peers/torch_gpt.py).
  const OptimizerOptions& op = r.base.optim;
  const AdamWArgs& a = op.adam;
  return fmt::format(
      "--weights '{}' --tokens '{}' --seq {} --batch {} --steps {} --warmup {} --device {} --precision {} "
      "--threads {} --lr {} --beta1 {} --beta2 {} --eps {} --weight-decay {}{} --lr-schedule {} --lr-warmup-steps {} "
      "--lr-decay-steps {} --min-lr {} --grad-clip {}",
      weights, tokens, r.base.model.seq, global_batch(r), r.steps, r.warmup, gpu ? "cuda" : "cpu",
      precision_name(r.base.precision), threads, a.lr, a.beta1, a.beta2, a.eps, a.weight_decay,
      op.decay_groups ? "" : " --decay-all", lr_schedule_name(op.schedule), op.warmup_steps, op.decay_steps, op.min_lr,
      op.grad_clip);
}

std::vector<Result> train_torch_ratios(const std::vector<Result>& ours, const nlohmann::json& peer,
                                       Precision precision) {
  if (!peer.value("available", false))
    return {waived_result("train/vs_torch",
                          "torch peer unavailable: " + peer.value("reason", std::string("no reason given")))};
  const double tol = torch_loss_tolerance(precision);
  std::vector<Result> out;
  for (const Result& r : ours) {
    for (const auto& entry : peer.at("results")) {
      const std::string mode = entry.value("mode", "");
      Result x;
      x.key = r.key + "/vs_torch_" + mode;
      x.params = r.params;
      const Metric* tps = r.metric("tokens_per_s");
      if (r.status != Status::pass || tps == nullptr || !tps->value) {
        x.status = Status::waived;
        x.reason = "our layout did not run: " + r.reason;
      } else if (!entry.contains("tokens_per_s") || entry.at("tokens_per_s").is_null()) {
        x.status = Status::waived;
        x.reason = "torch " + mode + ": " + entry.value("reason", std::string("no timing"));
      } else {
        const double theirs = entry.at("tokens_per_s").get<double>();
        x.metrics.push_back(Metric{"ratio", *tps->value / theirs, "x", true, std::nullopt, ""});
        // The loss after each step, ours against torch's, relative to torch's.
        const std::vector<double> mine = r.extra.value("losses", std::vector<double>{});
        const std::vector<double> torch_losses = entry.value("losses", std::vector<double>{});
        double worst = 0;
        const size_t n = std::min(mine.size(), torch_losses.size());
        for (size_t i = 0; i < n; ++i)
          worst = std::max(worst, std::fabs(mine[i] - torch_losses[i]) / std::fabs(torch_losses[i]));
        x.extra = {
            {"compares", fmt::format("tokens/s of gcbench train ÷ torch {} on the same GPT-2, initial weights, tokens, "
                                     "global batch and AdamW",
                                     mode == "compile" ? "torch.compile" : "eager")},
            {"ours_tokens_per_s", *tps->value},
            {"torch_tokens_per_s", theirs},
            {"torch_median_s", entry.value("median_s", 0.0)},
            {"ours_rounds_tokens_per_s", r.extra.value("rounds_tokens_per_s", std::vector<double>{})},
            {"torch_rounds_tokens_per_s", entry.value("rounds_tokens_per_s", std::vector<double>{})},
            {"order", peer.value("order", std::string("ours, then torch (one run each)"))},
            {"torch", peer.value("torch", "")},
            {"torch_impl", peer.value("impl", "")},
            {"torch_device", peer.value("device", "")},
            {"torch_threads", peer.value("threads", 0)},
            {"losses_ours", mine},
            {"losses_torch", torch_losses},
            {"grad_norms_ours", r.extra.value("grad_norms", nlohmann::json::array())},
            {"grad_norms_torch", entry.value("grad_norms", nlohmann::json::array())},
            {"loss_max_rel_diff", worst},
            {"loss_tolerance", tol},
            {"loss_tolerance_note", precision == Precision::bf16
                                        ? "2^-7: two bf16 trainings of one model (bf16 weights with fp32 master, "
                                          "torch.autocast over fp32 weights), each within 2^-8 of fp32"
                                        : "1e-4 relative: fp32 on both sides, sums in different orders"}};
        if (n == 0 || worst > tol) {
          x.status = Status::fail;
          x.reason = n == 0 ? "no losses to compare"
                            : fmt::format("loss differs from torch {} by {:.3g} relative (tolerance {:.3g})", mode,
                                          worst, tol);
        }
      }
      out.push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace gcb::models
