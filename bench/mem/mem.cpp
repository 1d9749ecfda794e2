// `gcbench mem`: options, validation, the derived results (α–β fits, peer ratios) and the
// subcommand's registration. The cases themselves live in mem_host.cpp and mem_gpu.cpp.
#include "bench/mem/mem.hpp"

#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <thread>

#include "bench/common/waived_case.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/fit.hpp"
#include "core/gpu.hpp"
#include "core/host_memory.hpp"
#include "core/size.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::bench {

namespace {

const Result* find(const std::vector<Result>& rs, std::string_view key, const nlohmann::json& must_match) {
  for (const auto& r : rs) {
    if (r.key != key || r.status != Status::pass) continue;
    bool ok = true;
    for (auto it = must_match.begin(); it != must_match.end() && ok; ++it)
      ok = r.params.contains(it.key()) && r.params.at(it.key()) == it.value();
    if (ok) return &r;
  }
  return nullptr;
}

std::optional<double> headline(const Result* r) {
  if (!r || r->metrics.empty()) return std::nullopt;
  return r->metrics.front().value;
}

Result ratio_result(std::string key, nlohmann::json params, std::optional<double> ours, std::optional<double> peer,
                    const std::string& what) {
  Result r;
  r.key = std::move(key);
  r.params = std::move(params);
  if (!ours || !peer || *peer <= 0) {
    r.status = Status::waived;
    r.reason = "one side of the comparison did not pass";
    return r;
  }
  r.metrics.push_back(Metric{"ratio", *ours / *peer, "x", true, {}, {}});
  r.extra = {{"compares", what}, {"ours_gbps", *ours}, {"peer_gbps", *peer}};
  return r;
}

// One α–β fit per copy configuration (all params but size), over its size sweep.
std::vector<Result> copy_fits(const std::vector<Result>& rs) {
  std::map<std::string, std::vector<const Result*>> groups;
  for (const auto& r : rs) {
    if (r.key.rfind("mem/copy/", 0) != 0 || r.status != Status::pass || !r.stats) continue;
    nlohmann::json p = r.params;
    p.erase("bytes");
    groups[r.key + "|" + p.dump()].push_back(&r);
  }
  std::vector<Result> fits;
  for (const auto& [id, members] : groups) {
    if (members.size() < 3) continue;
    std::vector<double> n, t;
    for (const Result* m : members) {
      n.push_back(m->params.at("bytes").get<double>());
      t.push_back(m->stats->median);
    }
    const AlphaBetaFit f = fit_alpha_beta(n, t);
    Result r;
    r.key = members.front()->key + "/fit";
    r.params = members.front()->params;
    r.params.erase("bytes");
    if (!f.ok) {
      r.status = Status::waived;
      r.reason = "α–β fit failed (sizes or times degenerate)";
    } else {
      r.metrics = {Metric{"beta", f.beta_bytes_per_s / 1e9, "GB/s", true, {}, {}},
                   Metric{"alpha", f.alpha_s * 1e6, "us", false, {}, {}},
                   Metric{"n_half", f.n_half_bytes, "B", false, {}, {}}};
      r.extra = {{"model", "t(n) = alpha + n / beta (median times)"},
                 {"points", f.points},
                 {"max_relative_residual", f.max_rel_residual},
                 {"sizes", n}};
    }
    fits.push_back(std::move(r));
  }
  return fits;
}

}  // namespace

std::vector<kernels::StreamOp> every_stream_op() {
  std::vector<kernels::StreamOp> ops;
  for (const kernels::StreamOpInfo& o : kernels::stream_ops()) ops.push_back(o.op);
  return ops;
}

const std::vector<DType>& mem_dtypes() {
  static const std::vector<DType> types = {DType::f32, DType::f64, DType::bf16};
  return types;
}

