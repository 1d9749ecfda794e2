// The `gcbench coll` command line: nccl-tests' short and long flags with the same meanings,
// plus --backend, --ranks, --mode and --timeout. Only world rank 0 writes files (bench/common/cli.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "bench/coll/coll.hpp"
#include "collectives/graph_capture.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "core/suggest.hpp"

namespace gcb::bench {

namespace {

// The names of a list flag; an empty name (`--op ''`, `-d float,`) is refused rather than read as
// "the default".
std::vector<std::string> split_list(const std::vector<std::string>& items, const char* flag) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    size_t start = 0;
    for (;;) {
      const size_t comma = item.find(',', start);
      const std::string tok = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (tok.empty()) throw UsageError(fmt::format("{} '{}': an empty name", flag, item));
      out.push_back(tok);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

// A non-negative integer and nothing else ("--test-corrupt 1:x" is refused, not a fault).
template <typename T>
bool whole_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out >= 0;
}

struct CollFlags {
  std::string minbytes = "32M", maxbytes = "32M", stepbytes = "1M";
  std::vector<std::string> op_tokens, redop_tokens, dtype_tokens;
  std::string mode = "pipelined";
  int average = 3;
  std::string corrupt;
};

std::vector<ReduceOp> parse_redops(const std::vector<std::string>& tokens) {
  std::vector<ReduceOp> out;
  for (const auto& t : tokens) {
    if (t == "all") {
      out = {ReduceOp::sum, ReduceOp::prod, ReduceOp::max, ReduceOp::min, ReduceOp::avg};
      continue;
    }
    const auto r = parse_reduce_op(t);
    if (!r) throw UsageError(fmt::format("-o {}: expected sum, prod, min, max, avg or all", t));
    if (std::find(out.begin(), out.end(), *r) == out.end()) out.push_back(*r);
  }
  return out;
}

void apply(const CollFlags& f, CollOptions& o) {
  o.min_bytes = parse_size(f.minbytes);
  o.max_bytes = parse_size(f.maxbytes);
  o.step_bytes = parse_size(f.stepbytes);
  // --op takes collective names (or "all" = every collective); a reduction name there means -o,
  // so that nccl-tests' `--op sum` keeps its meaning.
  std::vector<std::string> redops = split_list(f.redop_tokens, "-o");
  if (!f.op_tokens.empty()) {
    std::vector<CollOp> ops;
    for (const auto& t : split_list(f.op_tokens, "--op")) {
      if (t == "all") {
        ops = all_coll_ops();
      } else if (const auto op = parse_coll_op(t)) {
        if (std::find(ops.begin(), ops.end(), *op) == ops.end()) ops.push_back(*op);
      } else if (parse_reduce_op(t)) {
        redops.push_back(t);
      } else {
        throw UsageError(
            fmt::format("--op {}{}: expected a collective (all_reduce, all_gather, reduce_scatter, "
                        "broadcast, reduce, alltoall, sendrecv, gather, scatter, all) or a reduction "
                        "(sum, prod, min, max, avg)",
                        t, did_you_mean(t, coll_op_names())));
      }
    }
    if (!ops.empty()) o.ops = ops;
  }
  if (!redops.empty()) o.redops = parse_redops(redops);
  if (!f.dtype_tokens.empty()) {
    o.dtypes.clear();
    for (const auto& t : split_list(f.dtype_tokens, "-d")) {
      if (t == "all") {
        o.dtypes = {DType::i8, DType::i32, DType::f16, DType::f32, DType::f64, DType::bf16};
        continue;
      }
      const auto d = parse_dtype(t);
      if (!d)
        throw UsageError(fmt::format("-d {}: unknown datatype (float, double, half, bfloat16, int32, int8, all)", t));
      o.dtypes.push_back(*d);
    }
  }
  if (f.mode == "pipelined")
    o.mode = TimingMode::pipelined;
  else if (f.mode == "isolated")
    o.mode = TimingMode::isolated;
  else if (f.mode == "graph")
    o.mode = TimingMode::graph;
  else
    throw UsageError(fmt::format("--mode {}: expected pipelined, isolated or graph", f.mode));
  if (o.cudagraph > 0) o.mode = TimingMode::graph;
  if (f.average < 0 || f.average > 3) throw UsageError("-a/--average must be 0 (rank 0), 1 (avg), 2 (min) or 3 (max)");
  o.average = static_cast<RankCombine>(f.average);
  if (!f.corrupt.empty()) {
    const auto colon = f.corrupt.find(':');
    const std::string_view text = f.corrupt;
    if (colon == std::string::npos || !whole_number(text.substr(0, colon), o.corrupt_rank) ||
        !whole_number(text.substr(colon + 1), o.corrupt_index))
      throw UsageError(fmt::format("--test-corrupt {}: expected RANK:INDEX, two non-negative integers", f.corrupt));
  }
}

}  // namespace

void add_coll_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand("coll", "Collective bandwidth and latency (nccl-tests flags and columns)");
  auto common = std::make_shared<CommonOptions>();
  auto o = std::make_shared<CollOptions>();
  auto f = std::make_shared<CollFlags>();
  // Output, seed and device as every family; of the harness only what coll honours, with the
  // defaults it uses (no --cold or --profile-range: coll's cells time themselves, warm).
  add_common_options(*app, *common, true, false);
  HarnessOptions& h = common->harness;
  h.min_samples = h.max_samples = kMicrosecondFamilySamples;  // the fixed count unless --noise
  app->add_option("--op", f->op_tokens,
                  "Collectives, comma-separated: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, "
                  "sendrecv, gather, scatter, or all (a reduction name here acts as -o)")
      ->delimiter(',');
  app->add_option("-o", f->redop_tokens, "Reduction: sum, prod, min, max, avg or all (nccl-tests -o)")->delimiter(',');
  app->add_option("-d,--datatype", f->dtype_tokens,
                  "float, double, half, bfloat16, int32, int8 or all (nccl-tests -d; default float)")
      ->delimiter(',');
  app->add_option("-b,--minbytes", f->minbytes, "Smallest size (K/M/G suffixes, binary)")->capture_default_str();
  app->add_option("-e,--maxbytes", f->maxbytes, "Largest size")->capture_default_str();
  app->add_option("-i,--stepbytes", f->stepbytes, "Additive size step when -f is not given")->capture_default_str();
  app->add_option("-f,--stepfactor", o->step_factor, "Multiplicative size step (0 = use -i)")->capture_default_str();
  app->add_option("-n,--iters", o->iters,
                  "Iterations: ops per sample (pipelined/graph, nccl-tests -n); at least this many samples (isolated)")
      ->capture_default_str();
  app->add_option("-w,--warmup_iters,--warmup", o->warmup_iters,
                  "Warm-up iterations: untimed ops per size (nccl-tests -w)")
      ->capture_default_str();
  app->add_option("--min-samples", h.min_samples,
                  "Samples per size and placement at least (each of -n ops when pipelined)")
      ->capture_default_str();
  app->add_option("--max-samples", h.max_samples,
                  fmt::format("Samples per size and placement at most (with --noise and without this flag: {})",
                              HarnessOptions{}.max_samples))
      ->capture_default_str();
  app->add_option("--max-time", h.max_time, "Wall seconds of warm-up and sampling per size and placement (budget)")
      ->capture_default_str();
  app->add_option("--noise", h.noise,
                  "Off unless given: stop sampling a size once the relative stddev of its samples is at most this "
                  "(0.005 = 0.5%), between --min-samples and --max-samples");
  app->add_option("--min-time", h.min_time, "With --noise: seconds of measured time before it may stop")
      ->capture_default_str();
  app->add_option("-c,--check", o->check, "Correctness-check iterations per size; 0 = off (nccl-tests -c)")
      ->capture_default_str();
  app->add_option("-r,--root", o->root, "Root of broadcast/reduce/gather/scatter; -1 = every root")
      ->capture_default_str();
  app->add_option("-a,--average", f->average,
                  "Per-rank time combined by 0 rank 0, 1 avg (nccl-tests' default), 2 min, 3 max (ours)")
      ->capture_default_str();
  app->add_option("-z,--blocking", o->blocking, "1 = synchronize and barrier after every op (timed)")
      ->capture_default_str();
  app->add_option("-N,--run_cycles", o->run_cycles, "Repeat the whole sweep; 0 = forever")->capture_default_str();
  app->add_option("-G,--cudagraph", o->cudagraph, "Graph launches per sample (implies --mode graph; NCCL only)")
      ->capture_default_str();
  app->add_option("--mode", f->mode, "pipelined (nccl-tests), isolated (per-op, max over ranks) or graph")
      ->capture_default_str();
  add_backend_option(*app, o->backend);
  auto* ranks =
      app->add_option(
             "--ranks", o->ranks,
             "Rank threads of this process (default: threads as many as the CPUs it may use, 2 to 4; nccl one per GPU)")
          ->check(positive());
  // nccl-tests -g: GPUs per thread, here per process (gcbench runs one thread per rank, -t 1).
  auto* g = app->add_option("-g", o->ranks,
                            "GPUs (ranks) of this process, nccl-tests -g as --ranks; under mpirun/srun one per "
                            "process (-g 1)")
                ->check(positive())
                ->excludes(ranks);
  add_timeout_option(*app, o->timeout, "one collective or MPI call of a rank");
  app->add_flag("-v,--verbose", o->verbose,
                "Statistics table also shows samples, stop reason and wall seconds per size");
  app->add_option("--test-corrupt", f->corrupt, "Test hook: RANK:INDEX flips one checked output element")->group("");
  app->add_option("--test-fail-rank", o->fail_rank, "Test hook: this rank throws before its first timed op")->group("");
  run = [=, &argv] {
    CollOptions options = *o;
    apply(*f, options);
    options.backend = communicator_for_device(common->device, options.backend);
    options.seed = common->seed;
    HarnessOptions harness = microsecond_family_harness(*app, common->harness);
    // --noise turns the stopping rule on: up to the harness's own sample budget unless bounded.
    if (app->count("--noise") > 0 && app->count("--max-samples") == 0)
      harness.max_samples = std::max(HarnessOptions{}.max_samples, harness.min_samples);
    harness.warmup = options.warmup_iters;
    validate(options);
    validate(harness);
    // Refusals that need the world size, before any output exists (-r 5 on 2 ranks, nccl
    // without a GPU): found inside the run, they used to leave an empty --jsonl behind.
    const int world_size = checked_world_size(options.backend, options.ranks);
    // -g counts this process's ranks; where each process is one rank (a launcher, mpi, gloo), the
    // count would be ignored, so it must be 1, as nccl-tests -g 1 under mpirun.
    if (g->count() > 0 && options.ranks > 1 && (world_is_processes() || world_size != options.ranks))
      throw UsageError(
          fmt::format("-g {}: with this backend or launcher each process is one rank (nccl-tests -g 1); "
                      "start {} processes per host instead, or without a launcher a --backend whose ranks are threads",
                      options.ranks, options.ranks));
    if (options.root >= world_size)
      throw UsageError(fmt::format("-r/--root {} is outside the world of {} ranks", options.root, world_size));
    check_coll_host_memory(options, world_size);
    const std::vector<std::string> args(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
    CommonOptions session_options = *common;
    session_options.quiet = true;            // the coll table replaces the generic per-case rows
    Session session(session_options, argv);  // on ranks other than 0: measures into a runner nobody reads
    const int code = run_coll(options, harness, session.runner(), common->quiet, args);
    nlohmann::json versions = nlohmann::json::object();
    if (const std::string v = nccl_version_string(); !v.empty()) versions["nccl"] = v;
    return std::max(code, session.finish(versions));
  };
}

}  // namespace gcb::bench
