// Calibration (calibration.hpp) from gcbench result files: GEMM and attention seconds per shape, coll α–β fits, mem
// triad bandwidth and a scan document's per-node figures, for the filter's device and dtype.
#include "models/planner/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <tuple>

#include "collectives/factory.hpp"
#include "core/stats.hpp"
#include "models/planner/comm_model.hpp"

namespace gcb::models::planner {
namespace {

// Whether results of communicator backend `name` moved device memory (the factory's table; an
// unknown or missing name counts as host memory).
bool on_device_memory(const std::string& name) {
  return communicator_backend_known(name) && communicator_backend(name).memory == MemorySpace::device;
}

double mean_seconds(const Result& r) {
  if (r.stats) return r.stats->mean;
  if (r.samples.empty()) return 0.0;
  return std::accumulate(r.samples.begin(), r.samples.end(), 0.0) / static_cast<double>(r.samples.size());
}

template <typename T>
T param(const Result& r, const char* key, T fallback) {
  return r.params.contains(key) && !r.params.at(key).is_null() ? r.params.at(key).get<T>() : fallback;
}

bool on_device(const Result& r, bool cpu) {
  const std::string d = param<std::string>(r, "device", "");
  return cpu ? d == "cpu" : d.starts_with("gpu");
}

double median(const std::vector<double>& v) { return percentile(v, 0.5); }

double metric_value(const Result& r, const char* name) {
  const Metric* m = r.metric(name);
  return m && m->value ? *m->value : 0.0;
}

// A point-to-point or collective measurement's group: backend, and whether it crosses nodes.
using GroupKey = std::tuple<std::string, int, int>;  // op or "sendrecv", ranks, nodes

// What a scan (or a p2p run) measured between ranks, turned into α–β fits: a send/recv from the
// pair latencies (one-way, median) and bandwidths (median) per backend and tier; a collective
// from its single-size points where no coll/<op>/fit of the same group exists.
void add_point_fits(Calibration& cal, const ResultDocument& doc, const CalibrationFilter& f) {
  std::map<std::pair<std::string, int>, std::vector<double>> latency, bandwidth;              // (backend, nodes)
  std::map<std::pair<GroupKey, std::string>, std::vector<std::pair<double, double>>> points;  // bytes, s
  std::vector<std::pair<GroupKey, std::string>> fitted;
  for (const Result& r : doc.results) {
    if (r.status != Status::pass) continue;
    const std::string backend = param<std::string>(r, "backend", "");
    // Device-memory transfers calibrate the GPU layouts, host-memory ones the CPU layouts.
    if (backend.empty() || on_device_memory(backend) == f.cpu) continue;
    if (r.key == "p2p/latency" || r.key == "p2p/bandwidth") {
      const std::string src = param<std::string>(r, "src_node", ""), dst = param<std::string>(r, "dst_node", "");
      const int nodes = !src.empty() && src != dst ? 2 : 1;
      if (r.key == "p2p/latency") {
        if (const double ns = metric_value(r, "latency"); ns > 0) latency[{backend, nodes}].push_back(ns * 1e-9);
      } else if (const double gbs = metric_value(r, "bandwidth"); gbs > 0) {
        bandwidth[{backend, nodes}].push_back(gbs * 1e9);
      }
    } else if (r.family() == "coll") {
      const GroupKey g{param<std::string>(r, "op", ""), param<int>(r, "ranks", 0), param<int>(r, "nodes", 1)};
      if (r.key.ends_with("/fit")) {
        fitted.push_back({g, backend});
      } else if (const double t = metric_value(r, "time"); t > 0 && param<double>(r, "bytes", 0) > 0) {
        points[{g, backend}].push_back({param<double>(r, "bytes", 0), t});
      }
    }
  }
  std::map<std::pair<std::string, int>, double> pair_latency;
  for (const auto& [key, bw] : bandwidth) {
    const auto lat = latency.find(key);
    const double alpha = lat == latency.end() ? 0.0 : median(lat->second);
    pair_latency[key] = alpha;
    cal.coll.push_back({"sendrecv", 2, key.second, alpha, median(bw), key.first});
    ++cal.results_read;
  }
  for (const auto& [key, pts] : points) {
    if (std::find(fitted.begin(), fitted.end(), key) != fitted.end()) continue;
    const auto& [op, ranks, nodes] = key.first;
    const std::optional<Collective> c = parse_collective(op);
    if (!c || ranks < 2) continue;
    // Several sizes: least squares t = α + n/β. One size: α = ring steps × the pair latency.
    double n_mean = 0, t_mean = 0;
    for (const auto& [n, t] : pts) {
      n_mean += n / static_cast<double>(pts.size());
      t_mean += t / static_cast<double>(pts.size());
    }
    double sxx = 0, sxy = 0;
    for (const auto& [n, t] : pts) {
      sxx += (n - n_mean) * (n - n_mean);
      sxy += (n - n_mean) * (t - t_mean);
    }
    double alpha = 0, per_byte = 0;
    if (sxx > 0 && sxy > 0) {
      per_byte = sxy / sxx;
      alpha = std::max(0.0, t_mean - per_byte * n_mean);
    } else {
      const auto lat = pair_latency.find({key.second, nodes > 1 ? 2 : 1});
      alpha = lat == pair_latency.end() ? 0.0 : std::min(ring_steps(*c, ranks) * lat->second, 0.5 * t_mean);
      per_byte = (t_mean - alpha) / n_mean;
    }
    if (per_byte <= 0) continue;
    cal.coll.push_back({op, ranks, nodes, alpha, 1.0 / per_byte, key.second});
    cal.results_read += static_cast<int>(pts.size());
  }
}

// The larger of `into` and v (the best rate of several sizes: the large-transfer asymptote).
void best(std::optional<double>& into, double v) { into = into ? std::max(*into, v) : v; }

}  // namespace

std::optional<RankBandwidth> rank_bandwidth(const Calibration& cal, int ranks, int threads_per_rank) {
  if (cal.triad.empty()) return std::nullopt;
  const int want = std::max(1, ranks) * std::max(1, threads_per_rank);
  const TriadPoint* best = nullptr;
  for (const TriadPoint& p : cal.triad) {
    if (!best || std::abs(p.threads - want) < std::abs(best->threads - want) ||
        (p.threads == best->threads && p.array_bytes > best->array_bytes)) {
      best = &p;
    }
  }
  const int k = std::max(1, best->threads);
  const double b = best->bytes_per_s * std::max(1, threads_per_rank) / k;
  return RankBandwidth{
      b, fmt::format("calibration: mem triad of {} thread{} {:.3g} GB/s × {}/{} thread{} per rank{}", k,
                     k > 1 ? "s" : "", best->bytes_per_s / 1e9, std::max(1, threads_per_rank), k, k > 1 ? "s" : "",
                     k < want ? " (assumed to scale linearly to all ranks' threads)" : "")};
}

void add_calibration(Calibration& cal, const ResultDocument& doc, const CalibrationFilter& f) {
  std::vector<double> triad;
  for (const Result& r : doc.results) {
    if (r.status != Status::pass) continue;
    const std::string fam = r.family();
    const double s = mean_seconds(r);
    if (fam == "gemm" && r.key == "gemm/" + f.dtype && on_device(r, f.cpu) && s > 0) {
      cal.gemm.push_back({param<int64_t>(r, "m", 0), param<int64_t>(r, "n", 0), param<int64_t>(r, "k", 0), s});
    } else if (fam == "attn" && on_device(r, f.cpu) && param<std::string>(r, "dtype", "") == f.dtype && s > 0 &&
               r.model.contains("flops") && (r.key == "attn/fwd" || r.key == "attn/bwd")) {
      AttnPoint p;
      p.batch = param<int>(r, "batch", 0);
      p.heads = param<int>(r, "heads", 0);
      p.seq = param<int>(r, "seq", 0);
      p.head_dim = param<int>(r, "head_dim", 0);
      p.causal = param<bool>(r, "causal", true);
      p.backward = r.key == "attn/bwd";
      p.seconds = s;
      p.flops = r.model.at("flops").get<double>();
      cal.attn.push_back(p);
    } else if (fam == "coll" && r.key.ends_with("/fit")) {
      const std::string backend = param<std::string>(r, "backend", "");
      if (on_device_memory(backend) == f.cpu) continue;  // GPU layouts from device memory, CPU from host
      const Metric* a = r.metric("alpha");
      const Metric* b = r.metric("beta");
      if (!a || !b || !a->value || !b->value || *b->value <= 0) continue;
      cal.coll.push_back({param<std::string>(r, "op", ""), param<int>(r, "ranks", 0), param<int>(r, "nodes", 1),
                          *a->value * 1e-6, *b->value * 1e9, backend});
    } else if (fam == "mem" && (r.key == "mem/host/triad") == f.cpu && (r.key == "mem/hbm/triad") != f.cpu && s > 0 &&
               r.model.contains("bytes")) {
      triad.push_back(r.model.at("bytes").get<double>() / s);
      cal.triad.push_back({triad.back(), param<int>(r, "threads", 1), param<double>(r, "array_bytes", 0)});
      if (f.cpu) best(cal.host_triad_bytes_per_s, triad.back());
    } else if (!f.cpu && r.key == "mem/host/triad" && s > 0 && r.model.contains("bytes")) {
      best(cal.host_triad_bytes_per_s, r.model.at("bytes").get<double>() / s);
    } else if (!f.cpu && (r.key == "mem/copy/h2d" || r.key == "mem/copy/d2h") && s > 0 && r.model.contains("bytes") &&
               param<std::string>(r, "engine", "") == "ce" &&
               param<std::string>(r, "direction", "") == "unidirectional" &&
               param<std::string>(r, "host_memory", "") == "pinned") {
      best(r.key == "mem/copy/h2d" ? cal.h2d_bytes_per_s : cal.d2h_bytes_per_s, r.model.at("bytes").get<double>() / s);
    } else {
      continue;
    }
    ++cal.results_read;
  }
  add_point_fits(cal, doc, f);
  if (!triad.empty()) {
    const double mean = std::accumulate(triad.begin(), triad.end(), 0.0) / static_cast<double>(triad.size());
    cal.memory_bandwidth = cal.memory_bandwidth ? (*cal.memory_bandwidth + mean) / 2 : mean;
  }
}

Calibration read_calibration(const std::vector<std::string>& paths, const CalibrationFilter& f) {
  Calibration cal;
  for (const std::string& p : paths) {
    std::vector<std::string> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".json" || ext == ".jsonl")) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(p);
    }
    for (const std::string& file : files) add_calibration(cal, load_document(file), f);
    cal.files.push_back(std::filesystem::is_directory(p) ? fmt::format("{} ({} files)", p, files.size()) : p);
  }
  return cal;
}

}  // namespace gcb::models::planner
