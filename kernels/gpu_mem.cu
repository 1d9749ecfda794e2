// CUDA side of `gcbench mem`: the STREAM family (BabelStream's ops plus read and write) in fp64,
// fp32 and bf16 with a selectable vector width, an SM copy kernel for copies the copy engines
// do not cover, and a single-thread pointer chase for load-to-use latency.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/gpu_mem.hpp"

namespace gcb::kernels {

namespace {

constexpr int kBlock = 256;
constexpr int kWarp = 32;
// 8 × 256 threads = 2048, the thread limit of one SM on sm_80/sm_90: more blocks only add
// grid-stride overhead, fewer leave latency hiding on the table.
constexpr size_t kMaxBlocksPerSm = 8;

template <typename I>
constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

bool is_aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// The attribute query costs a driver call; launchers run inside timing loops, so ask once per
// device. Ranks may be threads sharing this process, hence the lock.
size_t sm_count_of_current_device() {
  static std::mutex mutex;
  static std::vector<int> cached;  // index = device, 0 = not yet queried
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto index = static_cast<size_t>(device);
  const std::lock_guard<std::mutex> lock(mutex);
  if (cached.size() <= index) cached.resize(index + 1, 0);
  if (cached[index] == 0)
    CUDA_CHECK(cudaDeviceGetAttribute(&cached[index], cudaDevAttrMultiProcessorCount, device));
  return static_cast<size_t>(cached[index]);
}

// Grid-stride grids are a whole number of waves (a multiple of the SM count) so every SM gets
// the same share; small inputs use one block per SM.
unsigned grid_for(size_t work_items) {
  const size_t sms = sm_count_of_current_device();
  const size_t blocks_per_sm = std::clamp<size_t>(
      ceil_div(ceil_div(work_items, static_cast<size_t>(kBlock)), sms), 1, kMaxBlocksPerSm);
  return static_cast<unsigned>(sms * blocks_per_sm);
}

__device__ size_t grid_thread_index() {
  return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ size_t grid_thread_count() {
  return static_cast<size_t>(gridDim.x) * blockDim.x;
}

// ---- STREAM ------------------------------------------------------------------------------

// What each element type computes in and how it rounds back: bf16 has no arithmetic of its
// own worth timing, so it widens to fp32 and rounds once, as the host reference does.
template <typename T>
struct Arith;
template <>
struct Arith<double> {
  using Compute = double;
  __device__ static double widen(double x) { return x; }
  __device__ static double narrow(double x) { return x; }
  __device__ static double fma(double s, double x, double y) { return ::fma(s, x, y); }
};
template <>
struct Arith<float> {
  using Compute = float;
  __device__ static float widen(float x) { return x; }
  __device__ static float narrow(float x) { return x; }
  __device__ static float fma(float s, float x, float y) { return fmaf(s, x, y); }
};
template <>
struct Arith<__nv_bfloat16> {
  using Compute = float;
  __device__ static float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 narrow(float x) { return __float2bfloat16_rn(x); }
  __device__ static float fma(float s, float x, float y) { return fmaf(s, x, y); }
};

// The unit one thread moves per access. Alignment of the whole struct is what lets the
// compiler emit one 4/8/16-byte load (ld.global.v2/v4) instead of per-element loads.
template <typename T, int VB>
struct alignas(VB) Vec {
  static constexpr int kLanes = VB / static_cast<int>(sizeof(T));
  static_assert(kLanes >= 1 && VB % sizeof(T) == 0, "vector must hold whole elements");
  T lane[kLanes];
};

// Applies f lane by lane; the inputs arrive by value, so each is exactly one vector load.
template <typename V, typename F, typename... Vs>
__device__ V lanewise(F f, Vs... in) {
  V out;
#pragma unroll
  for (int k = 0; k < V::kLanes; ++k) out.lane[k] = f(in.lane[k]...);
  return out;
}

// out[i] = f(in[i]...) over n elements: whole vectors first, then the n % lanes tail one
// element at a time (the tail starts on a vector boundary, so scalar accesses stay aligned).
template <typename T, int VB, typename F, typename... In>
__device__ void map_vectors(size_t n, T* out, F f, const In*... in) {
  using V = Vec<T, VB>;
  const size_t vectors = n / V::kLanes;
  for (size_t v = grid_thread_index(); v < vectors; v += grid_thread_count())
    reinterpret_cast<V*>(out)[v] = lanewise<V>(f, reinterpret_cast<const V*>(in)[v]...);
  for (size_t i = vectors * V::kLanes + grid_thread_index(); i < n; i += grid_thread_count())
    out[i] = f(in[i]...);
}

// Σ f(in[i]...) over this thread's share, in fp64.
template <typename T, int VB, typename F, typename... In>
__device__ double sum_vectors(size_t n, F f, const In*... in) {
  using V = Vec<T, VB>;
  const size_t vectors = n / V::kLanes;
  double partial = 0.0;
  for (size_t v = grid_thread_index(); v < vectors; v += grid_thread_count()) {
    const double lanes_sum = [&](const auto&... vecs) {
      double s = 0.0;
#pragma unroll
      for (int k = 0; k < V::kLanes; ++k) s += f(vecs.lane[k]...);
      return s;
    }(reinterpret_cast<const V*>(in)[v]...);
    partial += lanes_sum;
  }
  for (size_t i = vectors * V::kLanes + grid_thread_index(); i < n; i += grid_thread_count())
    partial += f(in[i]...);
  return partial;
}

__device__ double warp_sum(double x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    x += __shfl_down_sync(0xFFFFFFFFu, x, offset);
  return x;
}

// Block-wide sum, valid in thread 0. Assumes blockDim.x == kBlock.
__device__ double block_sum(double x) {
  __shared__ double warp_sums[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  x = warp_sum(x);
  if (lane == 0) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) x = warp_sum(lane < kBlock / kWarp ? warp_sums[lane] : 0.0);
  return x;
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
    stream_init_kernel(T* a, T* b, T* c, size_t n, uint64_t seed) {
  using A = Arith<T>;
  using C = typename A::Compute;
  for (size_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    // stream_input is exact in every type here, so the double → Compute step is exact too.
    a[i] = A::narrow(static_cast<C>(stream_input(seed, 0, i)));
    b[i] = A::narrow(static_cast<C>(stream_input(seed, 1, i)));
    c[i] = A::narrow(static_cast<C>(stream_input(seed, 2, i)));
  }
}

// One kernel per (type, width) for the five element-wise ops: the op is uniform across the
// grid, so the switch costs one branch per thread and keeps instantiations (and the 2-core
// build) small.
template <typename T, int VB>
__global__ void __launch_bounds__(kBlock)
    stream_elementwise_kernel(StreamOp op, T* a, T* b, T* c, size_t n) {
  using A = Arith<T>;
  using C = typename A::Compute;
  const auto s = static_cast<C>(kStreamScalar);
  switch (op) {
    case StreamOp::copy:  // c = a, bit for bit: no widening, so bf16 copies stay exact copies
      map_vectors<T, VB>(n, c, [](T x) { return x; }, a);
      break;
    case StreamOp::scale:  // b = s·c
      map_vectors<T, VB>(n, b, [s](T x) { return A::narrow(s * A::widen(x)); }, c);
      break;
    case StreamOp::add:  // c = a + b
      map_vectors<T, VB>(n, c, [](T x, T y) { return A::narrow(A::widen(x) + A::widen(y)); }, a,
                         b);
      break;
    case StreamOp::triad:  // a = b + s·c as fma(s, c, b): one rounding, like std::fma on the host
      map_vectors<T, VB>(
          n, a, [s](T y, T x) { return A::narrow(A::fma(s, A::widen(x), A::widen(y))); }, b, c);
      break;
    case StreamOp::write:  // a = s
      map_vectors<T, VB>(n, a, [s]() { return A::narrow(s); });
      break;
    case StreamOp::dot:
    case StreamOp::read: break;  // stream_reduce_kernel
  }
}

// dot (Σ a·b) and read (Σ a), accumulated in fp64. One atomic per block keeps the atomics off
// the bandwidth being measured; *sum_out must be zeroed before the launch.
template <typename T, int VB>
__global__ void __launch_bounds__(kBlock)
    stream_reduce_kernel(StreamOp op, const T* a, const T* b, size_t n, double* sum_out) {
  using A = Arith<T>;
  double partial = 0.0;
  if (op == StreamOp::dot) {
    partial = sum_vectors<T, VB>(
        n,
        [](T x, T y) {
          return static_cast<double>(A::widen(x)) * static_cast<double>(A::widen(y));
        },
        a, b);
  } else {
    partial = sum_vectors<T, VB>(n, [](T x) { return static_cast<double>(A::widen(x)); }, a);
  }
  const double total = block_sum(partial);
  if (threadIdx.x == 0) atomicAdd(sum_out, total);
}

// A dtype comes from a user flag, so an unsupported one is a usage error, not a fault.
void require_stream_dtype(DType t) {
  if (t != DType::f64 && t != DType::f32 && t != DType::bf16)
    throw UsageError("GPU STREAM supports fp64, fp32 and bf16, not " +
                     std::string(dtype_name(t)));
}

bool is_reduction(StreamOp op) { return op == StreamOp::dot || op == StreamOp::read; }

// Which of a (0), b (1), c (2) the op touches, read or written.
bool op_uses(StreamOp op, int which) {
  switch (op) {
    case StreamOp::copy: return which == 0 || which == 2;
    case StreamOp::scale: return which == 1 || which == 2;
    case StreamOp::add:
    case StreamOp::triad: return true;
    case StreamOp::dot: return which == 0 || which == 1;
    case StreamOp::read:
    case StreamOp::write: return which == 0;
  }
  return false;
}

template <typename T, int VB>
void launch_stream_width(StreamOp op, const GpuStreamArrays& arrays, double* sum_out,
                         cudaStream_t stream) {
  auto* a = static_cast<T*>(arrays.a);
  auto* b = static_cast<T*>(arrays.b);
  auto* c = static_cast<T*>(arrays.c);
  const unsigned grid =
      grid_for(ceil_div(arrays.n, static_cast<size_t>(Vec<T, VB>::kLanes)));
  if (is_reduction(op)) {
    CUDA_CHECK(cudaMemsetAsync(sum_out, 0, sizeof(double), stream));
    stream_reduce_kernel<T, VB><<<grid, kBlock, 0, stream>>>(op, a, b, arrays.n, sum_out);
  } else {
    stream_elementwise_kernel<T, VB><<<grid, kBlock, 0, stream>>>(op, a, b, c, arrays.n);
  }
  CUDA_CHECK(cudaGetLastError());
}

// Only widths that hold at least one element are instantiated: 2 for fp64, 3 for fp32 and bf16.
template <typename T>
void launch_stream_typed(StreamOp op, const GpuStreamArrays& arrays, int vector_bytes,
                         double* sum_out, cudaStream_t stream) {
  switch (vector_bytes) {
    case 4:
      if constexpr (sizeof(T) <= 4) launch_stream_width<T, 4>(op, arrays, sum_out, stream);
      return;
    case 8: launch_stream_width<T, 8>(op, arrays, sum_out, stream); return;
    case 16: launch_stream_width<T, 16>(op, arrays, sum_out, stream); return;
    default: return;  // rejected by the caller
  }
}

// ---- SM copy and pointer chase ------------------------------------------------------------

// vec16: both pointers 16-byte aligned, so the body moves uint4s and only the last
// bytes % 16 go byte by byte; otherwise every byte does (the pointers can't share a vector
// boundary in general).
__global__ void __launch_bounds__(kBlock)
    sm_copy_kernel(unsigned char* dst, const unsigned char* src, size_t bytes, bool vec16) {
  size_t done = 0;
  if (vec16) {
    const size_t vectors = bytes / sizeof(uint4);
    auto* dst16 = reinterpret_cast<uint4*>(dst);
    const auto* src16 = reinterpret_cast<const uint4*>(src);
    for (size_t v = grid_thread_index(); v < vectors; v += grid_thread_count())
      dst16[v] = src16[v];
    done = vectors * sizeof(uint4);
  }
  for (size_t i = done + grid_thread_index(); i < bytes; i += grid_thread_count()) dst[i] = src[i];
}

// A clock read that the compiler may not move across memory operations ("memory" clobber);
// clock64() alone is volatile but may still be reordered with the store of the final pointer.
__device__ long long clock_fenced() {
  long long t = 0;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : : "memory");
  return t;
}

__global__ void chase_kernel(const void* start, uint64_t steps, void** sink, long long* cycles) {
  uint64_t p = reinterpret_cast<uintptr_t>(start);
  const long long t0 = clock_fenced();
  for (uint64_t s = 0; s < steps; ++s) {
    // asm volatile: every load is issued, none is hoisted or merged; each address is the
    // previous load's value, so the loads are serialised in hardware as well.
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(p) : "l"(p) : "memory");
  }
  // Storing p needs the last load's value, so the second clock read waits for it: the count
  // covers all `steps` load latencies, not steps - 1 plus an issue slot.
  *sink = reinterpret_cast<void*>(p);
  const long long t1 = clock_fenced();
  *cycles = t1 - t0;
}

}  // namespace

void gpu_stream_init(const GpuStreamArrays& arrays, uint64_t seed, cudaStream_t stream) {
  require_stream_dtype(arrays.dtype);
  const size_t width = dtype_size(arrays.dtype);
  for (const void* p : {arrays.a, arrays.b, arrays.c})
    GCB_CHECK(p != nullptr && is_aligned(p, width),
              "gpu_stream_init needs all three arrays, aligned to their element size");
  const unsigned grid = grid_for(arrays.n);
  switch (arrays.dtype) {
    case DType::f64:
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<double*>(arrays.a),
                                                      static_cast<double*>(arrays.b),
                                                      static_cast<double*>(arrays.c), arrays.n,
                                                      seed);
      break;
    case DType::f32:
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<float*>(arrays.a),
                                                      static_cast<float*>(arrays.b),
                                                      static_cast<float*>(arrays.c), arrays.n,
                                                      seed);
      break;
    default:
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<__nv_bfloat16*>(arrays.a),
                                                      static_cast<__nv_bfloat16*>(arrays.b),
                                                      static_cast<__nv_bfloat16*>(arrays.c),
                                                      arrays.n, seed);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

