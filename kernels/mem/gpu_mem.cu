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

#include "core/ceil_div.hpp"
#include "core/error.hpp"
#include "kernels/mem/gpu_mem.hpp"

namespace gcb::kernels {

namespace {

constexpr int kBlock = 256;
constexpr int kWarp = 32;
// 8 × 256 threads = 2048, the thread limit of one SM on sm_80/sm_90: more blocks only add
// grid-stride overhead, fewer leave latency hiding on the table.
constexpr size_t kMaxBlocksPerSm = 8;

bool is_aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

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
  if (cached[index] == 0) CUDA_CHECK(cudaDeviceGetAttribute(&cached[index], cudaDevAttrMultiProcessorCount, device));
  return static_cast<size_t>(cached[index]);
}

// Grid-stride grids are a whole number of waves (a multiple of the SM count) so every SM gets
// the same share; small inputs use one block per SM.
unsigned grid_for(size_t work_items) {
  const size_t sms = sm_count_of_current_device();
  const size_t blocks_per_sm =
      std::clamp<size_t>(ceil_div(ceil_div(work_items, static_cast<size_t>(kBlock)), sms), 1, kMaxBlocksPerSm);
  return static_cast<unsigned>(sms * blocks_per_sm);
}

__device__ size_t grid_thread_index() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__device__ size_t grid_thread_count() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

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

// The raw word of each width, for the streaming-hint intrinsics (__ldcs/__stcs take these).
template <int VB>
struct Word;
template <>
struct Word<4> {
  using type = unsigned int;
};
template <>
struct Word<8> {
  using type = uint2;
};
template <>
struct Word<16> {
  using type = uint4;
};

// One vector by value, in a single load with the "evict first" hint (ld.global.cs): each element
// is touched once per pass over arrays of 4 × L2 or more, so keeping it in L2 only displaces
// the next pass's data. Reading into a local by value is what makes it one vector load: element
// access through a reference to global memory compiles to one scalar load per lane.
template <typename V>
__device__ V load_streaming(const V* p) {
  using W = typename Word<sizeof(V)>::type;
  static_assert(sizeof(W) == sizeof(V));
  const W w = __ldcs(reinterpret_cast<const W*>(p));
  V v;
  memcpy(&v, &w, sizeof(V));
  return v;
}

template <typename V>
__device__ void store_streaming(V* p, const V& v) {
  using W = typename Word<sizeof(V)>::type;
  W w;
  memcpy(&w, &v, sizeof(V));
  __stcs(reinterpret_cast<W*>(p), w);
}

// Independent vectors each thread has in flight per step: every load of a step is issued before
// any result is needed, so one thread covers kInFlight memory latencies at once (Little's law:
// HBM3 needs tens of KiB in flight per SM, more than one 16-byte access per resident thread).
constexpr int kInFlight = 4;

template <typename V>
struct InFlight {
  V v[kInFlight];
};

// Vectors v, v + stride, …, v + (kInFlight − 1)·stride of p.
template <typename V>
__device__ InFlight<V> load_in_flight(const V* __restrict__ p, size_t v, size_t stride) {
  InFlight<V> r;
#pragma unroll
  for (int u = 0; u < kInFlight; ++u) r.v[u] = load_streaming(p + v + static_cast<size_t>(u) * stride);
  return r;
}

// Applies f lane by lane to vectors held by value.
template <typename V, typename F, typename... Vs>
__device__ V lanewise(F f, const Vs&... in) {
  V out;
#pragma unroll
  for (int k = 0; k < V::kLanes; ++k) out.lane[k] = f(in.lane[k]...);
  return out;
}

// out[i] = f(in[i]...) over n elements: whole vectors kInFlight at a time (all loads of a step are
// function arguments, so they are issued before the first store), the leftover vectors one at a
// time, then the n % lanes tail one element at a time (the tail starts on a vector boundary, so
// scalar accesses stay aligned).
template <typename T, int VB, typename F, typename... In>
__device__ void map_vectors(size_t n, T* __restrict__ out, F f, const In* __restrict__... in) {
  using V = Vec<T, VB>;
  const size_t vectors = n / V::kLanes;
  const size_t stride = grid_thread_count();
  auto* out_v = reinterpret_cast<V*>(out);
  size_t v = grid_thread_index();
  for (; v + (kInFlight - 1) * stride < vectors; v += kInFlight * stride) {
    [&](const auto&... x) {
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        store_streaming(out_v + v + static_cast<size_t>(u) * stride, lanewise<V>(f, x.v[u]...));
    }(load_in_flight(reinterpret_cast<const V*>(in), v, stride)...);
  }
  for (; v < vectors; v += stride)
    store_streaming(out_v + v, lanewise<V>(f, load_streaming(reinterpret_cast<const V*>(in) + v)...));
  for (size_t i = vectors * V::kLanes + grid_thread_index(); i < n; i += stride) out[i] = f(in[i]...);
}

// Σ f(in[i]...) over this thread's share, in fp64, with the same access pattern as map_vectors.
template <typename T, int VB, typename F, typename... In>
__device__ double sum_vectors(size_t n, F f, const In* __restrict__... in) {
  using V = Vec<T, VB>;
  const size_t vectors = n / V::kLanes;
  const size_t stride = grid_thread_count();
  const auto lanes_sum = [&](const auto&... vecs) {
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < V::kLanes; ++k) s += f(vecs.lane[k]...);
    return s;
  };
  double partial = 0.0;
  size_t v = grid_thread_index();
  for (; v + (kInFlight - 1) * stride < vectors; v += kInFlight * stride) {
    [&](const auto&... x) {
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) partial += lanes_sum(x.v[u]...);
    }(load_in_flight(reinterpret_cast<const V*>(in), v, stride)...);
  }
  for (; v < vectors; v += stride) partial += lanes_sum(load_streaming(reinterpret_cast<const V*>(in) + v)...);
  for (size_t i = vectors * V::kLanes + grid_thread_index(); i < n; i += stride) partial += f(in[i]...);
  return partial;
}

