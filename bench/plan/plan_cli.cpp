// `gcbench plan`: flags → a models::planner::PlanRequest; the run (see plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "bench/common/cli.hpp"
#include "bench/plan/plan.hpp"
#include "topology/topology.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "kernels/mem/host_mem.hpp"
#include "models/model/config.hpp"
#include "models/model/train_option_names.hpp"
#include "models/run/training_run.hpp"

namespace gcb::bench {
namespace {

using namespace models::planner;
using models::Offload;
using models::Recompute;
using models::ZeroStage;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(',', start);
    std::string item = text.substr(start, at == std::string::npos ? std::string::npos : at - start);
    if (!item.empty()) out.push_back(item);
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// --layout's vN (the layout grammar is text: models/model/sweep.hpp).
int parse_int(const std::string& s, const char* flag) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(fmt::format("{}: '{}' is not a positive integer", flag, s));
  }
  return std::stoi(s);
}

// "none,selective,full" / "1,2,4,8": a list flag's default, for help.
template <typename E>
std::string names_of(const models::NameTable<E>& names, const std::vector<E>& values) {
  std::string out;
  for (const E v : values) out += (out.empty() ? "" : ",") + models::name_in(names, v);
  return out;
}
std::string list_text(const std::vector<int>& values) { return fmt::format("{}", fmt::join(values, ",")); }

// A list flag CLI11 converted: refused when it holds nothing (an empty value, --zero '').
template <typename T>
void non_empty(const std::vector<T>& list, const char* flag) {
  if (list.empty()) throw UsageError(fmt::format("{}: empty list", flag));
}

// --memory-limit, --host-memory: a size (core/size.hpp: 80G, 2T, bytes) to its bytes, refused
// with parse_size's message.
CLI::Validator size_bytes() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          text = std::to_string(parse_size(text));
          return {};
        } catch (const UsageError& e) {
          return e.what();
        }
      },
      "");
}

// --recompute-every: auto (0, SearchSpace's sentinel) or a block of K ≥ 1 layers.
CLI::Validator auto_or_layers() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "auto") {
          text = "0";
          return {};
        }
        if (!text.empty() && text.size() <= 6 && text.find_first_not_of("0123456789") == std::string::npos &&
            std::stoi(text) >= 1)
          return {};
        return text + ": expected auto or K ≥ 1 layers";
      },
      "{auto, K}");
}

// Every file the plan reads, so that no output (--json, --jsonl, --csv) may overwrite one.
SessionFiles plan_input_files(const PlanCliOptions& o) {
  SessionFiles files;
  if (o.model.find(".json") != std::string::npos) files.inputs.push_back({"--model", o.model});
  files.inputs.push_back({"--topo", o.topo});
  files.inputs.push_back({"--published", o.published});
  for (const std::string& c : o.calibration) files.inputs.push_back({"--calibration", c});
  return files;
}

models::GptConfig resolve_model(const PlanCliOptions& o) {
  const bool file = o.model.find(".json") != std::string::npos;
  const models::GptConfig base = file ? models::load_config_file(o.model) : models::named_config(o.model);
  return models::apply_overrides(base, o.overrides);
}

// The search space as CLI11 converted it, with what no one flag can check: no list empty, and
// blocks of layers only with full recomputation.
SearchSpace search_space(const PlanCliOptions& o) {
  const SearchSpace& s = o.space;
  non_empty(s.micro_batches, "--micro-batch");
  non_empty(s.recompute, "--recompute");
  non_empty(s.zero, "--zero");
  non_empty(s.schedules, "--schedule");
  non_empty(s.offload, "--offload");
  non_empty(s.sp, "--sp");
  non_empty(s.overlap, "--overlap");
  non_empty(s.virtual_stages, "--virtual-stages");
  if (s.recompute_every > 1 && std::find(s.recompute.begin(), s.recompute.end(), Recompute::full) == s.recompute.end())
    throw UsageError(fmt::format("--recompute-every {} recomputes blocks of layers: --recompute must include full",
                                 s.recompute_every));
  return s;
}

