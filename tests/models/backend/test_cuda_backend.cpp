// Every CudaBackend op against the CPU oracle on the same inputs (label gpu; skipped with the
// reason where no GPU exists), in fp32 and bf16, on shapes with partial vectors and tiles, within
// the derived tolerances of gpu_tolerance.hpp; then whole training steps against the CPU engine.
// Compiles here; has never run (no GPU was lent to the session that wrote it).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collectives/world.hpp"
#include "core/gpu.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "kernels/train/train_kernels.hpp"
#include "models/backend/cuda/cuda_backend.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "tests/models/backend/gpu_tolerance.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

// One tensor held by both backends, uploaded from the same host values (rounded once to its type).
struct Pair {
  Buffer cpu, gpu;
  DType t = DType::f32;
  size_t n = 0;
  View c() const { return cpu.view(); }
  View g() const { return gpu.view(); }
};

class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no GPU: " << gpu::runtime().unavailable_reason;
    gpu_ = std::make_unique<CudaBackend>(CudaBackendOptions{0, AttentionRequest::automatic, false, {}});
  }

  Pair tensor(DType t, size_t n, const std::function<double(size_t)>& value) {
    Pair p{cpu_.alloc(MemCategory::workspace, t, n), gpu_->alloc(MemCategory::workspace, t, n), t, n};
    std::vector<unsigned char> host(n * dtype_size(t));
    for (size_t i = 0; i < n; ++i) store_as(t, host.data(), i, value(i));
    cpu_.copy_from_host(p.cpu.data(), host.data(), host.size());
    gpu_->copy_from_host(p.gpu.data(), host.data(), host.size());
    return p;
  }
  Pair random(DType t, size_t n, double scale = 1.0) {
    return tensor(t, n, [&](size_t) { return scale * dist_(rng_); });
  }
  Pair zeros(DType t, size_t n) {
    return tensor(t, n, [](size_t) { return 0.0; });
  }
  Pair ints(size_t n, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    return tensor(DType::i32, n, [&](size_t) { return d(rng_); });
  }

  std::vector<double> host_of(Backend& be, const Buffer& b) {
    std::vector<unsigned char> raw(b.bytes());
    be.copy_to_host(raw.data(), b.data(), raw.size());
    std::vector<double> v(b.count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = load_as(b.view().dtype, raw.data(), i);
    return v;
  }
  // Each GPU element within tol.bound(cpu) of the CPU's; reports the first five offenders.
  void expect_close(const Pair& p, const OpTolerance& tol, const std::string& what) {
    const std::vector<double> want = host_of(cpu_, p.cpu), got = host_of(*gpu_, p.gpu);
    int bad = 0;
    for (size_t i = 0; i < p.n; ++i) {
      const double err = std::fabs(got[i] - want[i]);
      if (!(err <= tol.bound(want[i])) && ++bad <= 5)
        ADD_FAILURE() << what << "[" << i << "]: gpu " << got[i] << " cpu " << want[i] << " |Δ| " << err << " > "
                      << tol.bound(want[i]);
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << p.n << " outside the tolerance";
  }
  void expect_equal(const Pair& p, const std::string& what) { expect_close(p, OpTolerance{DType::f64}, what); }
  // Each GPU element within bound(i, cpu value) of the CPU's (a bound that depends on the inputs).
  void expect_within(const Pair& p, const std::function<double(size_t, double)>& bound, const std::string& what) {
    const std::vector<double> want = host_of(cpu_, p.cpu), got = host_of(*gpu_, p.gpu);
    int bad = 0;
    for (size_t i = 0; i < p.n; ++i) {
      const double err = std::fabs(got[i] - want[i]), b = bound(i, want[i]);
      if (!(err <= b) && ++bad <= 5)
        ADD_FAILURE() << what << "[" << i << "]: gpu " << got[i] << " cpu " << want[i] << " |Δ| " << err << " > " << b;
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << p.n << " outside the tolerance";
  }
  // The GPU side's buffer set to the CPU side's bytes: the next op then starts from equal inputs.
  void share_cpu_values(Pair& p) {
    std::vector<unsigned char> raw(p.cpu.bytes());
    cpu_.copy_to_host(raw.data(), p.cpu.data(), raw.size());
    gpu_->copy_from_host(p.gpu.data(), raw.data(), raw.size());
  }

  CpuBackend cpu_;
  std::unique_ptr<CudaBackend> gpu_;
  std::mt19937_64 rng_{7};
  std::normal_distribution<double> dist_{0.0, 1.0};
};

const DType kTypes[] = {DType::f32, DType::bf16};

TEST_F(CudaOps, ElementwiseOpsAndCasts) {
  for (DType t : kTypes) {
    const size_t n = 1003;  // a partial chunk at the end
    Pair a = random(t, n), b = random(t, n), out = zeros(t, n);
    cpu_.add(out.c(), a.c(), b.c(), n);
    gpu_->add(out.g(), a.g(), b.g(), n);
    expect_close(out, {t}, "add");  // one fp32 add, one rounding
    cpu_.scale(a.c(), 0.37, n);
    gpu_->scale(a.g(), 0.37, n);
    expect_close(a, {t}, "scale");
    cpu_.gelu_forward(out.c(), b.c(), n);
    gpu_->gelu_forward(out.g(), b.g(), n);
    // tanhf's error scaled by the input, not the output (gpu_tolerance.hpp, gelu_forward_bound).
    const std::vector<double> xs = host_of(cpu_, b.cpu);
    expect_within(
        out, [&](size_t i, double want) { return gelu_forward_bound(t, xs[i], want); }, "gelu_forward");
    Pair d = random(t, n), dx = zeros(t, n);
    cpu_.gelu_backward(dx.c(), b.c(), d.c(), n);
    gpu_->gelu_backward(dx.g(), b.g(), d.g(), n);
    const std::vector<double> ds = host_of(cpu_, d.cpu);
    expect_within(
        dx, [&](size_t i, double want) { return gelu_backward_bound(t, xs[i], ds[i], want); }, "gelu_backward");
    cpu_.fill(out.c(), n, 0.3f);
    gpu_->fill(out.g(), n, 0.3f);
    expect_equal(out, "fill");
  }
  Pair f = random(DType::f32, 777), h = zeros(DType::bf16, 777), back = zeros(DType::f32, 777);
  cpu_.copy(h.c(), f.c(), 777);
  gpu_->copy(h.g(), f.g(), 777);
  expect_equal(h, "cast fp32 → bf16 (round to nearest even)");
  cpu_.copy(back.c(), h.c(), 777);
  gpu_->copy(back.g(), h.g(), 777);
  expect_equal(back, "cast bf16 → fp32 (exact)");
}

TEST_F(CudaOps, InitNormalIsBitwiseTheOracles) {
  for (DType t : kTypes) {
    Pair x = zeros(t, 5000);
    cpu_.init_normal(x.c(), 5000, 1234, 3, 100, 0.02f);
    gpu_->init_normal(x.g(), 5000, 1234, 3, 100, 0.02f);
    expect_equal(x, "init_normal");
  }
}

TEST_F(CudaOps, LossSumInDouble) {
  const size_t n = 4099;
  Pair in = random(DType::f32, n, 4.0), out = zeros(DType::f64, 1);
  cpu_.sum(out.c(), in.c(), n, false);
  gpu_->sum(out.g(), in.g(), n, false);
  // Double sums of n terms in two orders: 2·n·2⁻⁵³·Σ|x|, far below one fp32 ulp.
  expect_close(out, {DType::f64, 1, 0, 0, 2.0 * n * 0x1p-53 * 4.0 * 4.0 * n}, "sum");
}

TEST_F(CudaOps, GemmEveryTransposeBiasAndAccumulation) {
  const int M = 37, N = 45, K = 70;
  for (DType t : kTypes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (bool acc : {false, true}) {
          Pair A = random(t, size_t(M) * K), B = random(t, size_t(K) * N), C = random(t, size_t(M) * N),
               bias = random(t, N);
          cpu_.gemm({ta, tb, M, N, K, A.c(), B.c(), C.c(), acc ? 1.0f : 0.0f, acc ? View{} : bias.c()});
          gpu_->gemm({ta, tb, M, N, K, A.g(), B.g(), C.g(), acc ? 1.0f : 0.0f, acc ? View{} : bias.g()});
          // K products of N(0,1) values, each below 4σ·4σ: Σ|a·b| ≤ 16K (plus C and the bias).
          expect_close(C, {t, size_t(K) + 2, 16.0 * K + 8},
                       "gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " acc=" + std::to_string(acc) +
                           " " + std::string(dtype_name(t)));
        }
      }
    }
  }
}

