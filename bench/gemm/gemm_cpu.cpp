// Host cases of `gcbench gemm`: OpenBLAS sgemm/dgemm on the same TN problem, shapes and metrics
// as the GPU path, each checked against the FP64 reference. WAIVED when OpenBLAS was not built
// in or the shape exceeds --cpu-max-gflop.
#include <fmt/format.h>

#include "bench/gemm/gemm.hpp"
#include "bench/common/waived_case.hpp"
#include "kernels/gemm/cpu_gemm.hpp"

namespace gcb::bench {

namespace {

class HostGemmCase final : public Case {
 public:
  HostGemmCase(NamedShape s, DType t, const GemmOptions& o, uint64_t seed)
      : shape_(std::move(s)), dtype_(t), data_(o.data), samples_(o.samples), seed_(seed) {}
  std::string key() const override { return fmt::format("gemm/{}", dtype_name(dtype_)); }
  nlohmann::json params() const override {
    return {{"device", "cpu"},
            {"impl", "openblas"},
            {"dtype", dtype_name(dtype_)},
            {"shape", shape_.name},
            {"m", shape_.shape.m},
            {"n", shape_.shape.n},
            {"k", shape_.shape.k},
            {"data", data_ == kernels::GemmData::zeros ? "zeros" : "random"}};
  }
  nlohmann::json model() const override {
    return {{"flops", kernels::gemm_flops(shape_.shape)},
            {"bytes", kernels::gemm_bytes(shape_.shape, dtype_, dtype_)},
            {"flop_convention", "2*M*N*K"}};
  }
  void setup() override {
    const auto& s = shape_.shape;
    const size_t e = dtype_size(dtype_);
    a_.assign(static_cast<size_t>(s.m * s.k) * e, 0);
    b_.assign(static_cast<size_t>(s.n * s.k) * e, 0);
    d_.assign(static_cast<size_t>(s.m * s.n) * e, 0);
    kernels::fill_gemm_input(dtype_, a_.data(), static_cast<size_t>(s.m * s.k), seed_ * 2 + 0, data_);
    kernels::fill_gemm_input(dtype_, b_.data(), static_cast<size_t>(s.n * s.k), seed_ * 2 + 1, data_);
    // Poison: NaN everywhere, so an entry the GEMM never writes fails the non-finite scan.
    for (size_t i = 0; i < static_cast<size_t>(s.m * s.n); ++i) store_as(dtype_, d_.data(), i, std::nan(""));
  }
  void launch() override { kernels::cpu_gemm(dtype_, shape_.shape, a_.data(), b_.data(), d_.data()); }
  std::string verify() override {
    const kernels::GemmOperandsView v{dtype_, dtype_, a_.data(), b_.data(), 1.0, 1.0, dtype_, d_.data()};
    check_ = kernels::check_gemm(shape_.shape, v, kernels::gemm_samples(shape_.shape, samples_, seed_),
                                 kernels::gemm_error_bound(dtype_, shape_.shape.k));
    return check_.failure;
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    return gemm_metrics(shape_.shape, dtype_, s, std::nullopt, std::nullopt, "", check_.max_rel_error);
  }
  nlohmann::json extra() override {
    return {{"library", kernels::cpu_gemm_library()}, {"accuracy", gemm_accuracy_json(check_, samples_)}};
  }
  void teardown() override {
    a_ = {};
    b_ = {};
    d_ = {};
  }

 private:
  NamedShape shape_;
  DType dtype_;
  kernels::GemmData data_;
  int samples_;
  uint64_t seed_;
  std::vector<unsigned char> a_, b_, d_;
  kernels::GemmCheck check_;
};

}  // namespace

CaseList host_gemm_cases(const GemmOptions& o, uint64_t seed) {
  CaseList cases;
  std::string reason;
  const bool available = kernels::cpu_gemm_available(&reason);
  for (DType t : gemm_dtypes_for(o, false)) {
    if (!available) {
      cases.push_back(std::make_unique<WaivedCase>(
          fmt::format("gemm/{}", dtype_name(t)), nlohmann::json{{"device", "cpu"}, {"dtype", dtype_name(t)}}, reason));
      continue;
    }
    for (const auto& s : gemm_shapes(o)) {
      const double gflop = kernels::gemm_flops(s.shape) / 1e9;
      if (gflop > o.cpu_max_gflop) {
        cases.push_back(std::make_unique<WaivedCase>(
            fmt::format("gemm/{}", dtype_name(t)),
            nlohmann::json{{"device", "cpu"},
                           {"dtype", dtype_name(t)},
                           {"shape", s.name},
                           {"m", s.shape.m},
                           {"n", s.shape.n},
                           {"k", s.shape.k}},
            fmt::format("{:.0f} GFLOP per GEMM exceeds --cpu-max-gflop {:.0f}", gflop, o.cpu_max_gflop)));
        continue;
      }
      cases.push_back(std::make_unique<HostGemmCase>(s, t, o, seed));
    }
  }
  return cases;
}

}  // namespace gcb::bench