Cluster resolve_cluster(const PlanCliOptions& o, models::Precision precision) {
  const double limit = static_cast<double>(o.memory_limit);
  TopologyFacts facts;
  if (!o.topo.empty()) facts = topology_facts(topo::load_topology(o.topo));
  if (o.gpu.cpu) {
    if (o.nodes > 1) throw UsageError("--gpu cpu plans the rank threads of one host: --nodes must be 1");
    if (o.host_memory) {
      throw UsageError("--host-memory: on a cpu cluster the host memory is the device memory (--memory-limit)");
    }
    const int ranks = o.gpus > 0 ? o.gpus : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return cpu_cluster(ranks, limit);
  }
  if (!o.gpu.spec && facts.gpu_name.empty()) throw UsageError("--gpu \"\": --topo's topology names no GPU");
  const GpuSpec spec =
      o.gpu.spec ? *o.gpu.spec : find_gpu_spec(facts.gpu_name).value_or(gpu_spec_by_name(facts.gpu_name));
  GpuClusterArgs a;
  a.precision = precision;
  a.gpus_per_node = o.gpus_per_node > 0 ? o.gpus_per_node : facts.gpus_per_node > 0 ? facts.gpus_per_node : 8;
  if (o.gpus > 0 && o.nodes > 0 && o.gpus != o.nodes * a.gpus_per_node) {
    throw UsageError(fmt::format("--gpus {} ≠ --nodes {} × {} GPUs per node", o.gpus, o.nodes, a.gpus_per_node));
  }
  a.gpus = o.gpus > 0 ? o.gpus : o.nodes > 0 ? o.nodes * a.gpus_per_node : a.gpus_per_node;
  a.intra_gbps = o.intra_gbps > 0 ? o.intra_gbps : facts.nvlinks_per_gpu * spec.nvlink_link_gbps;
  a.inter_gbps = o.inter_gbps > 0 ? o.inter_gbps : facts.nic_gbps_per_gpu;
  a.memory_limit_bytes = limit;
  Cluster c = gpu_cluster(spec, a);
  if (o.host_memory) {
    c.host_memory_bytes = static_cast<double>(*o.host_memory);
    c.host_memory_source = "flag:--host-memory";
  }
  if (o.intra_gbps <= 0 && facts.nvlinks_per_gpu > 0)
    c.intra.source = fmt::format("topology {}: {} NVLinks per GPU", o.topo, facts.nvlinks_per_gpu);
  if (o.inter_gbps <= 0 && facts.nic_gbps_per_gpu > 0)
    c.inter.source = fmt::format("topology {}: NIC rate per GPU", o.topo);
  return c;
}

}  // namespace

models::NameTable<AttentionScores> attention_scores_names() {
  return {{"flash", AttentionScores::flash},
          {"materialized", AttentionScores::materialized},
          {"materialized-dropout", AttentionScores::materialized_dropout}};
}

AttentionCostModel attention_cost_model(AttentionScores a) {
  switch (a) {
    case AttentionScores::flash: return {true, false};
    case AttentionScores::materialized: return {false, false};
    case AttentionScores::materialized_dropout: return {false, true};
  }
  GCB_CHECK(false, "an AttentionScores value without a cost model");
  return {};
}

std::vector<Candidate> parse_plan_layouts(const std::string& text, int gpus, int micro_batch, Recompute recompute,
                                          int recompute_every) {
  std::vector<Candidate> out;
  for (const std::string& item : split_list(text)) {
    // The planner's one token beyond the --sweep grammar: vN, interleaved 1F1B with N chunks.
    std::string rest;
    int v = 1;
    size_t start = 0;
    for (;;) {
      const size_t at = item.find('-', start);
      const std::string tok = item.substr(start, at == std::string::npos ? std::string::npos : at - start);
      if (tok.size() > 1 && tok[0] == 'v' && tok.find_first_not_of("0123456789", 1) == std::string::npos) {
        v = parse_int(tok.substr(1), "--layout vN");
      } else {
        rest += (rest.empty() ? "" : "-") + tok;
      }
      if (at == std::string::npos) break;
      start = at + 1;
    }
    const std::vector<models::LayoutSpec> specs = models::parse_sweep(rest, gpus);
    Candidate c;
    c.layout = specs.front();
    c.micro_batch = micro_batch;
    c.recompute = recompute;
    c.recompute_every = recompute == Recompute::full ? recompute_every : 1;
    c.virtual_stages = v;
    out.push_back(c);
  }
  if (out.empty()) throw UsageError("--layout: no layout given");
  return out;
}

