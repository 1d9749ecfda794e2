// Compute backends by name: the table's rows, what is built, what can run here, and one-line
// errors for the rest.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "gcb/config.hpp"
#include "core/gpu.hpp"
#include "models/backend/backend_factory.hpp"

namespace gcb::models {
namespace {

TEST(BackendFactory, CpuIsBuiltAndComputesInHostMemory) {
  EXPECT_EQ(compute_backend_names(), "cpu, cuda");
  const auto be = make_backend(compute_backend("cpu"));
  EXPECT_EQ(be->name(), "cpu");
  EXPECT_EQ(be->memory_space(), MemorySpace::host);
  EXPECT_EQ(be->timeline().kind(), "host steady_clock");
  EXPECT_TRUE(be->notes().text.empty());
  EXPECT_EQ(compute_backend("cpu").memory, MemorySpace::host);
  EXPECT_EQ(compute_backend("cuda").memory, MemorySpace::device);
  // The row itself, as a request carries it.
  const ComputeBackend& row = compute_backend("cpu");
  EXPECT_EQ(backend_refusal("cpu"), "");
  EXPECT_EQ(backend_error(row), "");
  EXPECT_EQ(backend_unavailable(row), "");
  EXPECT_EQ(make_backend(row)->name(), "cpu");
}

TEST(BackendFactory, UnknownBackendsAreUsageErrors) {
  // The refusal --backend's check gives (CLI11 prefixes the flag): the names from the table, the
  // closest one suggested; looking the name up gives the same line with the flag.
  EXPECT_EQ(backend_refusal("tpu"), "tpu (did you mean 'cpu'?): expected one of cpu, cuda");
  try {
    (void)compute_backend("tpu");
    ADD_FAILURE() << "compute_backend(\"tpu\") returned a row";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--backend tpu (did you mean 'cpu'?): expected one of cpu, cuda");
  }
}

#if GCB_HAVE_CUDA_TRAINING
TEST(BackendFactory, CudaIsBuiltAndSaysWhyItCannotRunWithoutAGpu) {
  EXPECT_EQ(backend_error(compute_backend("cuda")), "");
  EXPECT_NE(compute_backend("cuda").peak, nullptr);
  EXPECT_EQ(backend_refusal("cuda"), "");
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const std::string why = backend_unavailable(compute_backend("cuda"));
  EXPECT_NE(why.find("no GPU"), std::string::npos) << why;
  EXPECT_FALSE(compute_backend("cuda").peak(0).has_value());  // no device 0 to look up
}
#else
TEST(BackendFactory, CudaNotBuiltIsAUsageErrorSayingSo) {
  EXPECT_NE(backend_refusal("cuda").find("cuda: this binary was built without CUDA"), std::string::npos);
  EXPECT_NE(backend_error(compute_backend("cuda")).find("built without CUDA"), std::string::npos);
  EXPECT_THROW(make_backend(compute_backend("cuda")), UsageError);
}
#endif

}  // namespace
}  // namespace gcb::models