// Shapes with one row range (150 rows) and with several (1000 × 72: 7 ranges of 143 rows, the
// last 142; 2048 × 768: 16 ranges, GPT-2's C), so the column sums' two passes are both checked.
TEST_F(CudaOps, BiasBackwardAndLayerNorm) {
  struct Shape {
    int rows, C;
  };
  for (const auto [rows, C] : {Shape{150, 72}, Shape{1000, 72}, Shape{2048, 768}})
    for (DType t : kTypes) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(C) + " " + std::string(dtype_name(t)));
      Pair dout = random(t, size_t(rows) * C), db = random(t, C);
      cpu_.bias_backward(db.c(), dout.c(), rows, C);
      gpu_->bias_backward(db.g(), dout.g(), rows, C);
      expect_close(db, {t, size_t(rows) + 1, 4.0 * rows + 4}, "bias_backward");  // |x| ≤ 4σ
      Pair x = random(t, size_t(rows) * C, 3.0), w = random(t, C), b = random(t, C), out = zeros(t, size_t(rows) * C);
      Pair mean = zeros(DType::f32, rows), rstd = zeros(DType::f32, rows);
      cpu_.layernorm_forward(out.c(), mean.cpu.f32(), rstd.cpu.f32(), x.c(), w.c(), b.c(), rows, C);
      gpu_->layernorm_forward(out.g(), mean.gpu.f32(), rstd.gpu.f32(), x.g(), w.g(), b.g(), rows, C);
      // Values below 4σ: |x| ≤ 12, |w|, |b|, |dout| ≤ 4, |norm| ≤ 4. The mean is a sum of C terms
      // over C (Σ|x|/C ≤ 12); rstd and the output inherit the variance sum's relative error (2Cu)
      // times their magnitude (rstd ≈ 1/3; |norm·w + b| ≤ 20).
      expect_close(mean, {DType::f32, size_t(C), 12.0}, "layernorm mean");
      expect_close(rstd, {DType::f32, size_t(C), 1.0, 1}, "layernorm rstd");
      expect_close(out, {t, size_t(C), 20.0 + 12.0, 1}, "layernorm out");
      Pair dx = random(t, size_t(rows) * C), dw = random(t, C), dbb = random(t, C);
      cpu_.layernorm_backward(dx.c(), dw.c(), dbb.c(), dout.c(), x.c(), w.c(), mean.cpu.f32(), rstd.cpu.f32(), rows, C);
      gpu_->layernorm_backward(dx.g(), dw.g(), dbb.g(), dout.g(), x.g(), w.g(), mean.gpu.f32(), rstd.gpu.f32(), rows,
                               C);
      // dx: the two row means of |dnorm·norm| ≤ 64, times (1 + |norm|)·rstd, plus dx itself.
      expect_close(dx, {t, size_t(C), 64.0 * 5 + 4}, "layernorm dx");
      expect_close(dw, {t, size_t(rows) + 1, 16.0 * rows + 4}, "layernorm dw");
      expect_close(dbb, {t, size_t(rows) + 1, 4.0 * rows + 4}, "layernorm db");
    }
}

