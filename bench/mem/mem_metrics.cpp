#include "bench/mem/mem_metrics.hpp"

#include <cmath>
#include <fmt/format.h>

#include "kernels/host_mem.hpp"

namespace gcb::bench {

double stream_bytes(kernels::StreamOp op, size_t n, size_t element_bytes) {
  return static_cast<double>(kernels::stream_op_arrays(op)) * static_cast<double>(n) *
         static_cast<double>(element_bytes);
}

nlohmann::json stream_model(kernels::StreamOp op, size_t n, size_t element_bytes) {
  const bool two_flops = op == kernels::StreamOp::triad || op == kernels::StreamOp::dot;
  const bool one_flop = op == kernels::StreamOp::scale || op == kernels::StreamOp::add || op == kernels::StreamOp::read;
  return {{"bytes", stream_bytes(op, n, element_bytes)},
          {"bytes_counted", "read + written"},
          {"flops", static_cast<double>(n) * (two_flops  ? 2
                                              : one_flop ? 1
                                                         : 0)}};
}

std::vector<Metric> bandwidth_metrics(double bytes, const Statistics& s, std::optional<double> peak_gbps,
                                      const std::string& peak_source) {
  auto gbps = [&](double seconds) -> std::optional<double> {
    if (!(seconds > 0)) return std::nullopt;
    return bytes / seconds / 1e9;
  };
  Metric max{"bandwidth", gbps(s.min), "GB/s", true, peak_gbps, peak_source};
  Metric median{"bandwidth_median", gbps(s.median), "GB/s", true, peak_gbps, peak_source};
  return {max, median};
}

std::vector<Metric> latency_metrics(const Statistics& s, uint64_t loads) {
  const double n = static_cast<double>(loads);
  Metric median{"latency", s.count ? std::optional<double>(s.median / n * 1e9) : std::nullopt, "ns", false, {}, {}};
  Metric min{"latency_min", s.count ? std::optional<double>(s.min / n * 1e9) : std::nullopt, "ns", false, {}, {}};
  return {median, min};
}

std::string verify_stream(kernels::StreamOp op, DType t, uint64_t seed, size_t n, double sum, const void* a,
                          const void* b, const void* c) {
  const int out = kernels::stream_output_array(op);
  if (out >= 0) return kernels::verify_stream_output(op, t, seed, out == 0 ? a : out == 1 ? b : c, n);
  const kernels::ExpectedSum want = kernels::stream_expected_sum(op, t, seed, n);
  if (std::fabs(sum - want.value) <= want.tolerance) return {};
  return fmt::format("sum = {:.17g}, expected {:.17g} ± {:.3g}", sum, want.value, want.tolerance);
}

}  // namespace gcb::bench
