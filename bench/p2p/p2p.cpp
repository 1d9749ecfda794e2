// `gcbench p2p`: options, the WAIVED stand-ins, the rank-mode World, the quick-suite entry and the
// command line. The measurements live in p2p_gpu.cpp (device pairs, host aggregate) and
// p2p_rank.cpp (rank pairs); the matrices in p2p_matrix.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "bench/common/rank_threads.hpp"
#include "collectives/rank_world.hpp"
#include "bench/p2p/p2p_internal.hpp"
#include "bench/common/waived_case.hpp"
#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/host_memory.hpp"
#include "core/size.hpp"

namespace gcb::bench {

namespace {

const std::vector<std::string> kModes = {"device", "rank", "host"};

std::vector<std::string> expand_modes(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const auto& item : tokens) {
    std::stringstream ss(item);
    std::string t;
    while (std::getline(ss, t, ',')) {
      if (t.empty()) continue;
      if (t == "all") {
        for (const auto& m : kModes)
          if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
      } else if (std::find(out.begin(), out.end(), t) == out.end()) {
        out.push_back(t);
      }
    }
  }
  return out;
}

// The p2p warnings of results that have no matrix to carry them (the host aggregate).
std::string unpaired_warnings(const std::vector<Result>& results) {
  std::string out;
  for (const auto& r : results)
    if (r.family() == "p2p" && !r.params.contains("src") && r.extra.contains("warning"))
      out += fmt::format("warning {} {}: {}\n", r.key, r.params.dump(), r.extra.at("warning").get<std::string>());
  return out;
}

}  // namespace

bool has_mode(const P2pOptions& o, const std::string& mode) {
  return std::find(o.modes.begin(), o.modes.end(), mode) != o.modes.end();
}

void validate(const P2pOptions& o) {
  if (o.modes.empty()) throw UsageError("--mode: give at least one of device, rank, host, all");
  for (const auto& m : o.modes)
    if (std::find(kModes.begin(), kModes.end(), m) == kModes.end())
      throw UsageError(fmt::format("--mode {}: expected device, rank, host or all", m));
  if (o.size == 0) throw UsageError("--size must be at least 1 byte");
  if (o.size > (uint64_t{1} << 31) - 1) throw UsageError("--size must be below 2 GiB (one message of int8 elements)");
  if (o.latency_size == 0) throw UsageError("--latency-size must be at least 1 byte");
  if (o.latency_size > o.size) throw UsageError("--latency-size must not exceed --size");
  if (o.iters < 1) throw UsageError("--iters must be at least 1");
  if (!o.backend.empty() && !communicator_backend_known(o.backend))
    throw UsageError(fmt::format("--backend {}: expected one of {}", o.backend, communicator_backend_names()));
  if (o.ranks < 0) throw UsageError("--ranks must be ≥ 0");
  if (!(o.timeout > 0)) throw UsageError("--timeout must be positive");
  // No flag sets the rank measures: the defaults (p2p.hpp) or scan's pairs stage (stage_pairs.cpp) choose them.
  for (const auto& m : o.rank_measures)
    GCB_CHECK(m == "bandwidth" || m == "bidir_bandwidth" || m == "latency",
              fmt::format("rank measure {}: expected bandwidth, bidir_bandwidth or latency", m));
}

CaseList waived_p2p_device_cases(const P2pOptions& o, const std::string& reason) {
  CaseList cases;
  auto add = [&](const char* key, nlohmann::json p) {
    p["scope"] = "device";
    cases.push_back(std::make_unique<WaivedCase>(key, std::move(p), reason));
  };
  for (const char* key : {"p2p/bandwidth", "p2p/bidir_bandwidth"})
    for (const char* engine : {"ce", "sm"})
      for (const char* peer : {"on", "off"}) add(key, {{"engine", engine}, {"peer_access", peer}, {"bytes", o.size}});
  add("p2p/latency", {{"engine", "sm"}, {"peer_access", "on"}, {"method", "flag ping-pong"}, {"round_trips", o.iters}});
  for (const char* peer : {"on", "off"})
    add("p2p/copy_call_latency", {{"engine", "ce"}, {"peer_access", peer}, {"bytes", kCopyCallBytes}});
  return cases;
}

CaseList waived_p2p_host_cases(const P2pOptions& o, const std::string& reason) {
  CaseList cases;
  for (const char* dir : {"all_to_host", "host_to_all"})
    cases.push_back(std::make_unique<WaivedCase>(
        "p2p/host_aggregate",
        nlohmann::json{{"direction", dir}, {"engine", "ce"}, {"scope", "host"}, {"bytes", o.size}}, reason));
  return cases;
}

void check_p2p_rank_memory(const P2pOptions& o, int world_size) {
  const std::string backend = o.backend.empty() ? default_coll_backend() : o.backend;
  if (communicator_backend(backend).memory == MemorySpace::device) return;  // the GPU path checks device memory
  const LauncherInfo launcher = detect_launcher();
  const int here = !launcher.launched ? world_size : std::max(launcher.local_size, 1);
  // Per rank (p2p_rank.cpp): the send and receive buffers and the pattern written and read back.
  check_host_memory(
      4.0 * static_cast<double>(o.size) * here,
      fmt::format("p2p --size {} on {} rank(s) of this host", format_bytes(static_cast<double>(o.size)), here));
}