TEST_F(CudaOps, EmbeddingOfAShardWithRepeatedTokens) {
  const int B = 3, T = 50, C = 40, V = 64, v0 = 16, Vl = 32;  // the shard holds tokens 16…47
  for (DType t : kTypes) {
    Pair tok = ints(size_t(B) * T, 0, V - 1), wte = random(t, size_t(Vl) * C), wpe = random(t, size_t(T) * C);
    Pair out = zeros(t, size_t(B) * T * C);
    cpu_.embedding_forward(out.c(), tok.cpu.i32(), wte.c(), v0, Vl, wpe.c(), B, T, C);
    gpu_->embedding_forward(out.g(), tok.gpu.i32(), wte.g(), v0, Vl, wpe.g(), B, T, C);
    expect_close(out, {t}, "embedding_forward");  // one add, one rounding
    Pair dwte = random(t, size_t(Vl) * C), dwpe = random(t, size_t(T) * C);
    cpu_.embedding_backward(dwte.c(), dwpe.c(), out.c(), tok.cpu.i32(), v0, Vl, B, T, C);
    gpu_->embedding_backward(dwte.g(), dwpe.g(), out.g(), tok.gpu.i32(), v0, Vl, B, T, C);
    // A token appears at most B·T times; each output row is a sum of two values below 4σ.
    expect_close(dwte, {t, size_t(B) * T + 1, 8.0 * B * T + 4}, "embedding_backward wte");
    expect_close(dwpe, {t, size_t(B) + 1, 8.0 * B + 4}, "embedding_backward wpe");
  }
}

