// Published runs against the planner (published.hpp): read_published_runs parses the CSV table (Narayanan et al. 2021
// Table 1); published_candidate and published_request build each run's plan for the leave-one-out check.
#include "models/planner/published.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models::planner {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  for (const char ch : line) {
    if (ch == ',') {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

}  // namespace

std::vector<PublishedRun> read_published_runs(const std::string& path) {
  std::istringstream f(read_input_file(path, "published runs"));  // a regular file of bounded size
  std::string line;
  if (!std::getline(f, line)) throw UsageError(fmt::format("'{}' is empty", path));
  std::map<std::string, size_t> col;
  const std::vector<std::string> header = split_csv_line(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  std::vector<PublishedRun> runs;
  int line_no = 1;
  while (std::getline(f, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    auto cell = [&](const char* name) -> const std::string& {
      const auto it = col.find(name);
      if (it == col.end()) throw UsageError(fmt::format("'{}': no column '{}'", path, name));
      if (it->second >= cells.size()) throw UsageError(fmt::format("'{}' line {}: no '{}' cell", path, line_no, name));
      return cells[it->second];
    };
    auto number = [&](const char* name) {
      const std::string& s = cell(name);
      try {
        size_t used = 0;
        const double v = std::stod(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
        return v;
      } catch (const std::exception&) {
        throw UsageError(fmt::format("'{}' line {}: '{}' is not a number ({})", path, line_no, s, name));
      }
    };
    auto integer = [&](const char* name) { return static_cast<int>(number(name)); };
    PublishedRun r;
    r.model = cell("model");
    r.params_billion = number("params_billion");
    r.config.name = r.model;
    r.config.layers = integer("layers");
    r.config.hidden = integer("hidden");
    r.config.heads = integer("heads");
    r.config.seq = integer("seq");
    r.config.vocab = integer("vocab");
    r.global_batch = integer("global_batch");
    r.micro_batch = integer("micro_batch");
    r.tp = integer("tp");
    r.pp = integer("pp");
    r.dp = integer("dp");
    r.gpus = integer("gpus");
    r.virtual_stages = integer("virtual_stages");
    const std::string rc = cell("recompute");
    r.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
    r.tflops_per_gpu = number("tflops_per_gpu");
    r.percent_of_peak = number("percent_of_peak");
    r.aggregate_pflops = number("aggregate_pflops");
    validate(r.config);
    if (r.dp * r.tp * r.pp != r.gpus) {
      throw UsageError(
          fmt::format("'{}' line {}: dp {} × tp {} × pp {} ≠ {} GPUs", path, line_no, r.dp, r.tp, r.pp, r.gpus));
    }
    runs.push_back(r);
  }
  return runs;
}

Candidate published_candidate(const PublishedRun& run) {
  return make_candidate({.name = {}, .dp = run.dp, .tp = run.tp, .pp = run.pp, .schedule = PipeSchedule::one_f_one_b},
                        run.micro_batch, run.recompute, run.virtual_stages);
}

PlanRequest published_request(const PublishedRun& run, const GpuSpec& spec, int gpus_per_node, double e) {
  PlanRequest r;
  r.model = run.config;
  r.global_batch = run.global_batch;
  r.precision = Precision::bf16;  // fp16 mixed precision: the same bytes per tensor and peak
  r.attention.flash = false;      // 2021: softmax and dropout materialised
  r.attention.dropout = true;
  r.pp_scatter_gather = true;
  GpuClusterArgs a;
  a.gpus = run.gpus;
  a.gpus_per_node = gpus_per_node;
  a.precision = Precision::bf16;
  r.cluster = gpu_cluster(spec, a);
  r.efficiency = e;
  r.only = {published_candidate(run)};
  return r;
}

std::vector<PublishedCheck> check_published(const std::vector<PublishedRun>& runs, const GpuSpec& spec,
                                            int gpus_per_node) {
  std::vector<PublishedCheck> out;
  auto step_at = [&](const PublishedRun& run, double e) {
    const PlanModel pm = plan_model(published_request(run, spec, gpus_per_node, e));
    return predict(pm, published_candidate(run));
  };
  for (const PublishedRun& run : runs) {
    PublishedCheck c;
    c.run = run;
    c.params_billion = static_cast<double>(param_count(run.config)) / 1e9;
    const bool full = run.recompute == Recompute::full;
    c.flops = narayanan_flops_per_iteration(run.config, run.global_batch, full);
    c.iteration_time = c.flops / (run.gpus * run.tflops_per_gpu * 1e12);
    const double peak = *peak_tflops(spec, DType::f16) * 1e12;
    const double denom = c.iteration_time * run.gpus * peak;
    c.hfu = 100.0 * c.flops / denom;
    c.mfu = 100.0 * narayanan_flops_per_iteration(run.config, run.global_batch, false) / denom;
    // The step falls as the efficiency rises: bisect for the one that reproduces the run.
    double lo = 0.01, hi = 1.0;
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (lo + hi);
      (step_at(run, mid).time.step > c.iteration_time ? lo : hi) = mid;
    }
    c.fitted_efficiency = 0.5 * (lo + hi);
    out.push_back(c);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    double sum = 0;
    for (size_t j = 0; j < out.size(); ++j)
      if (j != i) sum += out[j].fitted_efficiency;
    PublishedCheck& c = out[i];
    c.loo_efficiency = out.size() > 1 ? sum / static_cast<double>(out.size() - 1) : c.fitted_efficiency;
    c.prediction = step_at(c.run, c.loo_efficiency);
    c.predicted_time = c.prediction.time.step;
    c.error = c.predicted_time / c.iteration_time - 1.0;
  }
  return out;
}

}  // namespace gcb::models::planner
