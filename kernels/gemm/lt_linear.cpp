// The cuBLASLt plan of the training backend's GEMM (lt_linear.hpp); plain C++.
#include "kernels/gemm/lt_linear.hpp"

#include <fmt/format.h>

#include <tuple>

#include "core/error.hpp"

namespace gcb::kernels {

bool LinearGemm::operator<(const LinearGemm& o) const {
  return std::tie(trans_a, trans_b, m, n, k, type, bias, accumulate, gelu) <
         std::tie(o.trans_a, o.trans_b, o.m, o.n, o.k, o.type, o.bias, o.accumulate, o.gelu);
}

std::string describe(const LinearGemm& g) {
  const char* gelu = g.gelu == LinearGelu::forward ? " gelu" : g.gelu == LinearGelu::backward ? " dgelu" : "";
  return fmt::format("{}{} m={} n={} k={} {}{}{}{}", g.trans_a ? 't' : 'n', g.trans_b ? 't' : 'n', g.m, g.n, g.k,
                     dtype_name(g.type), g.bias ? " +bias" : "", g.accumulate ? " +=C" : "", gelu);
}

LinearEpilogue make_lt_linear_epilogue(const LinearGemm& g) {
  if (g.gelu == LinearGelu::none) return {g.bias ? LtEpilogue::bias : LtEpilogue::none, 0};
  // The engine asks for these GEMMs (models/backend/cuda/cuda_backend.cpp), no user types them: invariants.
  GCB_CHECK(!g.accumulate, "a GELU epilogue with accumulation (β = 1): " + describe(g));
  GCB_CHECK(g.gelu != LinearGelu::backward || !g.bias, "a GELU backward epilogue with a bias: " + describe(g));
  GCB_CHECK(g.n % 8 == 0, "a GELU epilogue needs N divisible by 8 (its aux leading dimension): " + describe(g));
  if (g.gelu == LinearGelu::backward) return {LtEpilogue::dgelu, g.n};
  return {g.bias ? LtEpilogue::gelu_aux_bias : LtEpilogue::gelu_aux, g.n};
}

LtGemmPlan make_lt_linear_plan(const LinearGemm& g) {
  GCB_CHECK(g.m > 0 && g.n > 0 && g.k > 0, "GEMM dims must be positive: " + describe(g));
  GCB_CHECK(g.type == DType::f32 || g.type == DType::bf16,
            fmt::format("the training GEMM takes fp32 or bf16, not {}", dtype_name(g.type)));
  LtGemmPlan p;
  p.lt_m = g.n;
  p.lt_n = g.m;
  p.lt_k = g.k;
  p.trans_a = g.trans_b;
  p.trans_b = g.trans_a;
  p.a = g.trans_b ? LtLayout{g.type, g.k, g.n, g.k} : LtLayout{g.type, g.n, g.k, g.n};
  p.b = g.trans_a ? LtLayout{g.type, g.m, g.k, g.m} : LtLayout{g.type, g.k, g.m, g.k};
  p.c = LtLayout{g.type, g.n, g.m, g.n};
  p.d = p.c;
  p.compute = GemmCompute::f32;
  p.scale_type = DType::f32;
  return p;
}

bool LinearAlignment::operator<(const LinearAlignment& o) const { return std::tie(a, b, c) < std::tie(o.a, o.b, o.c); }

uint16_t lt_pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address == 0) return 256;  // absent: no constraint
  uint16_t align = 256;
  while (align > 1 && address % align != 0) align = static_cast<uint16_t>(align / 2);
  return align;
}

LinearAlignment lt_linear_alignment(const void* lt_a, const void* lt_b, const void* c) {
  return {lt_pointer_alignment(lt_a), lt_pointer_alignment(lt_b), lt_pointer_alignment(c)};
}

}  // namespace gcb::kernels
