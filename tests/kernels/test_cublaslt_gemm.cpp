// cuBLASLt GEMM on a device (label gpu; skips without one): every dtype on shapes including
// non-multiples of 16 against the FP64 reference, poisoned outputs, and an autotuned algorithm
// whose result is also correct. Compiles here; unvalidated until run on a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "core/buffer.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/gemm/cublaslt_gemm.hpp"
#include "kernels/gemm/fp8_scaling.hpp"
#include "kernels/gemm/gemm_check.hpp"

namespace gcb::kernels {
namespace {

class LtGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no GPU: " << gpu::runtime().unavailable_reason;
    stream_ = gpu::create_stream(0);
    ctx_ = std::make_unique<LtContext>(0);
  }
  void TearDown() override {
    ctx_.reset();
    if (stream_) gpu::destroy_stream(stream_);
  }

  // Runs one GEMM (heuristic #0 or autotuned) and checks it; returns the check.
  GemmCheck run(DType t, const GemmShape& s, bool tune, bool fast_accum = false) {
    const LtGemmPlan plan = make_lt_gemm_plan(s, t, fast_accum);
    const size_t mk = size_t(s.m * s.k), nk = size_t(s.n * s.k), mn = size_t(s.m * s.n);
    std::vector<unsigned char> a(mk * dtype_size(plan.b.type)), b(nk * dtype_size(plan.a.type)),
        d(mn * dtype_size(plan.d.type));
    double sa = 1, sb = 1;
    if (plan.fp8) {
      sa = fp8_scale_from_amax(gemm_input_amax(mk, 1), plan.b.type);
      sb = fp8_scale_from_amax(gemm_input_amax(nk, 2), plan.a.type);
    }
    fill_gemm_input(plan.b.type, a.data(), mk, 1, GemmData::random, sa);
    fill_gemm_input(plan.a.type, b.data(), nk, 2, GemmData::random, sb);
    DeviceBuffer da(0, a.size()), db(0, b.size()), dd(0, d.size()), scales(0, 2 * sizeof(float));
    const float deq[2] = {float(1 / sa), float(1 / sb)};
    gpu::copy_async(da.data(), a.data(), a.size(), gpu::CopyKind::host_to_device, stream_);
    gpu::copy_async(db.data(), b.data(), b.size(), gpu::CopyKind::host_to_device, stream_);
    gpu::copy_async(scales.data(), deq, sizeof(deq), gpu::CopyKind::host_to_device, stream_);
    LtGemmPointers p{da.data(), db.data(), dd.data()};
    if (plan.fp8) {
      p.a_scale = scales.as<float>();
      p.b_scale = scales.as<float>() + 1;
    }
    LtMatmul mm(*ctx_, plan);
    if (tune) {
      const LtAutotune t8 = lt_autotune(mm, p, stream_, 8);
      EXPECT_EQ(t8.candidates.size(), t8.seconds.size());
      EXPECT_EQ(mm.chosen().heuristic_rank, t8.chosen_rank);
    } else {
      mm.use_heuristic(0);
    }
    gpu::memset_async(dd.data(), 0xFF, dd.size(), stream_);  // poison: unwritten entries fail
    mm.run(p, stream_);
    gpu::copy_async(d.data(), dd.data(), d.size(), gpu::CopyKind::device_to_host, stream_);
    gpu::synchronize(stream_);
    const GemmOperandsView v{plan.b.type, plan.a.type, a.data(), b.data(), 1 / sa, 1 / sb, plan.d.type, d.data()};
    return check_gemm(s, v, gemm_samples(s, 256, 9), gemm_error_bound(t, s.k, plan.fast_accum));
  }

  gpu::Stream stream_ = nullptr;
  std::unique_ptr<LtContext> ctx_;
};

// One case's failure, thrown or found by the check, without ending the loop over the others.
#define EXPECT_GEMM_OK(call)                \
  try {                                     \
    EXPECT_EQ((call).failure, "");          \
  } catch (const std::exception& e) {       \
    ADD_FAILURE() << "threw: " << e.what(); \
  }

TEST_F(LtGemmTest, EveryDtypeMatchesReference) {
  for (DType t : {DType::f32, DType::tf32, DType::f16, DType::bf16, DType::i8})
    for (const GemmShape s : {GemmShape{64, 64, 64}, GemmShape{17, 33, 100}, GemmShape{17, 36, 100},
                              GemmShape{1, 257, 1028}, GemmShape{1, 260, 1028}, GemmShape{300, 200, 4096}}) {
      SCOPED_TRACE(testing::Message() << dtype_name(t) << " " << s.m << "x" << s.n << "x" << s.k);
      // int8 (IMMA, CUBLASLT_ORDER_COL) takes N and K in multiples of 4: other shapes are refused
      // with the reason before anything reaches the device.
      if (t == DType::i8 && (s.n % 4 != 0 || s.k % 4 != 0)) {
        EXPECT_THROW(make_lt_gemm_plan(s, t, false), UsageError);
        continue;
      }
      EXPECT_GEMM_OK(run(t, s, false));
    }
}

TEST_F(LtGemmTest, Fp8MatchesReferenceWithAndWithoutFastAccum) {
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (bool fast : {false, true})
      for (const GemmShape s : {GemmShape{16, 16, 16}, GemmShape{48, 80, 112}, GemmShape{256, 512, 4096}}) {
        SCOPED_TRACE(testing::Message() << dtype_name(t) << " fast=" << fast << " " << s.m << "x" << s.n << "x" << s.k);
        EXPECT_GEMM_OK(run(t, s, false, fast));
      }
}

TEST_F(LtGemmTest, AutotunedAlgorithmIsCorrect) {
  for (DType t : {DType::bf16, DType::fp8_e4m3}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    EXPECT_GEMM_OK(run(t, {512, 768, 1024}, true));
    EXPECT_GEMM_OK(run(t, {512, 768, 1024}, true));  // second call: from the cache
  }
}

}  // namespace
}  // namespace gcb::kernels
