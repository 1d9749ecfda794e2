// The host STREAM kernels and pointer chase of host_mem.hpp on OpenMP threads (fp64, fp32, bf16), first-touch placed by
// the same static partition, and the verification the GPU kernels are checked with.
#include "kernels/mem/host_mem.hpp"

#include <pthread.h>

#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <numeric>
#include <random>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/error.hpp"

namespace gcb::kernels {

namespace {

// Element access for the three stream dtypes; bf16 is stored as uint16_t bits.
struct Bf16 {
  uint16_t bits;
};
inline double to_double(double x) { return x; }
inline double to_double(float x) { return x; }
inline double to_double(Bf16 x) { return bf16_to_float(x.bits); }
template <typename T>
T from_float(double x);
template <>
double from_float<double>(double x) {
  return x;
}
template <>
float from_float<float>(double x) {
  return static_cast<float>(x);
}
template <>
Bf16 from_float<Bf16>(double x) {
  return Bf16{float_to_bf16(static_cast<float>(x))};
}

// The arithmetic type: the element type itself, fp32 for bf16.
template <typename T>
using Arith = std::conditional_t<std::is_same_v<T, Bf16>, float, T>;
inline float arith(Bf16 x) { return bf16_to_float(x.bits); }
inline double arith(double x) { return x; }
inline float arith(float x) { return x; }
inline Bf16 store(float x, Bf16*) { return Bf16{float_to_bf16(x)}; }
inline double store(double x, double*) { return x; }
inline float store(float x, float*) { return x; }

template <typename T>
void init(T* __restrict a, T* __restrict b, T* __restrict c, size_t n, uint64_t seed) {
  const auto count = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < count; ++i) {
    const auto u = static_cast<uint64_t>(i);
    a[i] = from_float<T>(stream_input(seed, 0, u));
    b[i] = from_float<T>(stream_input(seed, 1, u));
    c[i] = from_float<T>(stream_input(seed, 2, u));
  }
}

template <typename T>
double run(StreamOp op, T* __restrict a, T* __restrict b, T* __restrict c, size_t n) {
  using A = Arith<T>;
  const A s = static_cast<A>(kStreamScalar);
  const auto count = static_cast<long>(n);
  double sum = 0;
  // firstprivate below: each thread gets its own copy of the pointers, so the compiler can hoist
  // them out of the loop and vectorize it (with shared pointers it reloads them every iteration,
  // since a store through a[i] might alias the shared copy) — as the classic STREAM loop does.
  switch (op) {
    case StreamOp::copy:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count; ++i) c[i] = a[i];
      break;
    case StreamOp::scale:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count; ++i) b[i] = store(s * arith(c[i]), b);
      break;
    case StreamOp::add:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count; ++i) c[i] = store(arith(a[i]) + arith(b[i]), c);
      break;
    case StreamOp::triad:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count; ++i) a[i] = store(arith(b[i]) + s * arith(c[i]), a);
#ifdef GCB_GATE_SLOW_TRIAD
        // The injected slowdown of scripts/ci/gate-bench.sh: the first 30 % of the triad once more
        // (the same values, 30 % more traffic).
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count * 3 / 10; ++i) a[i] = store(arith(b[i]) + s * arith(c[i]), a);
#endif
      break;
    case StreamOp::dot:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s) reduction(+ : sum)
      for (long i = 0; i < count; ++i) sum += static_cast<double>(arith(a[i])) * static_cast<double>(arith(b[i]));
      break;
    case StreamOp::read:
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s) reduction(+ : sum)
      for (long i = 0; i < count; ++i) sum += static_cast<double>(arith(a[i]));
      break;
    case StreamOp::write: {
      const T value = store(s, a);
#pragma omp parallel for schedule(static) firstprivate(a, b, c, s)
      for (long i = 0; i < count; ++i) a[i] = value;
      break;
    }
  }
  return sum;
}

template <typename F>
auto dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f64: return f(double{});
    case DType::f32: return f(float{});
    case DType::bf16: return f(Bf16{});
    default: throw UsageError(fmt::format("stream kernels support fp64, fp32 and bf16, not {}", dtype_name(t)));
  }
}

// Rounds a value computed in the arithmetic type to the storage type, as the kernels do.
double round_to(DType t, double x) {
  switch (t) {
    case DType::f64: return x;
    case DType::f32: return static_cast<float>(x);
    case DType::bf16: return bf16_to_float(float_to_bf16(static_cast<float>(x)));
    default: return x;
  }
}

}  // namespace

