// The environment a result records (core/environment.hpp): an allow-list of configuration
// variables, secrets redacted by name and by value, and SLURM_JWT never recorded.
#include "core/environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/context.hpp"

namespace gcb {
namespace {

nlohmann::json recorded(std::vector<const char*> vars) {
  vars.push_back(nullptr);
  return recorded_environment(const_cast<char**>(vars.data()));
}

TEST(Environment, OnlyKnownConfigurationVariablesAreRecorded) {
  const auto env = recorded({"NCCL_DEBUG=INFO", "HOME=/root", "CUDA_VISIBLE_DEVICES=0,1", "SECRET_TOKEN=x",
                             "OMP_NUM_THREADS=4", "SLURM_JOB_ID=42", "UCX_TLS=rc", "FI_PROVIDER=efa", "PATH=/bin",
                             "OMPI_MCA_btl=^openib", "SLURM_NTASKS=8", "SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.e30.sig",
                             "SLURM_SOMETHING_NEW=x", "AWS_SECRET_ACCESS_KEY=abc"});
  EXPECT_EQ(env, nlohmann::json({{"CUDA_VISIBLE_DEVICES", "0,1"},
                                 {"FI_PROVIDER", "efa"},
                                 {"NCCL_DEBUG", "INFO"},
                                 {"OMPI_MCA_btl", "^openib"},
                                 {"OMP_NUM_THREADS", "4"},
                                 {"SLURM_JOB_ID", "42"},
                                 {"SLURM_NTASKS", "8"},
                                 {"UCX_TLS", "rc"}}));
}

TEST(Environment, SecretsAreRedactedByNameAndByValue) {
  // By name, inside a recorded family.
  EXPECT_EQ(redacted_value("NCCL_NET_TOKEN", "abc"), kRedacted);
  EXPECT_EQ(redacted_value("UCX_PASSWORD", "hunter2"), kRedacted);
  EXPECT_EQ(redacted_value("FI_EFA_API_KEY", "k"), kRedacted);
  // By value: a JWT, a bearer token, well-known token prefixes.
  EXPECT_EQ(redacted_value("NCCL_X", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"), kRedacted);
  EXPECT_EQ(redacted_value("NCCL_X", "Bearer abc.def"), kRedacted);
  EXPECT_EQ(redacted_value("NCCL_X", "ghp_0123456789abcdef0123"), kRedacted);
  // URLs keep everything but the password.
  EXPECT_EQ(redacted_value("UCX_X", "https://alice:s3cret@proxy.example:3128/path"),
            "https://alice:<redacted>@proxy.example:3128/path");
  EXPECT_EQ(redacted_value("UCX_X", "http://a:b@h1,http://c:d@h2"), "http://a:<redacted>@h1,http://c:<redacted>@h2");
  EXPECT_EQ(redacted_value("UCX_X", "http://user@host/x"), "http://user@host/x");
  // Ordinary settings stay as they are.
  for (const char* v : {"INFO", "0,1,2,3", "^openib", "mlx5_0:1,mlx5_1:1", "eth0", "/tmp/nccl.xml", "1.2.3"})
    EXPECT_EQ(redacted_value("NCCL_X", v), v);
}

TEST(Environment, TheRunContextNeverCarriesTheSlurmToken) {
  ::setenv("SLURM_JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", 1);
  ::setenv("NCCL_IB_HCA", "mlx5", 1);
  const auto ctx = collect_run_context({});
  ::unsetenv("SLURM_JWT");
  ::unsetenv("NCCL_IB_HCA");
  EXPECT_EQ(ctx.dump().find("eyJhbGciOiJIUzI1NiJ9"), std::string::npos);
  EXPECT_EQ(ctx.at("environment").at("NCCL_IB_HCA"), "mlx5");
}

}  // namespace
}  // namespace gcb
