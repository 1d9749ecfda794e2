// The run context: the machine facts (the recorded environment: test_environment.cpp).
#include <gtest/gtest.h>

#include "core/context.hpp"
#include "core/gpu.hpp"

namespace gcb {
namespace {

TEST(Context, CollectsMachineFacts) {
  ContextOptions o;
  o.command_line = {"gcbench", "mem"};
  const auto ctx = collect_run_context(o);
  EXPECT_FALSE(ctx.at("host").get<std::string>().empty());
  EXPECT_GE(ctx.at("cpu").at("logical_cores").get<int>(), 1);
  EXPECT_GE(ctx.at("cpu").at("numa_nodes").get<int>(), 1);
  EXPECT_GT(ctx.at("memory_bytes").get<uint64_t>(), 0u);
  EXPECT_EQ(ctx.at("command_line").size(), 2u);
  EXPECT_EQ(ctx.at("gpus").size(), static_cast<size_t>(gpu::device_count()));
  if (gpu::device_count() == 0) {
    EXPECT_FALSE(gpu::runtime().unavailable_reason.empty());
  }
}

}  // namespace
}  // namespace gcb
