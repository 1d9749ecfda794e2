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
  const auto be = make_backend("cpu");
  EXPECT_EQ(be->name(), "cpu");
  EXPECT_EQ(be->memory_space(), MemorySpace::host);
  EXPECT_EQ(be->timeline().kind(), "host steady_clock");
  EXPECT_TRUE(be->notes().text.empty());
  EXPECT_EQ(compute_backend("cpu").memory, MemorySpace::host);
  EXPECT_EQ(compute_backend("cuda").memory, MemorySpace::device);
  EXPECT_EQ(backend_error("cpu"), "");
  EXPECT_EQ(backend_unavailable("cpu"), "");
  // The row itself, as a request carries it.
  const ComputeBackend& row = compute_backend("cpu");
  EXPECT_EQ(backend_refusal("cpu"), "");
  EXPECT_EQ(backend_error(row), "");
  EXPECT_EQ(backend_unavailable(row), "");
  EXPECT_EQ(make_backend(row)->name(), "cpu");
}

TEST(BackendFactory, UnknownBackendsAreUsageErrors) {
  EXPECT_NE(backend_error("tpu").find("expected one of cpu, cuda"), std::string::npos);
  // The refusal --backend's check gives (CLI11 prefixes the flag): the names from the table, the
  // closest one suggested.
  EXPECT_EQ(backend_refusal("tpu"), "tpu (did you mean 'cpu'?): expected one of cpu, cuda");
  EXPECT_EQ(backend_error("tpu"), "--backend tpu (did you mean 'cpu'?): expected one of cpu, cuda");
  EXPECT_THROW(make_backend("tpu"), UsageError);
  EXPECT_THROW(compute_backend("tpu"), UsageError);
}

#if GCB_HAVE_CUDA_TRAINING
TEST(BackendFactory, CudaIsBuiltAndSaysWhyItCannotRunWithoutAGpu) {
  EXPECT_EQ(backend_error("cuda"), "");
  EXPECT_NE(compute_backend("cuda").peak, nullptr);
  EXPECT_EQ(backend_refusal("cuda"), "");
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_NE(backend_unavailable("cuda").find("no GPU"), std::string::npos) << backend_unavailable("cuda");
  EXPECT_FALSE(compute_backend("cuda").peak(0).has_value());  // no device 0 to look up
}
#else
TEST(BackendFactory, CudaNotBuiltIsAUsageErrorSayingSo) {
  EXPECT_NE(backend_error("cuda").find("built without CUDA"), std::string::npos);
  EXPECT_NE(backend_refusal("cuda").find("cuda: this binary was built without CUDA"), std::string::npos);
  EXPECT_NE(backend_error(compute_backend("cuda")).find("built without CUDA"), std::string::npos);
  EXPECT_THROW(make_backend(compute_backend("cuda")), UsageError);
  EXPECT_THROW(make_backend("cuda"), UsageError);
}
#endif

}  // namespace
}  // namespace gcb::models