TEST_F(CudaOps, CrossEntropyOverAShardWithTheOnlinePass) {
  // 13 padded columns (vocabulary padding): left out of the max and Σexp, probability 0.
  const int rows = 67, V = 1000, v0 = 500, valid = 987;
  for (DType t : kTypes) {
    Pair logits = random(t, size_t(rows) * V, 3.0), targets = ints(rows, 0, v0 + valid - 1);
    Pair rowmax = zeros(DType::f32, rows), stats = zeros(DType::f32, 2 * size_t(rows)),
         losses = zeros(DType::f32, rows);
    cpu_.cross_entropy_max(rowmax.cpu.f32(), logits.c(), rows, V, valid);
    gpu_->cross_entropy_max(rowmax.gpu.f32(), logits.g(), rows, V, valid);
    expect_equal(rowmax, "cross_entropy_max");  // a maximum has no rounding
    cpu_.cross_entropy_sums(stats.cpu.f32(), logits.c(), rowmax.cpu.f32(), targets.cpu.i32(), v0, rows, V, valid);
    gpu_->cross_entropy_sums(stats.gpu.f32(), logits.g(), rowmax.gpu.f32(), targets.gpu.i32(), v0, rows, V, valid);
    // Σexp of V terms ≤ 1 each, with one expf per term and the online rescale (two more).
    expect_close(stats, {DType::f32, size_t(V), double(V), 3}, "cross_entropy_sums");
    cpu_.cross_entropy_finish(losses.cpu.f32(), logits.c(), logits.c(), rowmax.cpu.f32(), stats.cpu.f32(), rows, V,
                              valid);
    gpu_->cross_entropy_finish(losses.gpu.f32(), logits.g(), logits.g(), rowmax.gpu.f32(), stats.gpu.f32(), rows, V,
                               valid);
    // log Σexp inherits Σexp's relative error, at most 2V·u (positive terms) plus the libm calls;
    // a probability (≤ 1) the same relative error.
    expect_close(losses, {DType::f32, size_t(V), 1.0, 3}, "cross_entropy_finish losses");
    expect_close(logits, {t, size_t(V), 1.0, 3}, "cross_entropy_finish probs");
    // The backward on equal inputs (the CPU's probabilities on both sides): p − [target] and the
    // scale by dloss (a power of two here) leave one rounding to the storage type.
    share_cpu_values(logits);
    cpu_.cross_entropy_backward(logits.c(), logits.c(), targets.cpu.i32(), v0, rows, V, 1.0f / 4096);
    gpu_->cross_entropy_backward(logits.g(), logits.g(), targets.gpu.i32(), v0, rows, V, 1.0f / 4096);
    expect_close(logits, {t}, "cross_entropy_backward");
  }
}

// The fused finish + backward (one pass, dlogits over the logits) against the CPU oracle's two
// ops, on the same statistics (computed by the CPU and uploaded to both sides).
TEST_F(CudaOps, FusedCrossEntropyFinishBackwardEqualsTheTwoOps) {
  const int rows = 67, V = 1000, v0 = 500, valid = 987;
  const float dloss = 1.0f / 4096;
  for (DType t : kTypes) {
    Pair logits = random(t, size_t(rows) * V, 3.0), targets = ints(rows, 0, v0 + valid - 1);
    Pair rowmax = zeros(DType::f32, rows), stats = zeros(DType::f32, 2 * size_t(rows)),
         losses = zeros(DType::f32, rows);
    cpu_.cross_entropy_max(rowmax.cpu.f32(), logits.c(), rows, V, valid);
    cpu_.cross_entropy_sums(stats.cpu.f32(), logits.c(), rowmax.cpu.f32(), targets.cpu.i32(), v0, rows, V, valid);
    gpu_->copy_from_host(rowmax.gpu.data(), rowmax.cpu.data(), rowmax.cpu.bytes());
    gpu_->copy_from_host(stats.gpu.data(), stats.cpu.data(), stats.cpu.bytes());
    cpu_.cross_entropy_finish(losses.cpu.f32(), logits.c(), logits.c(), rowmax.cpu.f32(), stats.cpu.f32(), rows, V,
                              valid);
    cpu_.cross_entropy_backward(logits.c(), logits.c(), targets.cpu.i32(), v0, rows, V, dloss);
    gpu_->cross_entropy_finish_backward(losses.gpu.f32(), logits.g(), logits.g(), rowmax.gpu.f32(), stats.gpu.f32(),
                                        targets.gpu.i32(), v0, rows, V, valid, dloss);
    // The loss: one logf of the same Σexp on each side.
    expect_close(losses, {DType::f32, 1, 0.0, 1}, "cross_entropy_finish_backward losses");
    // A probability (≤ 1): one expf and one product each side; the oracle also rounds it to t
    // before the difference (one ulp of t below 1, at most 2⁻⁷ in bf16), scaled by dloss.
    expect_close(logits, {t, 1, 0.0, 2, (t == DType::bf16 ? 0x1p-7 : 0x1p-23) * dloss},
                 "cross_entropy_finish_backward dlogits");
  }
}

