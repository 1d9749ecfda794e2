// Shared arithmetic of the mem cases (mem_metrics.hpp): bytes and FLOPs per STREAM pass (stream_bytes, stream_model)
// and verify_stream, the check of a STREAM output or sum against the seeded inputs.
#include "bench/mem/mem_metrics.hpp"

#include <cmath>
#include <fmt/format.h>

#include "kernels/mem/host_mem.hpp"

namespace gcb::bench {

double stream_bytes(kernels::StreamOp op, size_t n, size_t element_bytes) {
  return static_cast<double>(kernels::stream_op_arrays(op)) * static_cast<double>(n) *
         static_cast<double>(element_bytes);
}

nlohmann::json stream_model(kernels::StreamOp op, size_t n, size_t element_bytes) {
  return {{"bytes", stream_bytes(op, n, element_bytes)},
          {"bytes_counted", "read + written"},
          {"flops", static_cast<double>(n) * kernels::stream_op_info(op).flops}};
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