void gpu_stream_launch(StreamOp op, const GpuStreamArrays& arrays, int vector_bytes,
                       double* sum_out, cudaStream_t stream) {
  // User-facing parameters first (UsageError, exit 2), before any CUDA call.
  const DType t = arrays.dtype;
  require_stream_dtype(t);
  if (vector_bytes != 4 && vector_bytes != 8 && vector_bytes != 16)
    throw UsageError("vector width must be 4, 8 or 16 bytes, not " +
                     std::to_string(vector_bytes));
  if (static_cast<size_t>(vector_bytes) < dtype_size(t))
    throw UsageError("vector width " + std::to_string(vector_bytes) + " B is narrower than one " +
                     std::string(dtype_name(t)) + " element");

  const auto width = static_cast<size_t>(vector_bytes);
  const void* arrays_abc[3] = {arrays.a, arrays.b, arrays.c};
  for (int which = 0; which < 3; ++which) {
    if (!op_uses(op, which)) continue;
    GCB_CHECK(arrays_abc[which] != nullptr, "STREAM op needs an array that is null");
    GCB_CHECK(is_aligned(arrays_abc[which], width),
              "STREAM array is not aligned to the vector width");
  }
  GCB_CHECK(!is_reduction(op) || sum_out != nullptr, "dot and read need sum_out");

  switch (t) {
    case DType::f64: launch_stream_typed<double>(op, arrays, vector_bytes, sum_out, stream); break;
    case DType::f32: launch_stream_typed<float>(op, arrays, vector_bytes, sum_out, stream); break;
    default: launch_stream_typed<__nv_bfloat16>(op, arrays, vector_bytes, sum_out, stream); break;
  }
}

