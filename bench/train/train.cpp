// `gcbench train`: see bench/train/train.hpp and docs/readme-train.md.
#include "bench/train/train.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <tuple>

#include "bench/common/rank_threads.hpp"
#include "bench/common/cli.hpp"
#include "bench/train/train_ledger.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/model/config.hpp"
#include "models/io/hf_gpt2.hpp"
#include "models/model/train_option_names.hpp"
#include "reports/train_table.hpp"

namespace gcb::bench {

namespace {

// The model: from the checkpoint when starting from one (its shapes; the head count from its
// config.json or --heads), else a named config or JSON file with the overrides applied.
models::GptConfig resolve_config(const TrainCliOptions& o) {
  if (!o.init_from.empty()) {
    models::GptConfig c = models::hf_gpt2_config(o.init_from, o.overrides.heads);
    const models::ConfigOverrides& v = o.overrides;
    for (const auto& [flag, given, held] :
         {std::tuple{"--layers", v.layers, c.layers}, std::tuple{"--hidden", v.hidden, c.hidden},
          std::tuple{"--vocab", v.vocab, c.vocab}, std::tuple{"--seq", v.seq, c.seq}}) {
      if (given > 0 && given != held) {
        throw UsageError(
            fmt::format("{} {} conflicts with --init-from {}, which holds {}", flag, given, o.init_from, held));
      }
    }
    return c;
  }
  const bool file = o.model.find(".json") != std::string::npos;
  const models::GptConfig base = file ? models::load_config_file(o.model) : models::named_config(o.model);
  models::GptConfig c = models::apply_overrides(base, o.overrides);
  models::validate(c);
  return c;
}

// --device cpu|gpu: the first compute backend (table order) whose tensors live in that memory, or
// the explicit --backend when they do (exit 2 when not); --device all keeps --backend.
models::ComputeBackend backend_for_device(const std::string& device, const models::ComputeBackend& backend,
                                          bool backend_given) {
  const std::optional<MemorySpace> memory = device_memory(device);
  if (!memory) return backend;
  if (backend_given) {
    if (backend.memory != *memory)
      throw UsageError(fmt::format("--backend {} runs on {} memory but --device {} asks for {} memory", backend.name,
                                   memory_space_name(backend.memory), device, memory_space_name(*memory)));
    return backend;
  }
  for (const models::ComputeBackend& b : models::compute_backends())
    if (b.memory == *memory) return b;
  throw UsageError(
      fmt::format("--device {}: no compute backend runs on {} memory", device, memory_space_name(*memory)));
}

// --attn's rows in help: each row that trains, with its label and head dims (attention_registry.hpp).
std::string attention_rows_help() {
  std::string s;
  for (const kernels::attn::AttnImplId id : kernels::attn::training_attention_impls()) {
    const kernels::attn::AttnImplRow& row = kernels::attn::attention_impl(id);
    s += fmt::format("{}{} ({}{})", s.empty() ? "" : ", ", row.name, row.label,
                     row.head_dims.empty() ? "" : fmt::format(", head dim {}", fmt::join(row.head_dims, "/")));
  }
  return s;
}

}  // namespace

models::TrainRequest train_request(const TrainCliOptions& o) {
  models::TrainRequest r;
  r.base.model = resolve_config(o);
  r.base.micro_batch = o.micro_batch;
  r.base.seed = o.seed;
  r.base.data_seed = o.data_seed;
  r.base.recompute = o.recompute;
  r.base.recompute_every = o.recompute_every;
  r.base.logit_rows = o.logit_rows;
  r.base.precision = o.precision;
  r.base.offload = o.offload;
  r.base.data_file = o.data;
  models::OptimizerOptions& op = r.base.optim;
  op.adam.lr = static_cast<float>(o.lr);
  op.adam.weight_decay = static_cast<float>(o.weight_decay);
  op.adam.beta1 = static_cast<float>(o.beta1);
  op.adam.beta2 = static_cast<float>(o.beta2);
  op.adam.eps = static_cast<float>(o.eps);
  op.decay_groups = !o.decay_all;
  op.schedule = o.lr_schedule;
  if (op.schedule == models::LrSchedule::constant && (o.lr_decay_steps > 0 || o.min_lr >= 0))
    throw UsageError("--min-lr and --lr-decay-steps shape the cosine schedule: add --lr-schedule cosine");
  op.warmup_steps = o.lr_warmup_steps;
  op.decay_steps = o.lr_decay_steps > 0 ? o.lr_decay_steps : o.warmup + o.steps;
  op.min_lr = static_cast<float>(o.min_lr < 0 ? o.lr / 10 : o.min_lr);
  op.grad_clip = o.grad_clip;
  if (const std::string e = models::optimizer_error(op); !e.empty()) throw UsageError(e);
  const LauncherInfo launcher = detect_launcher();
  if (launcher.launched && o.ranks > 0 && o.ranks != launcher.size) {
    throw UsageError(fmt::format("--ranks {} but the launcher started {} processes", o.ranks, launcher.size));
  }
  if (!o.sweep.empty()) {
    r.ranks = launcher.launched ? launcher.size : (o.ranks > 0 ? o.ranks : models::sweep_ranks(o.sweep));
    r.layouts = models::parse_sweep(o.sweep, r.ranks);
  } else {
    models::LayoutSpec l;
    l.dp = o.dp;
    l.tp = o.tp;
    l.pp = o.pp;
    l.sp = o.sp;
    l.zero = o.zero;
    l.overlap = o.overlap;
    l.schedule = o.schedule;
    l.name = models::layout_name(l);
    r.ranks = launcher.launched ? launcher.size : (o.ranks > 0 ? o.ranks : l.dp * l.tp * l.pp);
    r.layouts.push_back(l);
  }
  r.global_batch = o.global_batch;
  r.steps = o.steps;
  r.warmup = o.warmup;
  r.backend = o.backend;
  r.attn = o.attn;
  r.lt_gelu = o.lt_gelu;
  r.peak_flops = o.peak_flops;
  r.peak_source = "flag:--peak-flops";
  r.peak_size = o.peak_size;
  r.dump = o.dump;
  r.init_from = o.init_from;
  r.save = o.save;
  r.timeout = o.timeout;
  models::check_request(r);
  return r;
}

void run_train_quick(Runner& runner, uint64_t data_seed, int steps) {
  TrainCliOptions o;
  o.data_seed = data_seed;  // run's --seed, as every family of the suite gets it
  o.seed = 1;               // --init-seed's default on the command line
  o.model = "tiny";
  o.ranks = 2;
  o.micro_batch = 2;
  o.global_batch = 8;
  o.steps = steps;  // one sample per timed step
  o.warmup = 1;
  o.peak_size = models::kHostPeakSize;  // the same probe as `train` and `plan`
  o.sweep = "dp2,zero1,tp2,tp2-sp,pp2-1f1b";
  if (!rank_threads_fit(runner, "train/quick", o.ranks)) return;
  for (Result& r : models::run_training(train_request(o))) runner.add(std::move(r));
}

void add_train_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app =
      root.add_subcommand("train", "Training steps of a GPT model under dp × tp × pp, sp, ZeRO, pipeline schedules");
  auto common = std::make_shared<CommonOptions>();
  auto o = std::make_shared<TrainCliOptions>();
  // --seed seeds the inputs (synthetic tokens) as in every family, --init-seed the parameters; the
  // defaults keep what a plain `gcbench train` ran before the two were separated.
  common->seed = o->data_seed;
  o->seed = 1;
  add_common_options(*app, *common, true, false);
  app->add_option(
         "--model", o->model,
         "Named config (tiny, small, gpt2-124m … gpt2-1558m (or gpt2, gpt2-medium, gpt2-large, gpt2-xl), gpt3-small … gpt3-175b) or a JSON file")
      ->transform([](const std::string& s) { return models::canonical_config_name(s); })
      ->capture_default_str();
  app->add_option("--layers", o->overrides.layers, "Override the number of layers");
  app->add_option("--hidden", o->overrides.hidden, "Override the hidden size");
  app->add_option("--heads", o->overrides.heads, "Override the number of heads");
  app->add_option("--vocab", o->overrides.vocab, "Override the vocabulary size");
  app->add_option("--seq", o->overrides.seq, "Override the sequence length");
  app->add_option("--dp", o->dp, "Data-parallel degree")->capture_default_str();
  app->add_option("--tp", o->tp, "Tensor-parallel degree (Megatron)")->capture_default_str();
  app->add_option("--pp", o->pp, "Pipeline-parallel degree (stages)")->capture_default_str();
  app->add_flag("--sp", o->sp, "Sequence parallelism in the tp group (Korthikanti et al.)");
  app->add_option("--zero", o->zero, "ZeRO stage on the dp dimension: 0–3, with any tp / sp / pp")
      ->transform(enum_names(models::zero_names()))
      ->default_str(models::name_in(models::zero_names(), o->zero));
  app->add_flag("--overlap", o->overlap,
                "Reduce gradient buckets asynchronously (a second thread per rank on the CPU) while backward goes on; "
                "every ZeRO stage, with tp / sp / pp");
  app->add_option("--schedule", o->schedule, "Pipeline schedule: gpipe | 1f1b")
      ->transform(enum_names(models::pipe_schedule_names()))
      ->default_str(models::pipe_schedule_name(o->schedule));
  app->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")->capture_default_str();
  app->add_option("--global-batch", o->global_batch, "Sequences per step (default: ranks × micro-batch)");
  app->add_option("--logit-chunk", o->logit_rows,
                  "Rows (tokens) of LM-head logits computed at a time: the head runs chunk by chunk and a rank holds "
                  "ROWS·V/tp logits instead of micro-batch·T·V/tp (0: all at once, or with --backend cuda on a GPU "
                  "too small for them the most rows that fit)")
      ->check(non_negative())
      ->capture_default_str();
  app->add_option("--recompute", o->recompute, "Activation recomputation: none | selective | full")
      ->transform(enum_names(models::recompute_names()))
      ->default_str(models::name_in(models::recompute_names(), o->recompute));
  app->add_option("--recompute-every", o->recompute_every,
                  "With --recompute full: recompute blocks of K consecutive layers of a stage, keeping only each "
                  "block's input (Chen et al. 2016; 1 ≤ K ≤ the layers of a stage; 1: every layer its own block)")
      ->capture_default_str();
  app->add_option("--precision", o->precision,
                  "fp32, or bf16: bf16 parameters, gradients and activations with fp32 master weights and Adam moments")
      ->transform(enum_names(models::precision_names()))
      ->default_str(std::string(models::precision_name(o->precision)));
  app->add_option("--offload", o->offload,
                  "none; optimizer (ZeRO-Offload, Ren et al. 2021 §4): fp32 master weights and Adam moments in host "
                  "memory, the reduced gradients copied to the host each step, AdamW on the CPU unit by unit, each "
                  "unit's parameters copied back while the host updates the next; activations: each layer's saved "
                  "tensors copied to host memory after its forward and back before its backward (two device working "
                  "sets); optimizer+activations: both. No delayed update and no overlap with the compute: bitwise "
                  "the losses without offload. With --backend cpu the host "
                  "memory is the backend's own, so only the accounting moves; proved on the CPU and the fake device, "
                  "the CUDA path compiles, unvalidated")
      ->transform(enum_names(models::offload_names()))
      ->default_str(std::string(models::offload_name(o->offload)));
  app->add_option("--data", o->data,
                  "Token file in llm.c (256-int32 header) or nanoGPT (raw uint16) format; default: synthetic tokens");
  app->add_option("--steps", o->steps, "Timed steps")->capture_default_str();
  app->add_option("--warmup-steps", o->warmup, "Untimed training steps before timing")->capture_default_str();
  app->add_option("--init-seed", o->seed, "Seed of the parameter initialisation (--seed: the synthetic tokens)")
      ->check(non_negative())
      ->capture_default_str();
  auto* backend =
      app->add_option_function<std::string>(
             "--backend", [o](const std::string& name) { o->backend = models::compute_backend(name); },
             "Compute backend: " + models::compute_backend_names() +
                 " (cuda: compiles, unvalidated, never run on a GPU; one GPU per rank, NCCL groups; WAIVED rows where no "
                 "GPU exists)")
          ->check(CLI::Validator([](const std::string& name) { return models::backend_refusal(name); },
                                 "{" + models::compute_backend_names() + "}"))
          ->default_str(std::string(o->backend.name));
  app->add_option("--attn", o->attn,
                  "cuda attention kernels at bf16: " + attention_rows_help() +
                      ", auto (the faster forward + backward on this GPU and shape, timed on every rank and decided "
                      "once for all by the slowest rank's times; recorded); fp32 runs the exact row kernel")
      ->transform(enum_names(models::attention_names()))
      ->default_str(models::attention_request_name(o->attn));
  app->add_flag("--lt-gelu", o->lt_gelu,
                "cuda: the MLP's GELU in cuBLASLt's epilogue (GELU_AUX forward, DGELU backward) instead of our "
                "tanh-GELU kernels; unvalidated: whether cuBLASLt's GELU is GPT-2's tanh form has not been checked "
                "on a GPU (test_lt_gelu_epilogue)");
  app->add_flag("--explain", o->explain,
                "Print each layout's step ledger: per kernel family of rank 0's step (stage 0) the launches, GFLOP and "
                "MB moved from the theory, and the floor at the run's peak and (cuda) the GPU's spec memory bandwidth; "
                "also in the JSON (extra.step_ledger)");
  app->add_flag("--peer-torch", o->peer_torch,
                "Also train the same GPT in torch (eager and torch.compile, scripts/peers/torch_gpt.py) and report "
                "train/<layout>/vs_torch_eager|compile and the loss against ours (cpu: torch on the CPU with the same "
                "threads; cuda: unvalidated)");
  app->add_option(
         "--ranks", o->ranks,
         "Rank threads (default: dp·tp·pp, or the fewest every --sweep layout fits; under mpirun the world size)")
      ->check(positive());
  app->add_option("--sweep", o->sweep, "Layouts to compare, e.g. dp,zero1,tp2,tp2-sp,pp4-1f1b (see docs)");
  app->add_option("--peak-flops", o->peak_flops,
                  "Device peak in FLOP/s for MFU (default: cuda: the GPU's dense bf16 peak from the spec table, or its "
                  "measured bf16 GEMM for a GPU the table lacks; cpu: measured sgemm)")
      ->check(positive());
  app->add_option("--peak-size", o->peak_size, "n of the n³ sgemm that measures the CPU peak")
      ->check(positive())
      ->capture_default_str();
  // The optimizer, as nanoGPT / llm.c / Megatron-LM configure it (docs/readme-train.md "Optimizer").
  app->add_option("--lr", o->lr, "AdamW peak learning rate")->capture_default_str();
  app->add_option("--weight-decay", o->weight_decay,
                  "AdamW decoupled weight decay, on the matrices and embeddings only (see --decay-all)")
      ->capture_default_str();
  app->add_option("--beta1", o->beta1, "AdamW β1")->capture_default_str();
  app->add_option("--beta2", o->beta2, "AdamW β2")->capture_default_str();
  app->add_option("--eps", o->eps, "AdamW ε")->capture_default_str();
  app->add_flag("--decay-all", o->decay_all,
                "Weight decay on every tensor, LayerNorm weights and biases included (default: two parameter "
                "groups, no decay on biases and LayerNorm, as nanoGPT and Megatron-LM)");
  app->add_option("--lr-schedule", o->lr_schedule,
                  "constant | cosine (nanoGPT get_lr: linear warm-up, cosine decay to --min-lr at --lr-decay-steps)")
      ->transform(enum_names(models::lr_schedule_names()))
      ->default_str(std::string(models::lr_schedule_name(o->lr_schedule)));
  app->add_option("--lr-warmup-steps", o->lr_warmup_steps,
                  "Steps of linear learning-rate warm-up, lr·(step+1)/(N+1) (either schedule; not --warmup-steps, "
                  "which are untimed steps)")
      ->capture_default_str();
  app->add_option("--lr-decay-steps", o->lr_decay_steps,
                  "cosine: the step the learning rate reaches --min-lr (default: --warmup-steps + --steps)");
  app->add_option("--min-lr", o->min_lr, "cosine: the final learning rate (default: --lr / 10)");
  app->add_option("--grad-clip", o->grad_clip,
                  "Clip the global gradient norm to this, over every shard and rank (torch clip_grad_norm_, "
                  "Megatron-LM clip_grad); 0: no clipping")
      ->capture_default_str();
  add_timeout_option(*app, o->timeout, "one training step (warm-up included), or a wait for another rank inside it,");
  app->add_option("--dump", o->dump, "Write every step's loss and the final parameters (hex floats) to FILE")
      ->check(file_path());
  app->add_option("--init-from", o->init_from,
                  "Start from a Hugging Face GPT-2 checkpoint (model.safetensors; shapes from the file, heads from the "
                  "config.json beside it or --heads)");
  app->add_option("--save", o->save,
                  "Write the final weights as Hugging Face GPT-2 safetensors, config.json beside it");
  run = [=, &argv] {
    TrainCliOptions opts = *o;
    opts.data_seed = common->seed;
    opts.backend = backend_for_device(common->device, opts.backend, backend->count() > 0);
    const models::TrainRequest request = train_request(opts);  // every check before any allocation
    const bool model_file = opts.init_from.empty() && opts.model.find(".json") != std::string::npos;
    SessionFiles files;
    files.outputs = {{"--dump", opts.dump},
                     {"--save", opts.save},
                     {"--save", opts.save.empty() ? "" : models::config_json_path(opts.save)}};
    files.inputs = {{"--model", model_file ? opts.model : ""},
                    {"--data", opts.data},
                    {"--init-from", opts.init_from},
                    {"--init-from", opts.init_from.empty() ? "" : models::config_json_path(opts.init_from)}};
    CommonOptions session_options = *common;
    session_options.quiet = true;  // train's own tables replace the generic per-case rows
    Session session(session_options, argv, files);
    models::TrainRequest with_progress = request;
    if (request.layouts.size() > 1 && !common->quiet && session.writes()) {
      // A sweep says where it is after each layout: k of n, the layout's step time, elapsed and
      // an estimate from the mean time per layout so far (the first layout includes set-up).
      const auto start = std::chrono::steady_clock::now();
      with_progress.on_layout = [start](size_t k, size_t n, const Result& r) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const Metric* m = r.metrics.empty() ? nullptr : &r.metrics.front();
        const std::string figure = r.status != Status::pass ? std::string(status_name(r.status))
                                   : m && m->value          ? fmt::format("{:.2f} ms/step", *m->value * 1e3)
                                                            : std::string("-");
        fmt::print(
            "train: layout {} of {} {}: {} ({:.0f} s elapsed{})\n", k, n, r.params.value("layout", std::string("?")),
            figure, elapsed,
            k < n ? fmt::format(", about {:.0f} s left", elapsed / static_cast<double>(k) * static_cast<double>(n - k))
                  : "");
        std::fflush(stdout);
      };
    }
    std::vector<Result> results = models::run_training(with_progress);
    const std::string ledger = opts.explain ? add_step_ledgers(request, results) : std::string();
    if (!common->quiet && !results.empty()) {
      const models::GptConfig& c = request.base.model;
      const std::string recompute = models::name_in(models::recompute_names(), opts.recompute);
      // WAIVED rows (no GPU, a layout the model refuses) carry no figures and no peak.
      const auto ran =
          std::find_if(results.begin(), results.end(), [](const Result& r) { return r.extra.contains("peak_source"); });
      fmt::print(
          "{}",
          report::render_train_tables(
              results,
              fmt::format("train: {} (L {} C {} heads {} V {} T {}), global batch {} × micro-batch {}, "
                          "{} rank{}\n       recompute {}, precision {}{}, backend {}{}",
                          c.name, c.layers, c.hidden, c.heads, c.vocab, c.seq, models::global_batch(request),
                          request.base.micro_batch, request.ranks, request.ranks == 1 ? "" : "s",
                          opts.recompute_every > 1 ? fmt::format("{} every {} layers", recompute, opts.recompute_every)
                                                   : recompute,
                          models::precision_name(opts.precision),
                          opts.offload == models::Offload::none
                              ? ""
                              : ", offload " + std::string(models::offload_name(opts.offload)),
                          request.backend.name,
                          ran == results.end()
                              ? ""
                              : "\n       MFU peak " + report::train_peak_line(*ran, "\n                "))));
    }
    if (!common->quiet) fmt::print("{}", ledger);
    for (const Result& r : results) session.runner().add(r);
    if (opts.peer_torch) {
      // The second run of ours, for the comparison only: its files are the first run's already.
      models::TrainRequest again = request;
      again.dump.clear();
      again.save.clear();
      const std::vector<Result> ratios =
          train_torch_peer_results(request, results, [&again] { return models::run_training(again); });
      if (!common->quiet) fmt::print("{}", report::render_torch_ratios(ratios));
      for (const Result& r : ratios) session.runner().add(r);
    }
    return session.finish();
  };
}

}  // namespace gcb::bench
