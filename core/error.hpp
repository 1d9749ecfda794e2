// One family of error checks for the whole suite. Every macro funnels into
// check_failed(), which names the library, the expression, file:line, host and rank, and throws
// gcb::Fault. Never compiled out. Bad user input is a separate exception (UsageError → exit 2).
#pragma once

#include <stdexcept>
#include <string>

namespace gcb {

// A failed call into a library or a broken invariant: the run cannot go on.
class Fault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the user (flag, size, device, file): one clear line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes shared by every subcommand (docs/design.md "Conventions").
inline constexpr int kExitOk = 0;
inline constexpr int kExitVerifyFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFault = 3;
inline constexpr int kExitNoisy = 4;  // compare only: no regression, but a gated case was too noisy to judge

// The rank reported in error messages; set by whoever starts ranks (threads or processes).
void set_error_rank(int rank);
int error_rank();
std::string host_name();

// Formats "<lib> error: <what> in `<expr>` at file:line (host H, rank R)" and throws Fault.
[[noreturn]] void check_failed(const char* lib, const char* expr, const std::string& what, const char* file, int line);

}  // namespace gcb

#define GCB_CHECK(cond, msg)                                                       \
  do {                                                                             \
    if (!(cond)) ::gcb::check_failed("gcbench", #cond, (msg), __FILE__, __LINE__); \
  } while (0)

#define CUDA_CHECK(expr)                                                                                               \
  do {                                                                                                                 \
    const cudaError_t gcb_err_ = (expr);                                                                               \
    if (gcb_err_ != cudaSuccess) ::gcb::check_failed("CUDA", #expr, cudaGetErrorString(gcb_err_), __FILE__, __LINE__); \
  } while (0)

#define CU_CHECK(expr)                                                                            \
  do {                                                                                            \
    const CUresult gcb_err_ = (expr);                                                             \
    if (gcb_err_ != CUDA_SUCCESS) {                                                               \
      const char* gcb_s_ = nullptr;                                                               \
      cuGetErrorString(gcb_err_, &gcb_s_);                                                        \
      ::gcb::check_failed("CUDA driver", #expr, gcb_s_ ? gcb_s_ : "unknown", __FILE__, __LINE__); \
    }                                                                                             \
  } while (0)

#define NCCL_CHECK(expr)                                                                    \
  do {                                                                                      \
    const ncclResult_t gcb_err_ = (expr);                                                   \
    if (gcb_err_ != ncclSuccess && gcb_err_ != ncclInProgress)                              \
      ::gcb::check_failed("NCCL", #expr, ncclGetErrorString(gcb_err_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                       \
  do {                                                                                           \
    const cublasStatus_t gcb_err_ = (expr);                                                      \
    if (gcb_err_ != CUBLAS_STATUS_SUCCESS)                                                       \
      ::gcb::check_failed("cuBLAS", #expr, cublasGetStatusString(gcb_err_), __FILE__, __LINE__); \
  } while (0)

#define CUDNN_CHECK(expr)                                                                     \
  do {                                                                                        \
    const cudnnStatus_t gcb_err_ = (expr);                                                    \
    if (gcb_err_ != CUDNN_STATUS_SUCCESS)                                                     \
      ::gcb::check_failed("cuDNN", #expr, cudnnGetErrorString(gcb_err_), __FILE__, __LINE__); \
  } while (0)

#define MPI_CHECK(expr)                                                                                          \
  do {                                                                                                           \
    const int gcb_err_ = (expr);                                                                                 \
    if (gcb_err_ != MPI_SUCCESS) {                                                                               \
      char gcb_s_[MPI_MAX_ERROR_STRING];                                                                         \
      int gcb_len_ = 0;                                                                                          \
      MPI_Error_string(gcb_err_, gcb_s_, &gcb_len_);                                                             \
      ::gcb::check_failed("MPI", #expr, std::string(gcb_s_, static_cast<size_t>(gcb_len_)), __FILE__, __LINE__); \
    }                                                                                                            \
  } while (0)

// NVML is loaded at run time (core/nvml.hpp); its calls return an int status.
#define NVML_CHECK(expr)                                                                                            \
  do {                                                                                                              \
    const int gcb_err_ = (expr);                                                                                    \
    if (gcb_err_ != 0) ::gcb::check_failed("NVML", #expr, ::gcb::nvml::error_string(gcb_err_), __FILE__, __LINE__); \
  } while (0)