TEST_F(CudaOps, AdamWFp32AndMixed) {
  const size_t n = 2051;
  AdamWArgs a;
  a.lr = 1e-3f;
  a.weight_decay = 0.1f;
  a.step = 3;
  for (bool mixed : {false, true}) {
    const DType t = mixed ? DType::bf16 : DType::f32;
    Pair p = random(t, n, 0.02), g = random(t, n, 1e-3), m = random(DType::f32, n, 1e-4), v = zeros(DType::f32, n);
    Pair master = tensor(DType::f32, n, [&](size_t) { return 0.0; });
    if (mixed) {
      cpu_.copy(master.c(), p.c(), n);
      gpu_->copy(master.g(), p.g(), n);
    }
    for (int s = 0; s < 3; ++s) {
      cpu_.adamw(p.c(), g.c(), m.cpu.f32(), v.cpu.f32(), mixed ? master.cpu.f32() : nullptr, n, a);
      gpu_->adamw(p.g(), g.g(), m.gpu.f32(), v.gpu.f32(), mixed ? master.gpu.f32() : nullptr, n, a);
    }
    // The same fp32 arithmetic except FMA contraction on the device: a few fp32 ulp per step.
    expect_close(m, {DType::f32, 8, 1e-3}, "adamw m");
    expect_close(v, {DType::f32, 8, 1e-6}, "adamw v");
    expect_close(mixed ? master : p, {DType::f32, 8, 0.1, 1}, "adamw weights");
    if (mixed) expect_close(p, {t, 8, 0.1, 1}, "adamw bf16 params");
  }
}

// The multi-tensor launch on a list longer than one launch holds (31 tensors > 30 slots, and one
// tensor of 3·65536 + 5 elements), with empty and odd-sized tensors and unaligned starts, against
// the CPU oracle's adamw on each tensor. Tolerances as AdamWFp32AndMixed (same arithmetic).
TEST_F(CudaOps, AdamWMultiTensorEqualsPerTensorOracle) {
  AdamWArgs a;
  a.lr = 1e-3f;
  a.weight_decay = 0.1f;
  a.step = 2;
  std::vector<size_t> sizes{3 * 65536 + 5, 0, 1, 17};
  for (size_t i = 0; i < 27; ++i) sizes.push_back(8 * i + 3);
  for (bool mixed : {false, true}) {
    const DType t = mixed ? DType::bf16 : DType::f32;
    std::vector<Pair> p, g, m, v, master;
    std::vector<AdamWBuffers> cpu_list, gpu_list;
    for (size_t n : sizes) {
      p.push_back(random(t, n + 1, 0.02));  // + 1: lists start one element in, off 16-byte alignment
      g.push_back(random(t, n + 1, 1e-3));
      m.push_back(random(DType::f32, n + 1, 1e-4));
      v.push_back(zeros(DType::f32, n + 1));
      master.push_back(zeros(DType::f32, n + 1));
      if (mixed) {
        cpu_.copy(master.back().c(), p.back().c(), n + 1);
        gpu_->copy(master.back().g(), p.back().g(), n + 1);
      }
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t off = i % 2;  // every other tensor unaligned
      cpu_list.push_back({p[i].c().at(off), g[i].c().at(off), m[i].cpu.f32() + off, v[i].cpu.f32() + off,
                          mixed ? master[i].cpu.f32() + off : nullptr, sizes[i]});
      gpu_list.push_back({p[i].g().at(off), g[i].g().at(off), m[i].gpu.f32() + off, v[i].gpu.f32() + off,
                          mixed ? master[i].gpu.f32() + off : nullptr, sizes[i]});
    }
    for (int s = 0; s < 2; ++s) {
      for (const AdamWBuffers& x : cpu_list)
        if (x.n > 0) cpu_.adamw(x.params, x.grads, x.m, x.v, x.master, x.n, a);
      gpu_->adamw_multi(gpu_list, a);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      expect_close(m[i], {DType::f32, 8, 1e-3}, "adamw_multi m");
      expect_close(v[i], {DType::f32, 8, 1e-6}, "adamw_multi v");
      expect_close(mixed ? master[i] : p[i], {DType::f32, 8, 0.1, 1}, "adamw_multi weights");
      if (mixed) expect_close(p[i], {t, 8, 0.1, 1}, "adamw_multi bf16 params");
    }
  }
}

