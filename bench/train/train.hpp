// `gcbench train`: real training steps of a GPT model under one parallel layout or a sweep of
// layouts (dp × tp × pp, sp, ZeRO, pipeline schedule, recomputation, precision) on the same model
// and global batch. Flags → a models::TrainRequest → models::run_training → results, printed by
// reports/train_table.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/peer_script.hpp"
#include "bench/common/runner.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/model/attention_choice.hpp"
#include "models/model/config.hpp"
#include "models/model/train_options.hpp"
#include "models/run/training_run.hpp"

namespace gcb::bench {

struct TrainCliOptions {
  std::string model = "tiny";  // a named config or a JSON file (models/model/config.hpp)
  models::ConfigOverrides overrides;
  int dp = 1, tp = 1, pp = 1;
  bool sp = false;
  models::ZeroStage zero = models::ZeroStage::none;
  bool overlap = false;
  models::PipeSchedule schedule = models::PipeSchedule::one_f_one_b;
  int micro_batch = 1;
  int global_batch = 0;  // sequences per step; 0 = ranks × micro-batch
  models::Recompute recompute = models::Recompute::none;
  int recompute_every = 1;  // --recompute-every: full recomputation in blocks of K layers
  int logit_rows = 0;       // --logit-chunk: rows of LM-head logits at a time (0: all)
  models::Precision precision = models::Precision::fp32;
  // --offload none|optimizer|activations|optimizer+activations (train_options.hpp)
  models::Offload offload = models::Offload::none;
  std::string data;           // token file (llm.c / nanoGPT); empty = synthetic
  int steps = 5, warmup = 1;  // --steps, --warmup-steps
  // --backend: a built row of the compute backend table (CLI11 checks the name against it)
  models::ComputeBackend backend = models::compute_backend("cpu");
  // cuda: ours | cudnn | auto (the faster on this GPU)
  models::AttentionRequest attn = models::AttentionRequest::automatic;
  bool lt_gelu = false;     // cuda: the MLP's GELU in cuBLASLt's epilogue (unvalidated)
  bool peer_torch = false;  // run scripts/peers/torch_gpt.py on the same model, weights and tokens
  bool explain = false;     // --explain: the step ledger (train_ledger.hpp)
  int ranks = 0;            // 0 = dp·tp·pp (single layout) or the MPI world size
  uint64_t seed = 1234;     // --init-seed: parameter initialisation
  uint64_t data_seed = 42;  // --seed: the synthetic tokens (the inputs), as every family's --seed
  std::string sweep;        // LAYOUTS: models/model/sweep.hpp
  double peak_flops = 0;    // FLOP/s; 0 = measure an sgemm of peak_size³
  int peak_size = models::kHostPeakSize;
  std::string dump;       // write every step's loss and the final parameters (hex) to this file
  std::string init_from;  // Hugging Face GPT-2 safetensors: the model and its starting weights
  std::string save;       // write the final weights as Hugging Face GPT-2 safetensors + config.json
  double timeout = 300;   // seconds one step (or a wait for another rank) may take; exit 3 past it
  // The optimizer (models::OptimizerOptions): AdamW, its parameter groups, schedule and clipping.
  double lr = 1e-3, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  bool decay_all = false;  // --decay-all: weight decay on every tensor, LayerNorm and biases too
  models::LrSchedule lr_schedule = models::LrSchedule::constant;
  int lr_warmup_steps = 0;
  int lr_decay_steps = 0;  // cosine: 0 = the run's steps (--warmup-steps + --steps)
  double min_lr = -1;      // cosine: < 0 = lr / 10
  double grad_clip = 1.0;  // 0: no clipping
};

// Flags to the library's request; gcb::UsageError (one line) for anything invalid, before any
// allocation.
models::TrainRequest train_request(const TrainCliOptions& o);

// The quick suite: a sweep of dp2, zero1, tp2, tp2-sp, pp2-1f1b on `tiny` with 2 rank threads
// (a few seconds), `steps` timed steps each (one sample per step: the suite passes kQuickSamples,
// what compare's U test needs). Results go to `runner`.
void run_train_quick(Runner& runner, uint64_t data_seed, int steps);

// --- the torch peer (bench/train/train_peer.cpp) --------------------------------------------------
// Writes the run's initial weights and token sequences to a temporary folder
// (models/run/torch_peer.hpp) and runs scripts/peers/torch_gpt.py on them once per entry of `rounds`
// (its --modes, in that order: "eager,compile"), each with the run's warm-up and timed steps.
std::vector<PeerRun> run_train_torch_peer(const models::TrainRequest& r, const std::vector<std::string>& rounds);
// Runs the peer in the order of models::kPeerOrder — `ours` (already run), torch with eager then
// compile, torch with compile then eager, `ours_again()` (when given) — and returns
// models::train_torch_ratios of the merged rounds; when none of `ours` ran, runs nothing and
// returns the WAIVED rows.
std::vector<Result> train_torch_peer_results(const models::TrainRequest& r, const std::vector<Result>& ours,
                                             const std::function<std::vector<Result>()>& ours_again = {});

void add_train_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
