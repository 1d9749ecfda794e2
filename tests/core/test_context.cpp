// The run context: records only the allowed environment variables, and the machine facts.
#include <gtest/gtest.h>

#include "core/context.hpp"
#include "core/gpu.hpp"

namespace gcb {
namespace {

TEST(Context, EnvironmentIsFilteredToKnownPrefixes) {
  const char* vars[] = {"NCCL_DEBUG=INFO", "HOME=/root", "CUDA_VISIBLE_DEVICES=0,1", "SECRET_TOKEN=x",
                        "OMP_NUM_THREADS=4", "SLURM_JOB_ID=42", "UCX_TLS=rc", "FI_PROVIDER=efa", "PATH=/bin", nullptr};
  const auto env = filtered_environment(const_cast<char**>(vars));
  EXPECT_EQ(env.size(), 6u);
  EXPECT_EQ(env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_FALSE(env.contains("HOME"));
  EXPECT_FALSE(env.contains("SECRET_TOKEN"));
}

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