// The attention permutes (kernels/train/heads.cu) are copies: rows → heads puts element d of head
// h of token (b, t) at ((b·NH + h)·T + t)·hs + d, bit for bit, and heads → rows puts it back
// without touching the row's other columns. Chunked (hs 64, width 3·C, col C: GPT-2's q/k/v) and
// element-wise (hs 12; and col 4, not a multiple of 8), fp32 and bf16.
TEST_F(CudaOps, AttentionPermutesAreExactCopies) {
  struct Case {
    int B, T, NH, hs, width, col;
  };
  for (const Case& c : {Case{2, 37, 3, 64, 3 * 192, 192}, Case{2, 37, 3, 12, 3 * 36, 36}, Case{1, 9, 2, 16, 40, 4}})
    for (DType t : kTypes) {
      SCOPED_TRACE("hs " + std::to_string(c.hs) + " col " + std::to_string(c.col) + " " + std::string(dtype_name(t)));
      const size_t rows = size_t(c.B) * c.T, n = rows * c.NH * c.hs;
      Pair src = random(t, rows * c.width), heads = zeros(t, n), back = tensor(t, rows * c.width, [](size_t) {
                                                                   return -7.0;  // poison: left where no head lands
                                                                 });
      gpu_->synchronize();  // the uploads above (staged, stream-ordered) have landed
      const gpu::Stream s = gpu::create_stream(0);
      kernels::train::rows_to_heads(t, heads.gpu.data(), src.gpu.data(), c.width, c.col, c.B, c.T, c.NH, c.hs, s);
      kernels::train::heads_to_rows(t, back.gpu.data(), heads.gpu.data(), c.width, c.col, c.B, c.T, c.NH, c.hs, s);
      gpu::synchronize(s);
      gpu::destroy_stream(s);
      const std::vector<double> in = host_of(*gpu_, src.gpu), h = host_of(*gpu_, heads.gpu),
                                out = host_of(*gpu_, back.gpu);
      int bad = 0;
      for (int b = 0; b < c.B; ++b)
        for (int hd = 0; hd < c.NH; ++hd)
          for (int tt = 0; tt < c.T; ++tt)
            for (int d = 0; d < c.hs; ++d) {
              const size_t r = (size_t(b) * c.T + tt) * c.width + c.col + size_t(hd) * c.hs + d;
              const size_t k = ((size_t(b) * c.NH + hd) * c.T + tt) * c.hs + d;
              if (h[k] != in[r] && ++bad <= 5) ADD_FAILURE() << "heads[" << k << "] " << h[k] << " != rows " << in[r];
            }
      for (size_t r = 0; r < out.size(); ++r) {
        const size_t col = r % size_t(c.width);
        const bool head = col >= size_t(c.col) && col < size_t(c.col) + size_t(c.NH) * c.hs;
        if (out[r] != (head ? in[r] : -7.0) && ++bad <= 5) ADD_FAILURE() << "back[" << r << "] " << out[r];
      }
      EXPECT_EQ(bad, 0);
    }
}

// Attention: fp32 (the exact row kernel) and bf16 at head dims 64 (ours or cuDNN, whichever auto
// picks) and 32 (cuDNN or the row kernel), T = 150 (three 64-row tiles, the last partial).
// Inside the 16-bit kernels P (and dS in backward) are rounded to bf16 before their products:
// ≤ 2⁻⁸ relative per term, so ≤ 2⁻⁸·max|V| on O after Σ_j P_ij = 1 and ≤ 2⁻⁸·T·max|dS·K| on the
// gradients, which the extra terms state.
TEST_F(CudaOps, AttentionForwardAndBackward) {
  struct Case {
    DType t;
    int C, NH;
  };
  for (const Case& k : {Case{DType::f32, 128, 2}, Case{DType::bf16, 128, 2}, Case{DType::bf16, 64, 2}}) {
    const int B = 2, T = 150, hs = k.C / k.NH;
    Pair qkv = random(k.t, size_t(B) * T * 3 * k.C, 0.5), out = zeros(k.t, size_t(B) * T * k.C);
    Pair lse = zeros(DType::f32, size_t(B) * k.NH * T);
    cpu_.attention_forward(out.c(), lse.cpu.f32(), qkv.c(), B, T, k.C, k.NH);
    gpu_->attention_forward(out.g(), lse.gpu.f32(), qkv.g(), B, T, k.C, k.NH);
    const bool half = k.t == DType::bf16;
    const double v_max = 0.5 * 5;  // |N(0, 0.5²)| below 5σ
    expect_close(out, {k.t, size_t(T), v_max, 2, half ? 0x1p-8 * v_max : 0.0},
                 "attention out hd " + std::to_string(hs));
    expect_close(lse, {DType::f32, size_t(T), 1.0, 2, half ? 0x1p-8 : 0.0}, "attention lse");
    Pair dout = random(k.t, size_t(B) * T * k.C, 0.5), dqkv = zeros(k.t, size_t(B) * T * 3 * k.C);
    cpu_.attention_backward(dqkv.c(), dout.c(), qkv.c(), out.c(), lse.cpu.f32(), B, T, k.C, k.NH);
    gpu_->attention_backward(dqkv.g(), dout.g(), qkv.g(), out.g(), lse.gpu.f32(), B, T, k.C, k.NH);
    // |dP − D| ≤ 2·hs·max|dO|·max|V| and Σ_j P_ij ≤ 1, so |dQ| ≤ scale·max|K|·2·hs·v_max² = 2√hs·v_max³
    // (dK, dV alike); sums of hs then T terms.
    const double g_scale = 2.0 * std::sqrt(double(hs)) * v_max * v_max * v_max;
    expect_close(dqkv, {k.t, size_t(T + hs), g_scale, 3, half ? 0x1p-8 * g_scale : 0.0},
                 "attention dqkv hd " + std::to_string(hs));
  }
}

