// A benchmark case declares itself and never times itself: its key and axes, what
// it needs (WAIVED otherwise), a setup that allocates and seeds inputs, one unit of work, a
// verification, and the metrics derived from the harness's per-launch times.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "core/stats.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

class Case {
 public:
  virtual ~Case() = default;
  virtual std::string key() const = 0;        // "<family>/<name>"
  virtual nlohmann::json params() const = 0;  // axes, recorded with the result
  virtual int gpu() const { return -1; }      // device index, or -1 for the host
  // Non-empty: the case cannot run here (no GPU, NUMA node missing, …) and is WAIVED with this.
  virtual std::string waived_reason() const { return {}; }
  virtual void setup() = 0;                               // allocate, seed, warm nothing
  virtual gpu::Stream stream() const { return nullptr; }  // GPU cases: where launch() enqueues
  // GPU cases whose launch() blocks the host until (part of) its work is done, e.g. a pageable
  // cudaMemcpyAsync: timed with events but without the blocking kernel (gpu.hpp Latch::off).
  virtual bool host_synchronous() const { return false; }
  virtual void launch() = 0;  // one unit of work
  // After timing: "" when the output is right, else what is wrong (first indices). FAIL then.
  virtual std::string verify() = 0;
  // Metrics from per-launch statistics (seconds). The first is the headline.
  virtual std::vector<Metric> metrics(const Statistics& seconds) const = 0;
  virtual nlohmann::json model() const { return nlohmann::json::object(); }  // bytes/flops per launch
  // Family-specific fields computed after timing (e.g. measured cycles); may run kernels.
  virtual nlohmann::json extra() { return nlohmann::json::object(); }
  virtual void teardown() {}
};

using CaseList = std::vector<std::unique_ptr<Case>>;

}  // namespace gcb::bench
