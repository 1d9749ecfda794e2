// The run context recorded with every result document: machine, software versions, GPUs,
// scheduler job, and only the environment variables that change what is measured, secrets
// redacted (core/environment.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gcb {

struct ContextOptions {
  std::vector<std::string> command_line;
  // Extra library versions known to the caller (NCCL, cuBLAS, cuDNN, MPI): name → version.
  nlohmann::json library_versions = nlohmann::json::object();
};

// Gathers everything once; cheap enough to call per run, not per case.
nlohmann::json collect_run_context(const ContextOptions& options);

// Versions of the GPU libraries found at run time (dlopen; none is a link dependency of the
// context): NCCL, cuBLASLt, cuDNN, MPI's library name. Missing ones are absent from the object.
nlohmann::json probe_library_versions();

// {"blas": {"library", "config", "threading": sequential|pthreads|openmp, "threads"} or null,
//  "openmp": {"max_threads", "wait_policy"} or null}, read from the running process.
nlohmann::json threading_json();

// Host facts used elsewhere (first-touch placement, thread counts).
int numa_node_count();
std::string cpu_model();

std::string gcbench_version();   // e.g. "0.1.0"
std::string gcbench_revision();  // git revision at build time, or "unknown"

}  // namespace gcb
