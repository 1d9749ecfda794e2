// Shared arithmetic of the mem cases: bytes moved per STREAM pass and STREAM output verification
// on host memory (the bandwidth and latency metrics: bench/common/transfer_metrics.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/mem/stream_ops.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

// Bytes read + bytes written by one pass (BabelStream's array weights × n × element size).
double stream_bytes(kernels::StreamOp op, size_t n, size_t element_bytes);
nlohmann::json stream_model(kernels::StreamOp op, size_t n, size_t element_bytes);

// Checks a STREAM pass on host-visible arrays: the output array element by element (exact),
// or the sum of dot/read within its rounding bound. "" when right.
std::string verify_stream(kernels::StreamOp op, DType t, uint64_t seed, size_t n, double sum, const void* a,
                          const void* b, const void* c);

}  // namespace gcb::bench