PlanRequest plan_request(const PlanCliOptions& o) {
  PlanRequest r;
  r.model = resolve_model(o);
  r.precision = o.precision.value_or(o.gpu.cpu ? models::Precision::fp32 : models::Precision::bf16);
  r.global_batch = o.global_batch;
  if (r.global_batch < 1) throw UsageError("--global-batch G (sequences per step) is required and must be ≥ 1");
  r.cluster = resolve_cluster(o, r.precision);
  CalibrationFilter filter;
  filter.cpu = r.cluster.is_cpu();
  filter.dtype = r.precision == models::Precision::bf16 ? "bf16" : "fp32";
  r.calibration = read_calibration(o.calibration, filter);
  if (o.efficiency <= 0 || o.efficiency > 1) throw UsageError("--compute-efficiency must be in (0, 1]");
  r.efficiency = o.efficiency;
  r.attention = attention_cost_model(o.attention);
  r.pp_scatter_gather = o.pp_scatter_gather;
  r.space = search_space(o);
  if (r.cluster.is_cpu() &&
      std::find(r.space.offload.begin(), r.space.offload.end(), Offload::none) == r.space.offload.end()) {
    throw UsageError("--offload: on a cpu cluster the host memory is the device memory, offload frees none");
  }
  if (!o.layout.empty()) {
    r.only = parse_plan_layouts(o.layout, r.cluster.gpus, r.space.micro_batches.front(), r.space.recompute.front(),
                                std::max(1, r.space.recompute_every));
    for (Candidate& c : r.only) c.offload = r.space.offload.front();  // the first of --offload
  }
  if (r.cluster.is_cpu()) {
    r.cluster.threads_per_rank = kernels::host_threads();
    if (o.host_probe) {
      // The ranks share this host's cores: measure what each sees when all run at once.
      const bool triad = r.calibration.triad.empty();
      const bool all_reduce = r.calibration.coll.empty() && r.cluster.intra.busbw_bytes_per_s <= 0;
      const HostProbe p = probe_shared_host(r.model, r.cluster.gpus, triad, all_reduce);
      r.shared = p.rates;
      r.shared.source = fmt::format(
          "{}; GEMM {} {:.3g} ms alone, {:.3g} ms with every rank at once (the slowest rank's; ranks {:.0f} % "
          "apart): contention ×{:.2f} ({:.1f} s)",
          p.rates.source, p.gemm_shape, 1e3 * p.gemm_alone_s, 1e3 * p.gemm_together_s,
          100 * p.gemm_together_skew.median_skew, p.rates.contention, p.seconds);
      // Ranks sharing cores cannot compute faster than one alone: below 1, the host's other work
      // reached the two measurements unequally. Kept as measured, and said.
      if (p.rates.contention < 1.0)
        r.shared.source += " — below 1: the host's other load distorted the probe (re-run on a quiet host)";
      if (p.all_reduce_busbw > 0) {
        // No coll results: the rank threads' own all_reduce costs every collective of the plan.
        r.cluster.intra.base_latency_s = p.all_reduce_alpha_s;
        r.cluster.intra.step_latency_s = 0;
        r.cluster.intra.busbw_bytes_per_s = p.all_reduce_busbw;
        r.cluster.intra.source = fmt::format(
            "host probe: threads all_reduce of {} ranks at once, 4 B {:.3g} µs, {} {:.3g} ms (no coll results)",
            r.cluster.gpus, 1e6 * p.all_reduce_alpha_s, format_bytes(static_cast<double>(p.all_reduce_bytes)),
            1e3 * p.all_reduce_large_s);
      }
      if (triad && p.bandwidth > 0) {
        r.cluster.memory_bandwidth = p.bandwidth;
        r.cluster.memory_bandwidth_source =
            fmt::format("host probe: STREAM triad, 3 × 32 MiB per rank, {} at once", r.cluster.gpus);
      }
    }
  }
  if (r.cluster.is_cpu() && r.calibration.gemm.empty()) {
    // No gemm results: the host's sgemm peak as `gcbench train` measures it, × the efficiency.
    r.cluster.peak_flops = models::measure_sgemm_peak(models::kHostPeakSize).best;
    r.cluster.peak_source =
        fmt::format("measured: sgemm {}³ here, fastest repetition (no gemm results)", models::kHostPeakSize);
  }
  return r;
}