__device__ double warp_sum(double x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x += __shfl_down_sync(0xFFFFFFFFu, x, offset);
  return x;
}

// Block-wide sum, valid in thread 0. Assumes blockDim.x == kBlock. Callers separate two calls
// with a __syncthreads() (the shared slots are reused).
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

// Layout of the dot/read scratch (gpu_stream_sum_bytes): the sum, the count of blocks done, one
// partial per block.
struct SumScratch {
  double* result;
  unsigned int* blocks_done;
  double* partials;
};
constexpr size_t kSumPartialsOffset = 16;
__host__ __device__ SumScratch sum_scratch(void* base) {
  auto* bytes = static_cast<unsigned char*>(base);
  return {reinterpret_cast<double*>(bytes), reinterpret_cast<unsigned int*>(bytes + sizeof(double)),
          reinterpret_cast<double*>(bytes + kSumPartialsOffset)};
}

template <typename T>
__global__ void __launch_bounds__(kBlock) stream_init_kernel(T* a, T* b, T* c, size_t n, uint64_t seed) {
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
// build) small. The three arrays never overlap (three allocations), hence __restrict__.
template <typename T, int VB>
__global__ void __launch_bounds__(kBlock)
    stream_elementwise_kernel(StreamOp op, T* __restrict__ a, T* __restrict__ b, T* __restrict__ c, size_t n) {
  using A = Arith<T>;
  using C = typename A::Compute;
  const auto s = static_cast<C>(kStreamScalar);
  switch (op) {
    case StreamOp::copy:  // c = a, bit for bit: no widening, so bf16 copies stay exact copies
      map_vectors<T, VB>(
          n, c, [](T x) { return x; }, static_cast<const T*>(a));
      break;
    case StreamOp::scale:  // b = s·c
      map_vectors<T, VB>(
          n, b, [s](T x) { return A::narrow(s * A::widen(x)); }, static_cast<const T*>(c));
      break;
    case StreamOp::add:  // c = a + b
      map_vectors<T, VB>(
          n, c, [](T x, T y) { return A::narrow(A::widen(x) + A::widen(y)); }, static_cast<const T*>(a),
          static_cast<const T*>(b));
      break;
    case StreamOp::triad:  // a = b + s·c as fma(s, c, b): one rounding, like std::fma on the host
      map_vectors<T, VB>(
          n, a, [s](T y, T x) { return A::narrow(A::fma(s, A::widen(x), A::widen(y))); }, static_cast<const T*>(b),
          static_cast<const T*>(c));
      break;
    case StreamOp::write:  // a = s
      map_vectors<T, VB>(n, a, [s]() { return A::narrow(s); });
      break;
    case StreamOp::dot:
    case StreamOp::read: break;  // stream_reduce_kernel
  }
}

// dot (Σ a·b) and read (Σ a), accumulated in fp64. Each block writes its partial; the last block
// to finish (a counter in the scratch) adds the partials in block order, writes the sum and
// resets the counter, so no launch needs a memset first and the result does not depend on which
// block finishes when (the CUDA samples' threadFenceReduction scheme).
template <typename T, int VB>
__global__ void __launch_bounds__(kBlock)
    stream_reduce_kernel(StreamOp op, const T* __restrict__ a, const T* __restrict__ b, size_t n, void* scratch) {
  using A = Arith<T>;
  double partial = 0.0;
  if (op == StreamOp::dot) {
    partial = sum_vectors<T, VB>(
        n, [](T x, T y) { return static_cast<double>(A::widen(x)) * static_cast<double>(A::widen(y)); }, a, b);
  } else {
    partial = sum_vectors<T, VB>(
        n, [](T x) { return static_cast<double>(A::widen(x)); }, a);
  }
  const SumScratch out = sum_scratch(scratch);
  const double block_total = block_sum(partial);
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    out.partials[blockIdx.x] = block_total;
    __threadfence();  // the partial is visible device-wide before the counter says so
    last_block = atomicAdd(out.blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  double s = 0.0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += __ldcg(out.partials + i);  // L2, not a stale L1
  s = block_sum(s);
  if (threadIdx.x == 0) {
    *out.result = s;
    *out.blocks_done = 0;  // ready for the next pass
  }
}

// A dtype comes from a user flag, so an unsupported one is a usage error, not a fault.
void require_stream_dtype(DType t) {
  if (t != DType::f64 && t != DType::f32 && t != DType::bf16)
    throw UsageError("GPU STREAM supports fp64, fp32 and bf16, not " + std::string(dtype_name(t)));
}

bool is_reduction(StreamOp op) { return stream_op_info(op).reduction(); }

// Which of a (0), b (1), c (2) the op touches, read or written.
bool op_uses(StreamOp op, int which) { return stream_op_info(op).uses(which); }

template <typename T, int VB>
void launch_stream_width(StreamOp op, const GpuStreamArrays& arrays, void* sum_scratch, cudaStream_t stream) {
  auto* a = static_cast<T*>(arrays.a);
  auto* b = static_cast<T*>(arrays.b);
  auto* c = static_cast<T*>(arrays.c);
  const unsigned grid = grid_for(ceil_div(arrays.n, static_cast<size_t>(Vec<T, VB>::kLanes)));
  if (is_reduction(op)) {
    stream_reduce_kernel<T, VB><<<grid, kBlock, 0, stream>>>(op, a, b, arrays.n, sum_scratch);
  } else {
    stream_elementwise_kernel<T, VB><<<grid, kBlock, 0, stream>>>(op, a, b, c, arrays.n);
  }
  CUDA_CHECK(cudaGetLastError());
}

// Only widths that hold at least one element are instantiated: 2 for fp64, 3 for fp32 and bf16.
template <typename T>
void launch_stream_typed(StreamOp op, const GpuStreamArrays& arrays, int vector_bytes, void* sum_scratch,
                         cudaStream_t stream) {
  switch (vector_bytes) {
    case 4:
      if constexpr (sizeof(T) <= 4) launch_stream_width<T, 4>(op, arrays, sum_scratch, stream);
      return;
    case 8: launch_stream_width<T, 8>(op, arrays, sum_scratch, stream); return;
    case 16: launch_stream_width<T, 16>(op, arrays, sum_scratch, stream); return;
    default: return;  // rejected by the caller
  }
}

// ---- SM copy and pointer chase ------------------------------------------------------------

// vec16: both pointers 16-byte aligned, so the body moves 16-byte vectors kInFlight at a time (a
// host-mapped source over PCIe needs even more bytes in flight than HBM) and only the last
// bytes % 16 go byte by byte; otherwise every byte does (the pointers can't share a vector
// boundary in general).
__global__ void __launch_bounds__(kBlock)
    sm_copy_kernel(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, size_t bytes, bool vec16) {
  if (vec16) {
    map_vectors<unsigned char, 16>(
        bytes, dst, [](unsigned char x) { return x; }, src);
    return;
  }
  for (size_t i = grid_thread_index(); i < bytes; i += grid_thread_count()) dst[i] = src[i];
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
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<double*>(arrays.a), static_cast<double*>(arrays.b),
                                                      static_cast<double*>(arrays.c), arrays.n, seed);
      break;
    case DType::f32:
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<float*>(arrays.a), static_cast<float*>(arrays.b),
                                                      static_cast<float*>(arrays.c), arrays.n, seed);
      break;
    default:
      stream_init_kernel<<<grid, kBlock, 0, stream>>>(static_cast<__nv_bfloat16*>(arrays.a),
                                                      static_cast<__nv_bfloat16*>(arrays.b),
                                                      static_cast<__nv_bfloat16*>(arrays.c), arrays.n, seed);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

size_t gpu_stream_sum_bytes(int device) {
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // grid_for never launches more than kMaxBlocksPerSm blocks per SM: one partial each.
  return kSumPartialsOffset + static_cast<size_t>(sms) * kMaxBlocksPerSm * sizeof(double);
}

double gpu_stream_sum_result(const void* host_copy_of_scratch) {
  double r = 0;
  std::memcpy(&r, host_copy_of_scratch, sizeof(r));
  return r;
}

void gpu_stream_launch(StreamOp op, const GpuStreamArrays& arrays, int vector_bytes, void* sum_scratch,
                       cudaStream_t stream) {
  // User-facing parameters first (UsageError, exit 2), before any CUDA call.
  const DType t = arrays.dtype;
  require_stream_dtype(t);
  if (vector_bytes != 4 && vector_bytes != 8 && vector_bytes != 16)
    throw UsageError("vector width must be 4, 8 or 16 bytes, not " + std::to_string(vector_bytes));
  if (static_cast<size_t>(vector_bytes) < dtype_size(t))
    throw UsageError("vector width " + std::to_string(vector_bytes) + " B is narrower than one " +
                     std::string(dtype_name(t)) + " element");

  const auto width = static_cast<size_t>(vector_bytes);
  const void* arrays_abc[3] = {arrays.a, arrays.b, arrays.c};
  for (int which = 0; which < 3; ++which) {
    if (!op_uses(op, which)) continue;
    GCB_CHECK(arrays_abc[which] != nullptr, "STREAM op needs an array that is null");
    GCB_CHECK(is_aligned(arrays_abc[which], width), "STREAM array is not aligned to the vector width");
  }
  GCB_CHECK(!is_reduction(op) || (sum_scratch != nullptr && is_aligned(sum_scratch, sizeof(double))),
            "dot and read need their sum scratch (gpu_stream_sum_bytes, zeroed once)");

  switch (t) {
    case DType::f64: launch_stream_typed<double>(op, arrays, vector_bytes, sum_scratch, stream); break;
    case DType::f32: launch_stream_typed<float>(op, arrays, vector_bytes, sum_scratch, stream); break;
    default: launch_stream_typed<__nv_bfloat16>(op, arrays, vector_bytes, sum_scratch, stream); break;
  }
}

void gpu_sm_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  GCB_CHECK(dst != nullptr && src != nullptr, "gpu_sm_copy needs both pointers");
  const bool vec16 = is_aligned(dst, sizeof(uint4)) && is_aligned(src, sizeof(uint4));
  const unsigned grid = grid_for(vec16 ? ceil_div(bytes, sizeof(uint4)) : bytes);
  sm_copy_kernel<<<grid, kBlock, 0, stream>>>(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src),
                                              bytes, vec16);
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

void gpu_chase_launch(const void* buffer, uint64_t steps, void** sink, long long* cycles, cudaStream_t stream) {
  GCB_CHECK(buffer != nullptr && sink != nullptr && cycles != nullptr, "pointer chase needs buffer, sink and cycles");
  GCB_CHECK(is_aligned(buffer, sizeof(uint64_t)), "pointer-chase buffer must be 8-byte aligned");
  // Latency, not bandwidth: one thread, so no other load overlaps the chain.
  chase_kernel<<<1, 1, 0, stream>>>(buffer, steps, sink, cycles);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gcb::kernels