int host_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_host_threads(int n) {
  GCB_CHECK(n >= 1, "thread count must be ≥ 1");
#if defined(_OPENMP)
  omp_set_num_threads(n);
#endif
  require_host_threads(n);
}

void require_host_threads(int n) {
  std::vector<pthread_t> started;
  int err = 0;
  for (int i = 1; i < n && err == 0; ++i) {
    pthread_t t{};
    err = pthread_create(
        &t, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
    if (err == 0) started.push_back(t);
  }
  for (pthread_t t : started) pthread_join(t, nullptr);
  if (err != 0)
    throw Fault(
        fmt::format("cannot start {} host threads: {} (ulimit -u or the cgroup's pids.max; --threads or "
                    "OMP_NUM_THREADS sets fewer)",
                    n, std::strerror(err)));
}

void host_stream_init(const HostStreamArrays& arr, uint64_t seed) {
  dispatch(arr.dtype, [&](auto tag) {
    using T = decltype(tag);
    init(static_cast<T*>(arr.a), static_cast<T*>(arr.b), static_cast<T*>(arr.c), arr.n, seed);
    return 0;
  });
}

double host_stream_run(StreamOp op, const HostStreamArrays& arr) {
  return dispatch(arr.dtype, [&](auto tag) {
    using T = decltype(tag);
    return run(op, static_cast<T*>(arr.a), static_cast<T*>(arr.b), static_cast<T*>(arr.c), arr.n);
  });
}

int stream_output_array(StreamOp op) { return stream_op_info(op).output(); }

double stream_expected(StreamOp op, DType t, uint64_t seed, size_t i) {
  const StreamOpInfo& info = stream_op_info(op);
  if (info.reduction()) return 0;
  // Inputs are exact in every stream dtype (stream_ops.hpp), so no input rounding is needed.
  const double a = stream_input(seed, 0, i), b = stream_input(seed, 1, i), c = stream_input(seed, 2, i);
  // Arithmetic happens in fp32 for bf16 and fp32, fp64 for fp64; every op here is one rounding
  // (none for copy and write, whose values are exact in every type).
  const double exact = info.reference(a, b, c, kStreamScalar);
  return round_to(t, t == DType::f64 ? exact : static_cast<double>(static_cast<float>(exact)));
}

ExpectedSum stream_expected_sum(StreamOp op, DType, uint64_t seed, size_t n) {
  const StreamOpInfo& info = stream_op_info(op);
  long double sum = 0, abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double term =
        info.reference(stream_input(seed, 0, i), stream_input(seed, 1, i), stream_input(seed, 2, i), kStreamScalar);
    sum += term;
    abs_sum += std::fabs(term);
  }
  return {static_cast<double>(sum), static_cast<double>(n) * 0x1p-53 * static_cast<double>(abs_sum)};
}

std::string verify_stream_output(StreamOp op, DType t, uint64_t seed, const void* output, size_t n) {
  GCB_CHECK(stream_output_array(op) >= 0, "dot and read have no output array");
  size_t wrong = 0;
  std::string first;
  for (size_t i = 0; i < n; ++i) {
    const double got = load_as(t, output, i);
    const double want = stream_expected(op, t, seed, i);
    if (got != want) {  // exact: both sides perform the same IEEE operations
      if (wrong < 3) first += fmt::format("{}[{}] = {} (expected {}) ", "abc"[stream_output_array(op)], i, got, want);
      ++wrong;
    }
  }
  if (wrong == 0) return {};
  return fmt::format("{} of {} elements wrong: {}", wrong, n, first);
}

void host_chase_build(void* buffer, size_t count, size_t stride, uint64_t seed) {
  GCB_CHECK(count >= 2 && stride >= sizeof(void*), "pointer chase needs ≥ 2 slots of ≥ 8 bytes");
  std::vector<size_t> next(count);
  std::iota(next.begin(), next.end(), size_t{0});
  // Sattolo's algorithm: a uniformly random permutation that is a single cycle.
  std::mt19937_64 rng(seed);
  for (size_t i = count - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }
  auto* base = static_cast<char*>(buffer);
  for (size_t i = 0; i < count; ++i) *reinterpret_cast<void**>(base + i * stride) = base + next[i] * stride;
}

void* host_chase(void* start, uint64_t steps) {
  void* p = start;
  for (uint64_t i = 0; i < steps; ++i) p = *static_cast<void* volatile*>(p);
  return p;
}

}  // namespace gcb::kernels
