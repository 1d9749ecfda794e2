// The run context of a result document (context.hpp): machine, OS, compiler, CPU, NUMA nodes, GPUs, library versions,
// threading and the recorded environment (environment.hpp).
#include "core/context.hpp"
#include "gcb/config.hpp"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvml.hpp"

extern char** environ;

namespace gcb {

namespace {

uint64_t total_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string os_release() {
  std::ifstream f("/etc/os-release");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      v.erase(std::remove(v.begin(), v.end(), '"'), v.end());
      return v;
    }
  }
  return "unknown";
}

std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::string format_cuda_version(int v) {
  if (v <= 0) return {};
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

nlohmann::json gpu_json(const gpu::DeviceInfo& d) {
  nlohmann::json g = {
      {"index", d.index},
      {"name", d.name},
      {"uuid", d.uuid},
      {"pci_bus_id", d.pci_bus_id},
      {"memory_bytes", d.memory_bytes},
      {"sm_count", d.sm_count},
      {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
      {"l2_bytes", d.l2_bytes},
      {"memory_bus_bits", d.memory_bus_bits},
      {"memory_clock_khz", d.memory_clock_khz},
      {"sm_clock_khz", d.sm_clock_khz},
      {"ecc", d.ecc},
  };
  if (const auto s = nvml::static_info(d.pci_bus_id)) {
    auto put = [&](const char* key, const auto& opt) { g[key] = opt ? nlohmann::json(*opt) : nlohmann::json(nullptr); };
    put("power_limit_mw", s->power_limit_mw);
    put("mem_clock_max_mhz", s->mem_clock_max_mhz);
    put("pcie_gen_current", s->pcie_gen_current);
    put("pcie_gen_max", s->pcie_gen_max);
    put("pcie_width_current", s->pcie_width_current);
    put("pcie_width_max", s->pcie_width_max);
    put("mig_enabled", s->mig_enabled);
  }
  if (const auto s = nvml::sample(d.pci_bus_id)) {
    g["sm_clock_max_mhz"] = s->sm_clock_max_mhz ? nlohmann::json(*s->sm_clock_max_mhz) : nlohmann::json(nullptr);
  }
  return g;
}

}  // namespace

int numa_node_count() {
  namespace fs = std::filesystem;
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/node", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4]))) ++n;
  }
  return std::max(n, 1);
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string gcbench_version() { return GCB_VERSION; }

nlohmann::json probe_library_versions() {
  nlohmann::json v = nlohmann::json::object();
  // Each entry: the sonames to try, the version symbol, and how to print its integer.
  auto probe = [](std::initializer_list<const char*> sonames, const char* symbol) -> void* {
    for (const char* so : sonames) {
      if (void* h = dlopen(so, RTLD_LAZY | RTLD_LOCAL)) {
        if (void* f = dlsym(h, symbol)) return f;
        dlclose(h);
      }
    }
    return nullptr;
  };
  if (auto* f = reinterpret_cast<int (*)(int*)>(probe({"libnccl.so.2", "libnccl.so"}, "ncclGetVersion"))) {
    int code = 0;
    if (f(&code) == 0) {  // NCCL ≥ 2.9 encodes major*10000 + minor*100 + patch
      v["nccl"] = fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
    }
  }
  if (auto* f = reinterpret_cast<size_t (*)()>(
          probe({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, "cublasLtGetVersion"))) {
    const size_t code = f();  // major*10000 + minor*100 + patch
    v["cublaslt"] = fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  }
  if (auto* f = reinterpret_cast<size_t (*)()>(probe({"libcudnn.so.9", "libcudnn.so"}, "cudnnGetVersion"))) {
    const size_t code = f();  // cuDNN 9: major*10000 + minor*100 + patch
    v["cudnn"] = fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  }
  return v;
}

// The BLAS library and thread pools this process computes with, read from the process itself:
// OpenBLAS's openblas_get_config / openblas_get_parallel / openblas_get_num_threads and OpenMP's
// omp_get_max_threads are looked up among the libraries already loaded (core links neither), so
// a binary built without them records null. Two pools (OpenBLAS's pthreads beside our OpenMP
// loops) spin against each other on a CPU; the record says which one a result ran with.
nlohmann::json threading_json() {
  nlohmann::json t;
  nlohmann::json blas = nullptr;
  if (auto* config = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    blas = {{"library", "OpenBLAS"}, {"config", std::string(config())}};
    if (auto* parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) {
      static constexpr const char* kKinds[] = {"sequential", "pthreads", "openmp"};
      const int kind = parallel();
      blas["threading"] = kind >= 0 && kind <= 2 ? kKinds[kind] : "unknown";
    }
    if (auto* threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
      blas["threads"] = threads();
    // The kernel family it runs (the CPU's, or OPENBLAS_CORETYPE's): the training backend's bits
    // depend on it, never on the thread counts (kernels/gemm/cpu_gemm.hpp).
    if (auto* core = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename")))
      blas["core"] = std::string(core());
  }
  t["blas"] = blas;
  nlohmann::json openmp = nullptr;
  if (auto* max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"))) {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    openmp = {{"max_threads", max_threads()}, {"wait_policy", policy ? policy : "default"}};
  }
  t["openmp"] = openmp;
  return t;
}

nlohmann::json collect_run_context(const ContextOptions& options) {
  utsname u{};
  uname(&u);
  const auto now = std::chrono::system_clock::now();
  nlohmann::json ctx;
  ctx["date"] = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(now)));
  ctx["host"] = host_name();
  ctx["gcbench"] = {{"version", gcbench_version()}, {"revision", gcbench_revision()}};
  ctx["command_line"] = options.command_line;
  ctx["cpu"] = {{"model", cpu_model()},
                {"logical_cores", std::thread::hardware_concurrency()},
                {"numa_nodes", numa_node_count()}};
  ctx["memory_bytes"] = total_memory_bytes();
  ctx["os"] = {{"name", os_release()}, {"kernel", std::string(u.release)}, {"arch", std::string(u.machine)}};
  ctx["compiler"] = compiler();
  ctx["threading"] = threading_json();

  const gpu::Runtime& rt = gpu::runtime();
  nlohmann::json cuda = {{"built", rt.built},
                         {"runtime_version", format_cuda_version(rt.runtime_version)},
                         {"driver_version", format_cuda_version(rt.driver_version)}};
  if (!rt.unavailable_reason.empty()) cuda["unavailable_reason"] = rt.unavailable_reason;
  ctx["cuda"] = cuda;
  ctx["nvml"] = nvml::available() ? nlohmann::json{{"driver_version", nvml::driver_version()}}
                                  : nlohmann::json{{"unavailable_reason", nvml::unavailable_reason()}};
  nlohmann::json libraries = probe_library_versions();
  libraries.update(options.library_versions);
  ctx["libraries"] = libraries;
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& d : rt.devices) gpus.push_back(gpu_json(d));
  ctx["gpus"] = gpus;

  nlohmann::json slurm = nullptr;
  if (const char* job = std::getenv("SLURM_JOB_ID")) {
    const char* nodes = std::getenv("SLURM_JOB_NODELIST");
    slurm = {{"job_id", job}, {"node_list", nodes ? nodes : ""}};
  }
  ctx["slurm"] = slurm;
  ctx["environment"] = recorded_environment(environ);
  return ctx;
}

}  // namespace gcb