void add_plan_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand(
      "plan", "Predict memory and step time of every parallel layout of a model on a cluster; rank them");
  auto common = std::make_shared<CommonOptions>();
  auto o = std::make_shared<PlanCliOptions>();
  // --seed seeds the synthetic tokens of the --verify runs, with train's default.
  common->seed = models::TrainOptions{}.data_seed;
  add_common_options(*app, *common, false, false);
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
  app->add_option_function<std::string>(
         "--gpu",
         [o](const std::string& name) {
           o->gpu = {name == "cpu", std::nullopt};
           if (name == "cpu" || name.empty()) return;
           try {
             o->gpu.spec = gpu_spec_by_name(name);  // unknown or ambiguous: named with the closest
           } catch (const UsageError& e) {
             throw CLI::ValidationError("--gpu", e.what());
           }
         },
         "Spec-table SKU (h100-sxm, a100-sxm4-80gb, h200, …) or cpu (rank threads of this host)")
      ->type_name("SKU|cpu")
      ->default_str("cpu");
  app->add_option("--gpus", o->gpus, "Devices in all (default: --nodes × --gpus-per-node; cpu: this host's cores)");
  app->add_option("--gpus-per-node", o->gpus_per_node, "Devices per node (default: the topology's, else 8)");
  app->add_option("--nodes", o->nodes, "Nodes (with --gpus-per-node, instead of --gpus)");
  app->add_option("--intra-gbps", o->intra_gbps,
                  "Intra-node bus bandwidth per GPU, GB/s (default: NVLink of the spec or topology)");
  app->add_option("--inter-gbps", o->inter_gbps,
                  "Inter-node NIC bandwidth per GPU, GB/s (default: the SKU's reference node or topology)");
  app->add_option(
      "--topo", o->topo,
      "A node's topology (gcbench topo JSON, NCCL XML or nvidia-smi topo -m): GPUs per node, NVLinks, NICs");
  app->add_option(
         "--calibration", o->calibration,
         "Result files (or folders of them) of gemm, attn, coll, mem, p2p or scan runs on the cluster (repeatable; "
         "comma-separated)")
      ->delimiter(',');
  app->add_option("--compute-efficiency", o->efficiency,
                  "Fraction of peak an uncalibrated GEMM / attention call reaches")
      ->check(CLI::Validator(
          [](std::string& text) {
            const double v = std::strtod(text.c_str(), nullptr);
            return v > 0 && v <= 1.0 ? std::string() : "'" + text + "' is not a fraction in (0, 1]";
          },
          "(0, 1]"))
      ->capture_default_str();
  app->add_option("--memory-limit", o->memory_limit,
                  "Bytes per device (e.g. 80G; default: the spec's capacity, cpu: host memory / ranks)")
      ->transform(size_bytes())
      ->type_name("SIZE");
  app->add_option("--host-memory", o->host_memory,
                  "Host memory per node that offloaded optimizer states and activations may take (e.g. 2T; GPU "
                  "clusters): a candidate whose ranks need more does not fit; default: not checked")
      ->transform(size_bytes())
      ->type_name("SIZE");
  app->add_option_function<models::Precision>(
         "--precision", [o](const models::Precision& p) { o->precision = p; },
         "bf16 (default on GPUs) or fp32 (default on cpu)")
      ->transform(enum_names(models::precision_names()));
  app->add_option("--global-batch", o->global_batch, "Sequences per step (required)");
  app->add_option("--micro-batch", o->space.micro_batches, "Micro-batch sizes to consider (with --layout: the first)")
      ->delimiter(',')
      ->check(positive())
      ->default_str(list_text(o->space.micro_batches));
  app->add_option("--recompute", o->space.recompute,
                  "Recomputation: none, selective, full (list; with --layout: the first)")
      ->delimiter(',')
      ->transform(enum_names(models::recompute_names()))
      ->default_str(names_of(models::recompute_names(), o->space.recompute));
  app->add_option("--recompute-every", o->space.recompute_every,
                  "Full recomputation in blocks of K layers (Chen et al. 2016): K for every full candidate, or auto: "
                  "K = 1, plus the smallest K that fits where K = 1 does not")
      ->transform(auto_or_layers())
      ->default_str("auto");
  app->add_option("--zero", o->space.zero, "ZeRO stages to consider")
      ->delimiter(',')
      ->transform(enum_names(models::zero_names()))
      ->default_str(names_of(models::zero_names(), o->space.zero));
  app->add_option("--offload", o->space.offload,
                  "CPU offload to consider (GPU clusters only): none, optimizer (ZeRO-Offload: master weights and "
                  "Adam moments on the host, AdamW at the host's memory rate; rows end in -offload), activations (the "
                  "saved activations swapped to the host and back; -swap), optimizer+activations (-offload-swap); "
                  "copies at the host link's rate. An offloaded row is shown only where it fits and no row of the "
                  "same layout with less offload fits as fast; with --layout: the first")
      ->delimiter(',')
      ->transform(enum_names(models::offload_names()))
      ->default_str(names_of(models::offload_names(), o->space.offload));
  app->add_option("--schedule", o->space.schedules, "Pipeline schedules to consider: 1f1b, gpipe")
      ->delimiter(',')
      ->transform(enum_names(models::pipe_schedule_names()))
      ->default_str(names_of(models::pipe_schedule_names(), o->space.schedules));
  app->add_option("--sp", o->space.sp, "Sequence parallelism: off, on (list)")
      ->delimiter(',')
      ->transform(enum_names(models::on_off_names()))
      ->default_str(names_of(models::on_off_names(), o->space.sp));
  app->add_option("--overlap", o->space.overlap, "dp reductions overlapped with backward: off, on (list)")
      ->delimiter(',')
      ->transform(enum_names(models::on_off_names()))
      ->default_str(names_of(models::on_off_names(), o->space.overlap));
  app->add_option("--virtual-stages", o->space.virtual_stages,
                  "Interleaved 1F1B model chunks per device to consider (1 = none)")
      ->delimiter(',')
      ->check(positive())
      ->default_str(list_text(o->space.virtual_stages));
  app->add_flag("--allow-tp-across-nodes", o->space.tp_across_nodes, "Consider tp groups larger than a node");
  app->add_option("--attention", o->attention,
                  "flash | materialized | materialized-dropout (memory and traffic of the scores)")
      ->transform(enum_names(attention_scores_names()))
      ->default_str(models::name_in(attention_scores_names(), o->attention));
  app->add_flag("--pp-scatter-gather", o->pp_scatter_gather,
                "Pipeline messages split over the tp ranks (Megatron-LM, Narayanan et al. §4.1)");
  app->add_option("--layout", o->layout,
                  "Predict only these layouts (the --sweep grammar + vN), e.g. dp1-tp8-sp-pp8-1f1b");
  app->add_option("--top", o->top, "Layouts shown and written")->capture_default_str();
  app->add_option("--rejected", o->rejected, "Out-of-memory layouts shown (closest first)")->capture_default_str();
  app->add_option("--verify", o->verify, "Run the top N layouts this machine can run through the training library")
      ->capture_default_str();
  app->add_option("--verify-repeats", o->verify_repeats, "Rounds of --verify (interleaved; the median is compared)")
      ->capture_default_str();
  app->add_option("--verify-tolerance", o->verify_tolerance,
                  "--verify fails a layout whose step time is off by more than this fraction (0 = report only)")
      ->capture_default_str();
  app->add_option("--steps", o->steps, "Timed steps per --verify run")->capture_default_str();
  app->add_option("--warmup-steps", o->warmup, "Untimed training steps per --verify run")->capture_default_str();
  // The old spelling, hidden: --warmup is every other family's count of untimed launches
  // (docs/common-flags.md), so plan's count of steps has train's name.
  app->add_option_function<int>(
         "--warmup",
         [o](const int& n) {
           fmt::print(stderr, "plan: --warmup is deprecated, use --warmup-steps (untimed training steps)\n");
           o->warmup = n;
         },
         "Deprecated spelling of --warmup-steps")
      ->group("");
  app->add_option("--published", o->published,
                  "Check a table of published runs (CSV, e.g. tests/fixtures/planner/narayanan2021-table1.csv)");
  app->add_flag("--shapes", o->shapes, "Print the GEMM and attention shapes of the shown layouts (what to calibrate)");
  app->add_flag(
         "--host-probe,!--no-host-probe", o->host_probe,
         "--gpu cpu: measure each element-wise op's in-cache rate, GEMM contention, (without mem results) the triad "
         "bandwidth and (without coll results) the rank threads' all_reduce with every rank running at once, the "
         "slowest rank's time (2–4 s)")
      ->capture_default_str();
  run = [=, &argv] {
    const PlanCliOptions& opts = *o;
    // plan's own tables (the ranking, the published check, the verify rows) are its view: the
    // generic per-case rows would print the same results a second and third time.
    CommonOptions session_options = *common;
    session_options.quiet = true;
    if (!opts.published.empty()) {
      // The published tables are of GPU clusters: --gpu cpu (the default) checks them on their A100s.
      const GpuSpec gpu = opts.gpu.spec ? *opts.gpu.spec : gpu_spec_by_name("a100-sxm4-80gb");
      const std::vector<PublishedCheck> checks =
          check_published(read_published_runs(opts.published), gpu, opts.gpus_per_node > 0 ? opts.gpus_per_node : 8);
      Session session(session_options, argv, plan_input_files(opts));
      if (!common->quiet) print_published(checks, gpu.sku);
      for (const PublishedCheck& c : checks) {
        Result r;
        r.key = "plan/published/" + c.run.model;
        r.params = {{"model", c.run.model},
                    {"gpus", c.run.gpus},
                    {"tp", c.run.tp},
                    {"pp", c.run.pp},
                    {"dp", c.run.dp},
                    {"micro_batch", c.run.micro_batch},
                    {"global_batch", c.run.global_batch},
                    {"virtual_stages", c.run.virtual_stages},
                    {"source", opts.published}};
        r.stop_reason = "predicted";
        r.metrics = {{"error", 100 * c.error, "%", false, std::nullopt, ""},
                     {"step_time_published", c.iteration_time, "s", false, std::nullopt, ""},
                     {"step_time_predicted", c.predicted_time, "s", false, std::nullopt, ""},
                     {"hfu", c.hfu, "%", true, 100.0, "paper eq. (3)"},
                     {"mfu", c.mfu, "%", true, 100.0, "paper eq. (3) without recomputation"},
                     {"efficiency_fitted", c.fitted_efficiency, "", true, std::nullopt, ""},
                     {"efficiency_leave_one_out", c.loo_efficiency, "", true, std::nullopt, ""}};
        session.runner().add(r);
      }
      return session.finish();
    }
    const PlanRequest req = plan_request(opts);
    if (opts.verify > 0 && !req.cluster.is_cpu()) {
      throw UsageError(fmt::format(
          "--verify runs layouts on this machine's CPU: plan with --gpu cpu ({} cannot run here)", req.cluster.device));
    }
    Session session(session_options, argv, plan_input_files(opts));
    const PlanModel pm = plan_model(req);
    const PlanOutcome out = make_plan(req);
    if (!common->quiet) print_plan(req, pm, out, opts.top, opts.rejected);
    std::vector<Prediction> shown(out.fits.begin(),
                                  out.fits.begin() + std::min<ptrdiff_t>(opts.top, std::ssize(out.fits)));
    if (opts.shapes) print_shapes(pm, !req.only.empty() ? (out.fits.empty() ? out.oom : out.fits) : shown);
    int rank = 0;
    for (const Prediction& p : shown) session.runner().add(prediction_result(p, pm, ++rank));
    // The closest misses, WAIVED with how far over the limit they are.
    for (size_t i = 0; i < out.oom.size() && static_cast<int>(i) < opts.rejected; ++i) {
      session.runner().add(prediction_result(out.oom[i], pm, 0));
    }
    if (opts.verify > 0) {
      for (Result& r : verify_plan(pm, out.fits, opts.verify, opts.verify_repeats, opts.steps, opts.warmup,
                                   opts.verify_tolerance, common->seed))
        session.runner().add(std::move(r));
    }
    const int code = session.finish();
    if (!out.fits.empty() || code != kExitOk) return code;
    // Nothing to train with: a distinct exit code, and the last line says why.
    long invalid = 0;
    for (const Rejection& r : out.invalid) invalid += r.variants;
    const auto host_only = std::count_if(out.oom.begin(), out.oom.end(), [](const auto& p) { return !p.host_fits(); });
    fmt::print(
        "plan: no layout fits: {} of {} predicted candidates need more than {} per GPU{}, {} combinations cannot "
        "run (exit {})\n",
        out.oom.size() - static_cast<size_t>(host_only), out.candidates, format_bytes(pm.cluster.memory_bytes),
        host_only > 0 ? fmt::format(", {} more host memory than {} per rank", host_only,
                                    format_bytes(pm.cluster.host_memory_bytes / pm.cluster.gpus_per_node))
                      : "",
        invalid, kExitNoLayoutFits);
    return kExitNoLayoutFits;
  };
}

}  // namespace gcb::bench