int max_host_threads() {
  // Far past oversubscription that measures anything; libgomp crashes when it cannot create
  // the threads (--threads 100000).
  return 8 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void validate(const MemOptions& o) {
  for (const auto& g : o.groups)
    if (g != "stream" && g != "copy" && g != "latency")
      throw UsageError(fmt::format("unknown --group '{}' (expected stream, copy, latency)", g));
  for (DType t : o.dtypes)
    if (std::find(mem_dtypes().begin(), mem_dtypes().end(), t) == mem_dtypes().end())
      throw UsageError(
          fmt::format("unsupported --dtype '{}' for mem (expected {})", dtype_name(t), dtype_list(mem_dtypes())));
  for (int v : o.vector_bytes)
    if (v != 4 && v != 8 && v != 16) throw UsageError(fmt::format("--vector-bytes {} is not 4, 8 or 16", v));
  if (o.threads < 0 || o.threads > max_host_threads())
    throw UsageError(fmt::format("--threads must be between 1 and {} (8 per logical core)", max_host_threads()));
  if (o.peer_rounds < 1 || o.peer_rounds > 20) throw UsageError("--peer-rounds must be in 1 … 20");
  if (o.size != 0 && o.size < 4096) throw UsageError("--size must be at least 4 KiB per array");
  if (o.copy_min == 0 || o.copy_min > o.copy_max) throw UsageError("--copy-min must be > 0 and ≤ --copy-max");
  if (o.copy_factor < 2) throw UsageError("--copy-factor must be ≥ 2");
  if (o.latency_min < 4096) throw UsageError("--latency-min must be at least 4 KiB");
  if (o.latency_max != 0 && o.latency_max < o.latency_min) throw UsageError("--latency-max is below --latency-min");
}

CaseList waived_gpu_mem_cases(const MemOptions& o, const std::string& reason) {
  CaseList cases;
  const auto has = [&](const char* g) { return std::find(o.groups.begin(), o.groups.end(), g) != o.groups.end(); };
  const nlohmann::json gpu = {{"device", "gpu"}};
  if (has("stream")) cases.push_back(std::make_unique<WaivedCase>("mem/hbm/stream", gpu, reason));
  if (has("copy")) cases.push_back(std::make_unique<WaivedCase>("mem/copy", gpu, reason));
  if (has("latency")) cases.push_back(std::make_unique<WaivedCase>("mem/hbm/latency", gpu, reason));
  return cases;
}

std::vector<Result> mem_derived_results(const std::vector<Result>& rs) {
  std::vector<Result> derived = copy_fits(rs);
  // Host triad vs the classic STREAM loop (same size, threads, compiler flags, one run), per
  // interleaved round ("round" param) when the rows have one: the median of the round ratios.
  if (const Result* classic = find(rs, "mem/host/classic_stream_triad", nlohmann::json::object())) {
    nlohmann::json same = {{"dtype", "fp64"},
                           {"array_bytes", classic->params.at("array_bytes")},
                           {"threads", classic->params.at("threads")}};
    const char* what = "gcbench host triad / classic STREAM triad (max bandwidth)";
    if (!classic->params.contains("round")) {
      derived.push_back(ratio_result("mem/host/triad_vs_classic_stream", same,
                                     headline(find(rs, "mem/host/triad", same)), headline(classic), what));
    } else {
      std::vector<double> ratios, ours, peer;
      for (const auto& r : rs) {
        if (r.key != "mem/host/classic_stream_triad" || !r.params.contains("round")) continue;
        nlohmann::json pair = same;
        pair["round"] = r.params.at("round");
        const auto o = headline(find(rs, "mem/host/triad", pair)), c = headline(find(rs, r.key, pair));
        if (!o || !c || *c <= 0) continue;
        ratios.push_back(*o / *c);
        ours.push_back(*o);
        peer.push_back(*c);
      }
      same["rounds"] = ratios.size();
      if (ratios.empty()) {  // WAIVED with ratio_result's reason
        derived.push_back(ratio_result("mem/host/triad_vs_classic_stream", same, std::nullopt, std::nullopt, what));
      } else {
        Result x;
        x.key = "mem/host/triad_vs_classic_stream";
        x.params = same;
        x.metrics.push_back(Metric{"ratio", percentile(ratios, 0.5), "x", true, {}, {}});
        x.extra = {{"compares", std::string(what) + "; median over interleaved rounds (order alternating)"},
                   {"per_round", ratios},
                   {"ours_gbps", ours},
                   {"peer_gbps", peer}};
        derived.push_back(std::move(x));
      }
    }
  }
  // The ratio's params are the classic rows' own: so are the ones this host chose.
  if (const Result* classic = find(rs, "mem/host/classic_stream_triad", nlohmann::json::object()))
    for (Result& d : derived)
      if (d.key == "mem/host/triad_vs_classic_stream" && classic->extra.contains("host_sized"))
        d.extra["host_sized"] = classic->extra.at("host_sized");
  // Per GPU: HBM triad and the SM copy, each against cudaMemcpy device-to-device (copy engine).
  for (const auto& r : rs) {
    if (r.key != "mem/copy/d2d" || r.status != Status::pass || r.params.at("engine") != "ce") continue;
    const nlohmann::json device = {{"device", r.params.at("device")}};
    bool largest = true;
    for (const auto& o : rs)
      if (o.key == r.key && o.params.at("device") == r.params.at("device") && o.params.at("engine") == "ce" &&
          o.params.at("bytes").get<double>() > r.params.at("bytes").get<double>())
        largest = false;
    if (!largest) continue;
    derived.push_back(ratio_result("mem/hbm/triad_vs_memcpy_d2d", device, headline(find(rs, "mem/hbm/triad", device)),
                                   headline(&r), "HBM triad / cudaMemcpy D2D (both count bytes read + written)"));
    nlohmann::json sm = {{"device", r.params.at("device")}, {"engine", "sm"}, {"bytes", r.params.at("bytes")}};
    derived.push_back(ratio_result("mem/copy/d2d_sm_vs_memcpy", device, headline(find(rs, "mem/copy/d2d", sm)),
                                   headline(&r), "SM copy kernel / cudaMemcpy D2D, same size"));
  }
  return derived;
}

void check_fits(const MemOptions& o, const DeviceSelection& sel) {
  auto refuse = [](const char* flag, uint64_t value, const std::string& where, double capacity) {
    return UsageError(fmt::format("{} {} does not fit in {} ({} total)", flag, format_bytes(static_cast<double>(value)),
                                  where, format_bytes(capacity)));
  };
  if (sel.cpu) {
    // 3 arrays; the pointer chase holds one working set of latency_max bytes.
    if (o.size)
      check_host_memory(3.0 * static_cast<double>(o.size),
                        fmt::format("mem --size {} (3 arrays)", format_bytes(static_cast<double>(o.size))));
    if (o.latency_max)
      check_host_memory(static_cast<double>(o.latency_max),
                        fmt::format("mem --latency-max {}", format_bytes(static_cast<double>(o.latency_max))));
  }
  for (int g : sel.gpus) {
    const auto& d = gpu::runtime().devices.at(static_cast<size_t>(g));
    const auto cap = static_cast<double>(d.memory_bytes);
    const std::string where = fmt::format("gpu:{} memory", g);
    if (o.size && 3.0 * static_cast<double>(o.size) > cap) throw refuse("--size", o.size, where + " (3 arrays)", cap);
    if (2.0 * static_cast<double>(o.copy_max) > cap)
      throw refuse("--copy-max", o.copy_max, where + " (2 buffers)", cap);
    if (o.latency_max && static_cast<double>(o.latency_max) > cap)
      throw refuse("--latency-max", o.latency_max, where, cap);
  }
}

MemOptions quick_mem_options() {
  MemOptions o;
  o.kernels = {kernels::StreamOp::copy, kernels::StreamOp::triad, kernels::StreamOp::dot};
  o.copy_min = 64 << 10;
  o.copy_max = 256 << 20;
  o.copy_factor = 16;
  o.latency_min = 4 << 10;
  o.latency_max = 16 << 20;
  o.peer_rounds = 2;  // one round in each order
  return o;
}

void run_mem(const MemOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner) {
  validate(o);
  check_fits(o, sel);
  CaseList cases;
  if (sel.cpu) cases = host_mem_cases(o, seed);
  for (auto& c : gpu_mem_cases(o, sel, seed)) cases.push_back(std::move(c));
  const size_t first = runner.results().size();
  runner.run_all(cases);
  const std::vector<Result> mine(runner.results().begin() + static_cast<long>(first), runner.results().end());
  for (auto& r : mem_derived_results(mine)) runner.add(std::move(r));
}

void add_mem_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app =
      root.add_subcommand("mem", "Memory bandwidth and latency: HBM and host DRAM (STREAM), copies, pointer chase");
  auto common = std::make_shared<CommonOptions>();
  auto mem = std::make_shared<MemOptions>();
  auto sizes = std::make_shared<std::map<std::string, std::string>>();
  // STREAM runs 10 iterations, BabelStream 100: one second of samples per case is plenty for a
  // bandwidth (tens of samples of 1 GiB-class arrays) and keeps the default run near 30 s.
  common->harness.max_time = kMemMaxTime;
  add_common_options(*app, *common);
  app->add_option("--group", mem->groups, "Which groups: stream, copy, latency")->delimiter(',')->capture_default_str();
  std::vector<std::pair<std::string, kernels::StreamOp>> op_names;
  for (const kernels::StreamOpInfo& k : kernels::stream_ops()) op_names.emplace_back(k.name, k.op);
  app->add_option("--kernels", mem->kernels, "STREAM kernels (default: all)")
      ->delimiter(',')
      ->transform(enum_names(op_names));
  app->add_option("--dtype", mem->dtypes, "Element types")
      ->delimiter(',')
      ->transform(dtype_names(mem_dtypes()))
      ->default_str("fp32");
  app->add_option("--vector-bytes", mem->vector_bytes, "GPU bytes per thread access: 4, 8, 16")
      ->delimiter(',')
      ->capture_default_str();
  app->add_option("--size", (*sizes)["size"], "Bytes per STREAM array (default: 4 x L2 on GPU, 4 x LLC on host)");
  app->add_option("--threads", mem->threads,
                  fmt::format("Host threads, 1 … {} (default: OpenMP's, i.e. all cores)", max_host_threads()))
      ->check(CLI::Range(1, max_host_threads()));
  app->add_option("--copy-min", (*sizes)["copy-min"], "Smallest copy size of the sweep [4K]");
  app->add_option("--copy-max", (*sizes)["copy-max"], "Largest copy size of the sweep [1G]");
  app->add_option("--copy-factor", mem->copy_factor, "Copy sweep step factor")->capture_default_str();
  app->add_option("--latency-min", (*sizes)["latency-min"], "Smallest pointer-chase working set [4K]");
  app->add_option("--latency-max", (*sizes)["latency-max"], "Largest working set (default: 4 x L2 / LLC)");
  app->add_flag("!--no-peers", mem->peers, "Skip the peers measured in the same run (classic STREAM, cudaMemcpy)");
  app->add_option("--peer-rounds", mem->peer_rounds,
                  "Host: interleaved rounds of classic STREAM triad and our fp64 triad (ratio = median over rounds)")
      ->capture_default_str();
  run = [=, &argv] {
    // A size flag that is given must name a size: '' and 0 are refused, not read as "default".
    auto parse = [&](const char* name, uint64_t& out) {
      if (app->get_option(fmt::format("--{}", name))->count() == 0) return;
      const std::string& text = (*sizes)[name];
      out = parse_size(text);
      if (out == 0) throw UsageError(fmt::format("--{} {}: must be more than 0 bytes", name, text));
    };
    parse("size", mem->size);
    parse("copy-min", mem->copy_min);
    parse("copy-max", mem->copy_max);
    parse("latency-min", mem->latency_min);
    parse("latency-max", mem->latency_max);
    validate(*mem);
    const DeviceSelection sel = select_devices(common->device);
    check_fits(*mem, sel);  // before the session opens any output file
    Session session(*common, argv);
    if (sel.cpu && !common->quiet)
      if (const std::string plan = host_mem_plan(*mem, common->harness.max_time); !plan.empty())
        fmt::print("{}\n", plan);
    run_mem(*mem, sel, common->seed, session.runner());
    return session.finish();
  };
}

}  // namespace gcb::bench