// Whole steps: the engine on the CUDA backend against the CPU engine, one rank (an NCCL world of
// one), 3 steps. fp32 (the row attention kernel; cuBLASLt without TF32): loss and every weight
// within 1e-4 relative (floor 0.1; the key bias, whose gradient is exactly zero, within 1e-3 of
// 0). bf16 (head dim 64: flash or cuDNN): the loss within 2⁻⁷ relative at every step (two
// independent bf16 roundings of the same model, each within 2⁻⁸ of fp32, test_precision's u), and
// each tensor kind's update within 25 % in norm (test_precision's rule for bf16 layouts).
struct StepRun {
  std::vector<double> losses;
  std::vector<float> params, initial;
};

StepRun run_on_gpu(const TrainOptions& o, const ParallelLayout& lay, int steps, bool lt_gelu = false) {
  StepRun out;
  WorldOptions w;
  w.backend = "nccl";
  w.ranks = lay.world();
  run_world(w, [&](gcb::RankContext& rc) -> int {
    ParallelGroups ctx = make_parallel_groups(rc.world_comm, lay);
    CudaBackend be(CudaBackendOptions{rc.device, AttentionRequest::automatic, lt_gelu, process_devices(rc)});
    auto engine = make_training_step(be, ctx, o);
    std::vector<float> initial = engine->full_params();
    std::vector<double> losses;
    for (int s = 0; s < steps; ++s) losses.push_back(engine->step());
    std::vector<float> params = engine->full_params();
    if (rc.rank == 0) out = {losses, params, initial};
    return 0;
  });
  return out;
}

TrainOptions gpu_model(Precision p) {
  TrainOptions o = tiny_options(2, 2, 2, p);
  ConfigOverrides c;
  c.layers = 2;
  c.hidden = 128;
  c.heads = 2;  // head dim 64: the flash kernels' and cuDNN's
  c.vocab = 256;
  c.seq = 128;
  o.model = apply_overrides(named_config("tiny"), c);
  return o;
}

// fp32 GPU steps against the CPU: losses and weights within 1e-4 relative (the key bias within
// 1e-3 of 0), as the comment above derives.
void expect_fp32_steps_close(const StepRun& g, const RankOutcome& want, const GptConfig& c, const std::string& what) {
  RankOutcome got;
  got.losses = g.losses;
  got.params = g.params;
  got.initial_params = g.initial;
  Tolerance tol;
  tol.rtol = 1e-4;
  tol.key_bias_bound = 1e-3;
  test::expect_close(got, want, c, tol, what);
}

// bf16 GPU steps against the CPU bf16 oracle: the loss within 2⁻⁷ relative at every step and each
// tensor kind's update within 25 % in norm, as the comment above derives.
void expect_bf16_steps_track(const StepRun& g, const RankOutcome& want, const GptConfig& c) {
  ASSERT_EQ(g.losses.size(), want.losses.size());
  for (size_t s = 0; s < g.losses.size(); ++s)
    EXPECT_NEAR(g.losses[s], want.losses[s], 0x1p-7 * want.losses[s]) << "step " << s;
  RankOutcome got;
  got.params = g.params;
  got.initial_params = g.initial;
  for (const TensorError& e : relative_update_errors(got, want, c)) EXPECT_LT(e.relative, 0.25) << e.tensor;
}

class CudaSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no GPU: " << gpu::runtime().unavailable_reason;
  }
};

TEST_F(CudaSteps, Fp32ThreeStepsEqualTheCpuOracle) {
  const TrainOptions o = gpu_model(Precision::fp32);
  const ParallelLayout one{1, 1, 1};
  const StepRun g = run_on_gpu(o, one, 3);
  const RankOutcome want = single_rank_reference(one, o, 3);
  EXPECT_EQ(g.initial, want.initial_params);  // the same initialisation, bit for bit
  expect_fp32_steps_close(g, want, o.model, "cuda fp32 vs cpu");
}