int run_p2p_ranks(const P2pOptions& o, const HarnessOptions& harness, Runner& runner, uint64_t seed,
                  const std::vector<std::string>& args) {
  validate(o);
  validate(harness);
  return run_checked_world(o.backend, o.ranks, o.timeout, args, [&](RankContext& ctx) {
    return run_p2p_ranks_on_rank(o, harness, ctx, ctx.rank == 0 ? &runner : nullptr, seed);
  });
}

namespace {

// The GPUs a selection names, with the reason when none.
std::pair<std::vector<int>, std::string> selected_gpus(const DeviceSelection& sel) {
  if (!sel.gpu_requested) return {{}, "GPUs were not selected (--device cpu)"};
  return {sel.gpus, sel.gpus.empty() ? sel.gpu_missing : std::string()};
}

std::string device_waive_reason(size_t found, const std::string& why) {
  return fmt::format("needs two GPUs ({} found{})", found, why.empty() ? "" : ": " + why);
}

// Device pairs and the host aggregate into `runner` (this process's GPUs only).
void run_local(const P2pOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner) {
  const auto [gpus, why] = selected_gpus(sel);
  CaseList cases;
  if (has_mode(o, "device")) {
    const std::string reason = gpus.size() < 2 ? device_waive_reason(gpus.size(), why) : std::string();
    for (auto& c : p2p_device_cases(o, gpus, reason, seed)) cases.push_back(std::move(c));
  }
  if (has_mode(o, "host"))
    for (auto& c : p2p_host_cases(o, gpus, why)) cases.push_back(std::move(c));
  runner.run_all(cases);
}

}  // namespace

P2pOptions quick_p2p_options() {
  P2pOptions o;
  o.size = uint64_t{64} << 20;
  o.iters = 1000;
  return o;
}

int run_p2p_quick(const DeviceSelection& sel, const HarnessOptions& rank_harness, Runner& runner, uint64_t seed) {
  P2pOptions o = quick_p2p_options();
  o.modes = {"device", "host"};
  run_local(o, sel, seed, runner);
  P2pOptions r = quick_p2p_options();
  r.modes = {"rank"};
  r.size = uint64_t{1} << 20;
  if (!communicator_backend(default_coll_backend()).spans_processes) {
    r.ranks = 2;  // 2 ordered pairs × 3 measures keep it quick
    if (!rank_threads_fit(runner, "p2p/rank_pairs", r.ranks)) return kExitOk;
  }
  return run_p2p_ranks(r, rank_harness, runner, seed, {"run", "--suite", "quick"});
}

void add_p2p_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand("p2p", "Point-to-point bandwidth and latency matrices (GPU pairs, rank pairs, host)");
  auto common = std::make_shared<CommonOptions>();
  auto o = std::make_shared<P2pOptions>();
  auto mode_tokens = std::make_shared<std::vector<std::string>>();
  auto size = std::make_shared<std::string>("256M");
  auto latency_size = std::make_shared<std::string>("8");
  add_common_options(*app, *common, true, true);
  app->add_option("--mode", *mode_tokens, "device, rank, host or all (comma-separated; default all)")->delimiter(',');
  app->add_option("--size", *size, "Bytes per copy / message for bandwidth (K/M/G suffixes)")->capture_default_str();
  app->add_option("--latency-size", *latency_size, "Bytes per rank ping-pong message")->capture_default_str();
  app->add_option("--iters", o->iters, "Round trips per launch of the GPU flag ping-pong")->capture_default_str();
  add_backend_option(*app, o->backend);  // rank mode
  app->add_option(
         "--ranks", o->ranks,
         "Rank threads for the threads backend (default: the CPUs this process may use, 2 to 4; nccl: one per GPU)")
      ->check(positive());
  add_timeout_option(*app, o->timeout, "one send, receive or MPI call of a rank");
  run = [=, &argv] {
    P2pOptions options = *o;
    if (!mode_tokens->empty()) options.modes = expand_modes(*mode_tokens);
    options.size = parse_size(*size);
    options.latency_size = parse_size(*latency_size);
    validate(options);
    validate(common->harness);
    if (has_mode(options, "rank")) check_p2p_rank_memory(options, checked_world_size(options.backend, options.ranks));
    // Rank pairs are microsecond-scale messages; device pairs and the host aggregate keep the
    // common stopping rule.
    const HarnessOptions rank_harness = microsecond_family_harness(*app, common->harness);
    const DeviceSelection sel = select_devices(common->device);
    const std::vector<std::string> args(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
    // p2p's own view replaces the generic rows and table: each result shows once (it once showed
    // three times: a row as it ended, in its matrix, in the summary table).
    CommonOptions session_options = *common;
    session_options.quiet = true;
    Session session(session_options, argv);  // on ranks other than 0: measures into a runner nobody reads
    int code = kExitOk;
    if (has_mode(options, "rank")) code = run_p2p_ranks(options, rank_harness, session.runner(), common->seed, args);
    // Only the writing process (world rank 0) measures this process's own GPUs and prints.
    if (!session.writes()) return code;
    run_local(options, sel, common->seed, session.runner());
    if (!common->quiet) {
      fmt::print("{}", render_p2p_view(session.runner().results()));
      fmt::print("{}", unpaired_warnings(session.runner().results()));
    }
    return std::max(code, session.finish());
  };
}

}  // namespace gcb::bench
