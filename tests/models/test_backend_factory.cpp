// Compute backends by name: the table's rows, what is built, and one-line errors for the rest.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/backend_factory.hpp"

namespace gcb::models {
namespace {

TEST(BackendFactory, CpuIsBuiltAndComputesInHostMemory) {
  EXPECT_EQ(compute_backend_names(), "cpu, cuda");
  const auto be = make_backend("cpu");
  EXPECT_EQ(be->name(), "cpu");
  EXPECT_EQ(be->memory_space(), MemorySpace::host);
  EXPECT_EQ(compute_backend("cpu").memory, MemorySpace::host);
  EXPECT_EQ(compute_backend("cuda").memory, MemorySpace::device);
  EXPECT_EQ(backend_error("cpu"), "");
}

TEST(BackendFactory, UnknownAndUnbuiltBackendsAreUsageErrors) {
  EXPECT_NE(backend_error("cuda").find("not built"), std::string::npos);
  EXPECT_NE(backend_error("tpu").find("expected one of cpu, cuda"), std::string::npos);
  EXPECT_THROW(make_backend("cuda"), UsageError);
  EXPECT_THROW(make_backend("tpu"), UsageError);
  EXPECT_THROW(compute_backend("tpu"), UsageError);
}

}  // namespace
}  // namespace gcb::models
