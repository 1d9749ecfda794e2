#include "models/planner/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "collectives/factory.hpp"

namespace gcb::models::planner {
namespace {

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

}  // namespace

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
      // Device-memory collectives calibrate the GPU layouts, host-memory ones the CPU layouts.
      const bool device =
          communicator_backend_known(backend) && communicator_backend(backend).memory == MemorySpace::device;
      if (device == f.cpu) continue;
      const Metric* a = r.metric("alpha");
      const Metric* b = r.metric("beta");
      if (!a || !b || !a->value || !b->value || *b->value <= 0) continue;
      cal.coll.push_back({param<std::string>(r, "op", ""), param<int>(r, "ranks", 0), param<int>(r, "nodes", 1),
                          *a->value * 1e-6, *b->value * 1e9, backend});
    } else if (fam == "mem" && (r.key == "mem/host/triad") == f.cpu && (r.key == "mem/hbm/triad") != f.cpu &&
               s > 0 && r.model.contains("bytes")) {
      triad.push_back(r.model.at("bytes").get<double>() / s);
    } else {
      continue;
    }
    ++cal.results_read;
  }
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
