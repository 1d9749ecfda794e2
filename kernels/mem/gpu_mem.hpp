// GPU memory kernels for `gcbench mem`: STREAM family (fp64/fp32/bf16, selectable vector width),
// SM copy kernel, and a pointer-chase latency kernel. Launchers only enqueue on the given stream:
// timing belongs to the harness (core/timer.hpp), verification to the caller via the host
// references in kernels/mem/stream_ops.hpp. Compiled only when CUDA is built.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::kernels {

struct GpuStreamArrays {
  void* a = nullptr;  // device pointers, each n elements of `dtype`
  void* b = nullptr;
  void* c = nullptr;
  size_t n = 0;
  DType dtype = DType::f32;  // f64, f32 or bf16
};

// Fills a, b, c with stream_input(seed, 0|1|2, i) converted to dtype (round to nearest even).
// Stream-ordered.
void gpu_stream_init(const GpuStreamArrays& arrays, uint64_t seed, cudaStream_t stream);

// Device scratch of dot and read on `device`: their sum (a double at offset 0), a counter of
// finished blocks and one partial per block. Zero it once after allocating it; every pass leaves
// the counter at zero again, so no pass needs a memset (one would be timed with it).
size_t gpu_stream_sum_bytes(int device);
// The sum from the first bytes of the scratch, copied to the host.
double gpu_stream_sum_result(const void* host_copy_of_scratch);

// Enqueues one pass of `op`. vector_bytes ∈ {4, 8, 16}: bytes each thread loads per access, one
// vector load per access (must be ≥ sizeof(dtype); n need not be a multiple, the tail is
// handled). Arithmetic in the element type for f64/f32 (triad uses fma, as the host reference
// does), in fp32 with one round-to-nearest-even for bf16. dot and read write their sum
// (accumulated in fp64, in an order fixed by the grid) into `sum_scratch` (above).
// Stream-ordered.
void gpu_stream_launch(StreamOp op, const GpuStreamArrays& arrays, int vector_bytes, void* sum_scratch,
                       cudaStream_t stream);

// SM copy: a grid-stride copy of `bytes` from src to dst with 16-byte loads where aligned.
// Either pointer may be host-mapped (pinned / registered) or a peer device's memory.
void gpu_sm_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream);

// Builds a random cyclic permutation over `count` slots of `stride_bytes` each in `buffer`
// (device memory, count × stride_bytes bytes): each slot holds the device address of the next.
// The permutation comes from `seed`; built on the host and copied. Blocking.
void gpu_chase_build(void* buffer, size_t count, size_t stride_bytes, uint64_t seed);

// One thread follows the chain for `steps` dependent loads starting at `buffer`, and stores
// the final pointer and the elapsed SM cycles (clock64) to *sink and *cycles (device memory).
// Stream-ordered.
void gpu_chase_launch(const void* buffer, uint64_t steps, void** sink, long long* cycles, cudaStream_t stream);

}  // namespace gcb::kernels
