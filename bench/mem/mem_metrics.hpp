// Shared arithmetic of the mem cases: bytes moved per STREAM pass, the bandwidth and latency
// metrics derived from per-launch times, and STREAM output verification on host memory.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/stats.hpp"
#include "kernels/stream_ops.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

// Bytes read + bytes written by one pass (BabelStream's array weights × n × element size).
double stream_bytes(kernels::StreamOp op, size_t n, size_t element_bytes);
nlohmann::json stream_model(kernels::StreamOp op, size_t n, size_t element_bytes);

// "bandwidth" = bytes / minimum time (max bandwidth, BabelStream's convention) and
// "bandwidth_median" = bytes / median time, GB/s (1e9 B/s), higher is better; with % of peak.
std::vector<Metric> bandwidth_metrics(double bytes, const Statistics& seconds, std::optional<double> peak_gbps,
                                      const std::string& peak_source);
// "latency" = median time / loads and "latency_min", in ns; lower is better.
std::vector<Metric> latency_metrics(const Statistics& seconds, uint64_t loads);

// Checks a STREAM pass on host-visible arrays: the output array element by element (exact),
// or the sum of dot/read within its rounding bound. "" when right.
std::string verify_stream(kernels::StreamOp op, DType t, uint64_t seed, size_t n, double sum, const void* a,
                          const void* b, const void* c);

}  // namespace gcb::bench