TEST_F(CudaSteps, Bf16ThreeStepsTrackTheCpuOracle) {
  const TrainOptions o = gpu_model(Precision::bf16);
  const ParallelLayout one{1, 1, 1};
  expect_bf16_steps_track(run_on_gpu(o, one, 3), single_rank_reference(one, o, 3), o.model);
}

// The LM head in chunks of 100 rows (R = 256: a last chunk of 56) on the GPU against the CPU's
// whole head, fp32, with the fp32 steps' tolerance; and --lt-gelu (cuBLASLt's GELU epilogues) in
// bf16 with the bf16 steps' rule — which holds only if cuBLASLt's GELU is the tanh form
// (test_lt_gelu_epilogue says which).
TEST_F(CudaSteps, ChunkedLogitsAndGeluEpiloguesTrackTheCpuOracle) {
  const ParallelLayout one{1, 1, 1};
  TrainOptions chunked = gpu_model(Precision::fp32);
  chunked.logit_rows = 100;
  const StepRun g = run_on_gpu(chunked, one, 3);
  TrainOptions whole = chunked;
  whole.logit_rows = 0;
  expect_fp32_steps_close(g, single_rank_reference(one, whole, 3), whole.model, "cuda fp32 chunked logits vs cpu");

  const TrainOptions o = gpu_model(Precision::bf16);
  expect_bf16_steps_track(run_on_gpu(o, one, 3, /*lt_gelu=*/true), single_rank_reference(one, o, 3), o.model);
}

// --offload (optimizer: page-locked host master/m/v, gradients out, the host AdamW, parameters
// back unit by unit; activations: each layer's kept tensors to page-locked host memory and back
// through two device working sets; both) and full recomputation in blocks of 2 layers, on the GPU
// against the CPU engine without offload or recomputation: fp32 with the fp32 steps' tolerance,
// and the optimizer offload in bf16 (fp32 master on the host) with the bf16 steps' rule. Each
// changes where tensors live or when they are computed, not the arithmetic, so the oracle is the
// plain run's.
TEST_F(CudaSteps, OffloadAndBlockRecomputationTrackTheCpuOracle) {
  const ParallelLayout one{1, 1, 1};
  struct Case {
    const char* name;
    Offload offload;
    Recompute recompute;
    int every;
  };
  for (const Case& k : {Case{"offload-optimizer", Offload::optimizer, Recompute::none, 1},
                        Case{"offload-activations", Offload::activations, Recompute::none, 1},
                        Case{"offload-both-selective", Offload::optimizer_activations, Recompute::selective, 1},
                        Case{"recompute-full-k2", Offload::none, Recompute::full, 2}}) {
    TrainOptions o = gpu_model(Precision::fp32);
    o.offload = k.offload;
    o.recompute = k.recompute;
    o.recompute_every = k.every;
    TrainOptions plain = o;
    plain.offload = Offload::none;
    plain.recompute = Recompute::none;
    plain.recompute_every = 1;
    expect_fp32_steps_close(run_on_gpu(o, one, 3), single_rank_reference(one, plain, 3), o.model, k.name);
  }
  TrainOptions bf = gpu_model(Precision::bf16);
  bf.offload = Offload::optimizer;
  TrainOptions plain = bf;
  plain.offload = Offload::none;
  expect_bf16_steps_track(run_on_gpu(bf, one, 3), single_rank_reference(one, plain, 3), bf.model);
}

// Layouts that need two ranks need two GPUs (NCCL refuses two ranks of one communicator on one
// device): dp2 ZeRO-3 with --overlap, tp2 with SP and pp2 1F1B against one CPU rank, fp32.
TEST_F(CudaSteps, TwoGpuLayoutsEqualOneCpuRank) {
  if (gpu::device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this host has " << gpu::device_count();
  struct Case {
    const char* name;
    ParallelLayout lay;
    ZeroStage zero;
    bool sp, overlap;
  };
  for (const Case& k : {Case{"dp2-zero3-overlap", {2, 1, 1}, ZeroStage::three, false, true},
                        Case{"tp2-sp", {1, 2, 1}, ZeroStage::none, true, false},
                        Case{"pp2-1f1b", {1, 1, 2}, ZeroStage::none, false, false}}) {
    TrainOptions o = gpu_model(Precision::fp32);
    o.zero = k.zero;
    o.sp = k.sp;
    o.overlap_comm = k.overlap;
    o.schedule = PipeSchedule::one_f_one_b;
    if (k.lay.dp == 2) o.grad_accum = 1;  // the same global batch: dp·m = 2
    const StepRun g = run_on_gpu(o, k.lay, 3);
    expect_fp32_steps_close(g, single_rank_reference(k.lay, o, 3), o.model, k.name);
  }
}

}  // namespace
}  // namespace gcb::models::test