void gpu_sm_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  GCB_CHECK(dst != nullptr && src != nullptr, "gpu_sm_copy needs both pointers");
  const bool vec16 = is_aligned(dst, sizeof(uint4)) && is_aligned(src, sizeof(uint4));
  const unsigned grid = grid_for(vec16 ? ceil_div(bytes, sizeof(uint4)) : bytes);
  sm_copy_kernel<<<grid, kBlock, 0, stream>>>(static_cast<unsigned char*>(dst),
                                              static_cast<const unsigned char*>(src), bytes,
                                              vec16);
  CUDA_CHECK(cudaGetLastError());
}

void gpu_chase_build(void* buffer, size_t count, size_t stride_bytes, uint64_t seed) {
  GCB_CHECK(buffer != nullptr && count > 0, "pointer chase needs a buffer and at least one slot");
  GCB_CHECK(stride_bytes >= sizeof(uint64_t) && stride_bytes % sizeof(uint64_t) == 0,
            "pointer-chase stride must be a positive multiple of 8 bytes");
  GCB_CHECK(is_aligned(buffer, sizeof(uint64_t)), "pointer-chase buffer must be 8-byte aligned");
  GCB_CHECK(count <= SIZE_MAX / stride_bytes, "pointer-chase buffer size overflows");

  // Sattolo's algorithm: a uniformly random permutation that is one single cycle, so the
  // chase visits every slot before it repeats (no short loop that would stay in cache).
  std::vector<size_t> next(count);
  for (size_t i = 0; i < count; ++i) next[i] = i;
  std::mt19937_64 rng(seed);
  for (size_t i = count - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }

  std::vector<unsigned char> host(count * stride_bytes, 0);
  const auto base = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(buffer));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t address = base + static_cast<uint64_t>(next[i]) * stride_bytes;
    std::memcpy(host.data() + i * stride_bytes, &address, sizeof(address));
  }
  CUDA_CHECK(cudaMemcpy(buffer, host.data(), host.size(), cudaMemcpyHostToDevice));
  // A pageable-source cudaMemcpy may return before the DMA lands; the contract is "blocking",
  // so a chase launched on a non-blocking stream must see the finished chain.
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

void gpu_chase_launch(const void* buffer, uint64_t steps, void** sink, long long* cycles,
                      cudaStream_t stream) {
  GCB_CHECK(buffer != nullptr && sink != nullptr && cycles != nullptr,
            "pointer chase needs buffer, sink and cycles");
  GCB_CHECK(is_aligned(buffer, sizeof(uint64_t)), "pointer-chase buffer must be 8-byte aligned");
  // Latency, not bandwidth: one thread, so no other load overlaps the chain.
  chase_kernel<<<1, 1, 0, stream>>>(buffer, steps, sink, cycles);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gcb::kernels
