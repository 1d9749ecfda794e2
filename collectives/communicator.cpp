// Reduction-op names and the host-side element-wise reduction shared by the threads and MPI
// backends. Both reduce contributions in rank order with these functions, which is what makes
// their results bitwise identical to each other and across reruns.
#include "collectives/communicator.hpp"

#include <algorithm>
#include <array>
#include <type_traits>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb {

namespace {

struct ReduceOpInfo {
  ReduceOp op;
  std::string_view name;
};

constexpr std::array<ReduceOpInfo, 5> kReduceOps{{
    {ReduceOp::sum, "sum"},
    {ReduceOp::prod, "prod"},
    {ReduceOp::min, "min"},
    {ReduceOp::max, "max"},
    {ReduceOp::avg, "avg"},
}};

// Integer add/mul wrap modulo 2^N like the GPU does; going through unsigned keeps that defined.
inline double add(double a, double b) { return a + b; }
inline float add(float a, float b) { return a + b; }
inline int32_t add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int8_t add(int8_t a, int8_t b) { return static_cast<int8_t>(a + b); }
inline double mul(double a, double b) { return a * b; }
inline float mul(float a, float b) { return a * b; }
inline int32_t mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
inline int8_t mul(int8_t a, int8_t b) { return static_cast<int8_t>(a * b); }

template <class T, class F>
void combine_each(void* acc, const void* in, size_t count, F f) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(in);
  for (size_t i = 0; i < count; ++i) a[i] = f(a[i], b[i]);
}

// The op is dispatched once per call, not per element, so each loop is a plain vectorisable one.
template <class T>
void reduce_native(ReduceOp op, void* acc, const void* in, size_t count) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return combine_each<T>(acc, in, count, [](T a, T b) { return add(a, b); });
    case ReduceOp::prod: return combine_each<T>(acc, in, count, [](T a, T b) { return mul(a, b); });
    case ReduceOp::min: return combine_each<T>(acc, in, count, [](T a, T b) { return std::min(a, b); });
    case ReduceOp::max: return combine_each<T>(acc, in, count, [](T a, T b) { return std::max(a, b); });
  }
}

// fp16/bf16: widen both operands to fp32, combine, round back (one rounding per step).
template <uint16_t (*Narrow)(float), float (*Widen)(uint16_t)>
void reduce_16bit(ReduceOp op, void* acc, const void* in, size_t count) {
  auto lift = [](auto f) { return [f](uint16_t a, uint16_t b) { return Narrow(f(Widen(a), Widen(b))); }; };
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return combine_each<uint16_t>(acc, in, count, lift([](float a, float b) { return a + b; }));
    case ReduceOp::prod: return combine_each<uint16_t>(acc, in, count, lift([](float a, float b) { return a * b; }));
    case ReduceOp::min:
      return combine_each<uint16_t>(acc, in, count, lift([](float a, float b) { return std::min(a, b); }));
    case ReduceOp::max:
      return combine_each<uint16_t>(acc, in, count, lift([](float a, float b) { return std::max(a, b); }));
  }
}

template <class T>
void divide_native(void* acc, size_t count, int nranks) {
  T* a = static_cast<T*>(acc);
  if constexpr (std::is_integral_v<T>) {
    for (size_t i = 0; i < count; ++i) a[i] = static_cast<T>(a[i] / nranks);  // int8: in int
  } else {
    const T n = static_cast<T>(nranks);
    for (size_t i = 0; i < count; ++i) a[i] = a[i] / n;
  }
}

template <uint16_t (*Narrow)(float), float (*Widen)(uint16_t)>
void divide_16bit(void* acc, size_t count, int nranks) {
  auto* a = static_cast<uint16_t*>(acc);
  const auto n = static_cast<float>(nranks);
  for (size_t i = 0; i < count; ++i) a[i] = Narrow(Widen(a[i]) / n);
}

[[noreturn]] void unsupported(DType t) {
  throw UsageError(fmt::format(
      "reductions of {} are not supported by the host backends (fp64, fp32, fp16, bf16, int32, int8)", dtype_name(t)));
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  for (const auto& i : kReduceOps)
    if (i.op == op) return i.name;
  return "unknown";
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (const auto& i : kReduceOps)
    if (i.name == name) return i.op;
  return std::nullopt;
}

std::string_view reduction_order_name(ReductionOrder o) {
  return o == ReductionOrder::library ? "library" : "rank_ordered";
}

void reduce_into(DType t, ReduceOp op, void* acc, const void* in, size_t count) {
  switch (t) {
    case DType::f64: return reduce_native<double>(op, acc, in, count);
    case DType::f32: return reduce_native<float>(op, acc, in, count);
    case DType::i32: return reduce_native<int32_t>(op, acc, in, count);
    case DType::i8: return reduce_native<int8_t>(op, acc, in, count);
    case DType::f16: return reduce_16bit<float_to_fp16, fp16_to_float>(op, acc, in, count);
    case DType::bf16: return reduce_16bit<float_to_bf16, bf16_to_float>(op, acc, in, count);
    default: unsupported(t);
  }
}

void finish_reduction(DType t, ReduceOp op, void* acc, size_t count, int nranks) {
  if (op != ReduceOp::avg) return;
  GCB_CHECK(nranks > 0, "avg over zero ranks");
  switch (t) {
    case DType::f64: return divide_native<double>(acc, count, nranks);
    case DType::f32: return divide_native<float>(acc, count, nranks);
    case DType::i32: return divide_native<int32_t>(acc, count, nranks);
    case DType::i8: return divide_native<int8_t>(acc, count, nranks);
    case DType::f16: return divide_16bit<float_to_fp16, fp16_to_float>(acc, count, nranks);
    case DType::bf16: return divide_16bit<float_to_bf16, bf16_to_float>(acc, count, nranks);
    default: unsupported(t);
  }
}

BoundCall Communicator::bind(const CollCall& call) {
  const CollCall c = call;
  switch (c.op) {
    case CollOp::all_reduce: return bound_loop([c, this] { all_reduce(c.send, c.recv, c.count, c.dtype, c.redop); });
    case CollOp::all_gather: return bound_loop([c, this] { all_gather(c.send, c.recv, c.count, c.dtype); });
    case CollOp::reduce_scatter:
      return bound_loop([c, this] { reduce_scatter(c.send, c.recv, c.count, c.dtype, c.redop); });
    case CollOp::broadcast: return bound_loop([c, this] { broadcast(c.send, c.recv, c.count, c.dtype, c.root); });
    case CollOp::reduce: return bound_loop([c, this] { reduce(c.send, c.recv, c.count, c.dtype, c.redop, c.root); });
    case CollOp::alltoall: return bound_loop([c, this] { all_to_all(c.send, c.recv, c.count, c.dtype); });
    default: break;
  }
  // CollCase::bind (verifiable_case.cpp) routes sendrecv, gather and scatter through send/recv itself.
  GCB_CHECK(false, fmt::format("{} is not one call of a communicator", coll_op_name(c.op)));
  return {};
}

}  // namespace gcb
