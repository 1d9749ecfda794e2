// The torch peer of `gcbench train --peer-torch` (scripts/peers/torch_gpt.py): the same GPT-2, the
// same initial weights (a safetensors file in Hugging Face's format), the same token sequences and
// the same AdamW, run in the same invocation eagerly and under torch.compile; reported as
// train/<layout>/vs_torch_eager and vs_torch_compile (tokens/s ours ÷ torch) with the loss after
// every step compared with ours.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/common/peer_script.hpp"
#include "bench/train/train.hpp"
#include "core/error.hpp"
#include "models/backend_factory.hpp"
#include "models/cpu_backend.hpp"
#include "models/hf_gpt2.hpp"
#include "models/param_layout.hpp"
#include "models/token_data.hpp"

namespace gcb::bench {
namespace {

namespace fs = std::filesystem;

// The weights every layout starts from (models/param_layout.hpp init), in canonical order.
std::vector<float> initial_weights(const models::GptConfig& c, uint64_t seed) {
  const models::ParamLayout layout(c);
  models::CpuBackend be;
  std::vector<float> out(layout.total());
  for (int u = 0; u < layout.num_units(); ++u) {
    const size_t n = layout.unit_size(u);
    models::Buffer b = be.alloc(models::MemCategory::workspace, DType::f32, n);
    layout.init_range(be, b.view(), u, 0, n, seed);
    std::copy_n(b.f32(), n, out.begin() + static_cast<std::ptrdiff_t>(layout.unit_offset(u)));
  }
  return out;
}

// The sequences of `steps` global batches, as the engine numbers them: T + 1 tokens per row
// (inputs, then the last target), raw little-endian int32.
void write_peer_tokens(const std::string& path, const models::TrainRequest& r, int steps) {
  const models::GptConfig& c = r.base.model;
  const std::unique_ptr<models::TokenSource> src = r.base.data_file.empty()
                                                       ? models::synthetic_tokens(r.base.data_seed, c.vocab)
                                                       : models::open_token_file(r.base.data_file, c.vocab, c.seq);
  const int rows = steps * models::global_batch(r);
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

Result waived(std::string key, std::string reason) { return waived_result(std::move(key), std::move(reason)); }

}  // namespace

double torch_loss_tolerance(models::Precision p) { return p == models::Precision::bf16 ? 0x1p-7 : 1e-4; }

PeerRun run_train_torch_peer(const models::TrainRequest& r) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gcb-torch-peer-{}", getpid());
  fs::create_directories(dir);
  std::string weights = r.init_from;
  if (weights.empty()) {
    weights = (dir / "model.safetensors").string();
    models::save_hf_gpt2(weights, r.base.model, initial_weights(r.base.model, r.base.seed));
  }
  const std::string tokens = (dir / "tokens.i32").string();
  write_peer_tokens(tokens, r, r.warmup + r.steps);
  const bool gpu = models::compute_backend(r.backend).memory == MemorySpace::device;
  const int threads = models::cpu_matmul_threads() > 0 ? models::cpu_matmul_threads()
                                                       : static_cast<int>(std::thread::hardware_concurrency());
  const models::AdamWArgs& a = r.base.adam;
  const std::string args = fmt::format(
      "--weights '{}' --tokens '{}' --seq {} --batch {} --steps {} --warmup {} --device {} --precision {} "
      "--threads {} --lr {} --beta1 {} --beta2 {} --eps {} --weight-decay {}",
      weights, tokens, r.base.model.seq, models::global_batch(r), r.steps, r.warmup, gpu ? "cuda" : "cpu",
      models::precision_name(r.base.precision), threads, a.lr, a.beta1, a.beta2, a.eps, a.weight_decay);
  PeerRun run = run_peer_script("torch_gpt.py", args);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return run;
}

std::vector<Result> train_torch_ratios(const std::vector<Result>& ours, const nlohmann::json& peer,
                                       models::Precision precision) {
  if (!peer.value("available", false))
    return {
        waived("train/vs_torch", "torch peer unavailable: " + peer.value("reason", std::string("no reason given")))};
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
            {"torch", peer.value("torch", "")},
            {"torch_impl", peer.value("impl", "")},
            {"torch_device", peer.value("device", "")},
            {"torch_threads", peer.value("threads", 0)},
            {"losses_ours", mine},
            {"losses_torch", torch_losses},
            {"loss_max_rel_diff", worst},
            {"loss_tolerance", tol},
            {"loss_tolerance_note", precision == models::Precision::bf16
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

std::vector<Result> train_torch_peer_results(const models::TrainRequest& r, const std::vector<Result>& ours) {
  // Nothing of ours ran (no GPU, say): no figure to compare, so torch is not run either.
  if (std::none_of(ours.begin(), ours.end(), [](const Result& x) { return x.status == Status::pass; })) {
    return train_torch_ratios(ours, {{"available", true}, {"results", {{{"mode", "eager"}}, {{"mode", "compile"}}}}},
                              r.base.precision);
  }
  const PeerRun peer = run_train_torch_peer(r);
  if (!peer.error.empty()) return {waived("train/vs_torch", peer.error)};
  return train_torch_ratios(ours, peer.json, r.base.precision);
}

}  // namespace gcb::bench
