# Finds every dependency once and exposes it as a gcb::<name> target. Required: fmt, CLI11,
# nlohmann-json (header-only fallbacks from GCB_DEPS_DIR for GPU machines without our Debian
# packages; GCB_FMT_HEADER_ONLY for binaries that must not need libfmt.so). Optional, each reported in the configure summary: NCCL, cuBLASLt, cuDNN, NVTX3,
# MPI, hwloc, OpenBLAS, OpenMP, GoogleTest, Google Benchmark.
find_package(PkgConfig QUIET)

# Each optional library is used when found unless its GCB_ENABLE_<X> is OFF; an OFF build
# configures and builds without it (the features it backs report themselves unavailable).
option(GCB_ENABLE_MPI "Use MPI (the mpi collective backend, multi-process launches) when found" ON)
option(GCB_ENABLE_GLOO "Use Gloo (the gloo collective backend, launches without MPI) when found" ON)
option(GCB_ENABLE_NCCL "Use NCCL (the nccl collective backend) when found" ON)
option(GCB_ENABLE_CUDNN "Use cuDNN (the cudnn attention implementation) when found" ON)
option(GCB_ENABLE_HWLOC "Use hwloc for topology discovery when found (else sysfs)" ON)
option(GCB_ENABLE_OPENBLAS "Use OpenBLAS (CPU GEMM, the CPU training backend's matmul) when found" ON)
option(GCB_ENABLE_NUMA "Use libnuma to bind host buffers to NUMA nodes when found" ON)

# --- header-only or packaged libraries we always need ------------------------------------------
# GCB_FMT_HEADER_ONLY: the system fmt's header-only target, so no binary needs libfmt.so at run time
# (scripts/gpu-bundle.sh: the bundle runs on machines without our Debian packages).
option(GCB_FMT_HEADER_ONLY "Use fmt header-only (fmt::fmt-header-only): no libfmt.so needed at run time" OFF)
find_package(fmt QUIET CONFIG)
add_library(gcb_fmt INTERFACE)
add_library(gcb::fmt ALIAS gcb_fmt)
if(fmt_FOUND AND GCB_FMT_HEADER_ONLY AND TARGET fmt::fmt-header-only)
  target_link_libraries(gcb_fmt INTERFACE fmt::fmt-header-only)
  set(GCB_FMT_SOURCE "system fmt ${fmt_VERSION}, header-only")
elseif(fmt_FOUND)
  target_link_libraries(gcb_fmt INTERFACE fmt::fmt)
  set(GCB_FMT_SOURCE "system fmt ${fmt_VERSION}")
elseif(GCB_DEPS_DIR AND EXISTS ${GCB_DEPS_DIR}/include/fmt/format.h)
  target_include_directories(gcb_fmt SYSTEM INTERFACE ${GCB_DEPS_DIR}/include)
  target_compile_definitions(gcb_fmt INTERFACE FMT_HEADER_ONLY=1)
  set(GCB_FMT_SOURCE "header-only from ${GCB_DEPS_DIR}")
else()
  message(FATAL_ERROR "fmt not found: run scripts/install-deps.sh, or pass -DGCB_DEPS_DIR")
endif()

find_package(CLI11 QUIET CONFIG)
add_library(gcb_cli11 INTERFACE)
add_library(gcb::cli11 ALIAS gcb_cli11)
if(CLI11_FOUND)
  target_link_libraries(gcb_cli11 INTERFACE CLI11::CLI11)
  set(GCB_CLI11_SOURCE "system CLI11 ${CLI11_VERSION}")
elseif(GCB_DEPS_DIR AND EXISTS ${GCB_DEPS_DIR}/include/CLI/CLI.hpp)
  target_include_directories(gcb_cli11 SYSTEM INTERFACE ${GCB_DEPS_DIR}/include)
  set(GCB_CLI11_SOURCE "header-only from ${GCB_DEPS_DIR}")
else()
  message(FATAL_ERROR "CLI11 not found: run scripts/install-deps.sh, or pass -DGCB_DEPS_DIR")
endif()

find_package(nlohmann_json 3.10 QUIET CONFIG)
add_library(gcb_json INTERFACE)
add_library(gcb::json ALIAS gcb_json)
if(nlohmann_json_FOUND)
  target_link_libraries(gcb_json INTERFACE nlohmann_json::nlohmann_json)
  set(GCB_JSON_SOURCE "system nlohmann-json ${nlohmann_json_VERSION}")
elseif(GCB_DEPS_DIR AND EXISTS ${GCB_DEPS_DIR}/include/nlohmann/json.hpp)
  target_include_directories(gcb_json SYSTEM INTERFACE ${GCB_DEPS_DIR}/include)
  set(GCB_JSON_SOURCE "header-only from ${GCB_DEPS_DIR}")
else()
  message(FATAL_ERROR "nlohmann-json not found: run scripts/install-deps.sh, or pass -DGCB_DEPS_DIR")
endif()

find_package(Threads REQUIRED)

# --- OpenMP: host memory kernels (and the classic STREAM peer) use it --------------------------
find_package(OpenMP QUIET COMPONENTS CXX)
set(GCB_HAVE_OPENMP ${OpenMP_CXX_FOUND})

# --- CUDA libraries -------------------------------------------------------------------------
include(GcbFindCudaLibrary)
set(GCB_NCCL_ROOT "" CACHE PATH "Folder with include/nccl.h and lib/libnccl.so[.2]; only it is searched when set")
set(GCB_CUDNN_ROOT "" CACHE PATH "Folder with include/cudnn.h and lib/libcudnn.so[.9]; only it is searched when set")
set(GCB_HAVE_NCCL OFF)
set(GCB_HAVE_CUBLASLT OFF)
set(GCB_HAVE_CUDNN OFF)
set(GCB_HAVE_NVTX OFF)
if(GCB_HAVE_CUDA)
  if(TARGET CUDA::cublasLt)
    set(GCB_HAVE_CUBLASLT ON)
  endif()
  # NCCL ≥ 2.18 (ncclCommSplit); cuDNN ≥ 9.0 (the backend graph API as used in
  # kernels/attention/cudnn_backend.cpp). GCB_NCCL_ROOT / GCB_CUDNN_ROOT point at a folder with
  # include/ and lib/; without them the toolkit, the system, /usr/local/cuda-* and PyTorch's wheels
  # (site-packages/nvidia/nccl, nvidia/cudnn) are searched, in that order
  # (scripts/gpu-lease.sh --build points the roots at the wheels).
  if(GCB_ENABLE_NCCL)
    gcb_find_cuda_library(NCCL HEADER nccl.h NAMES nccl SONAME libnccl.so.2 VERSION_HEADER nccl.h
                          MACROS NCCL_MAJOR NCCL_MINOR NCCL_PATCH MINIMUM 2.18.0 TARGET gcb_nccl WHEEL nccl)
  endif()
  if(GCB_HAVE_NCCL)
    add_library(gcb::nccl ALIAS gcb_nccl)
  endif()
  if(GCB_ENABLE_CUDNN)
    gcb_find_cuda_library(CUDNN HEADER cudnn.h NAMES cudnn SONAME libcudnn.so.9 VERSION_HEADER cudnn_version.h
                          MACROS CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL MINIMUM 9.0.0 TARGET gcb_cudnn WHEEL cudnn
                          VERSIONED_HEADERS cudnn_v9.h cudnn_version_v9.h)
  endif()
  if(GCB_HAVE_CUDNN)
    add_library(gcb::cudnn ALIAS gcb_cudnn)
  endif()
endif()
# NVTX3 is header-only (needs only -ldl); the CUDA toolkit ships it.
find_path(GCB_NVTX3_INCLUDE nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
add_library(gcb_nvtx INTERFACE)
add_library(gcb::nvtx ALIAS gcb_nvtx)
if(GCB_NVTX3_INCLUDE)
  target_include_directories(gcb_nvtx SYSTEM INTERFACE ${GCB_NVTX3_INCLUDE})
  target_link_libraries(gcb_nvtx INTERFACE ${CMAKE_DL_LIBS})
  set(GCB_HAVE_NVTX ON)
endif()

# --- host-side optional libraries -----------------------------------------------------------
set(GCB_HAVE_MPI OFF)
if(GCB_ENABLE_MPI)
  # MPI outside PATH (HPC-X, Open MPI under /opt, EL's /usr/lib64/openmpi): FindMPI looks under
  # MPI_HOME (variable or environment); HPC-X's environment names its Open MPI as HPCX_MPI_DIR.
  if(NOT MPI_HOME AND NOT DEFINED ENV{MPI_HOME})
    if(DEFINED ENV{HPCX_MPI_DIR})
      set(MPI_HOME $ENV{HPCX_MPI_DIR})
    elseif(NOT EXISTS /usr/bin/mpicc AND EXISTS /usr/lib64/openmpi/bin/mpicc)
      set(MPI_HOME /usr/lib64/openmpi)
    endif()
  endif()
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(GCB_HAVE_MPI ON)
  endif()
endif()

# Gloo (facebookincubator/gloo; Debian libgloo-dev ships its CMake package, target `gloo`).
set(GCB_HAVE_GLOO OFF)
if(GCB_ENABLE_GLOO)
  find_package(Gloo CONFIG QUIET)
  if(TARGET gloo)
    set(GCB_HAVE_GLOO ON)
  endif()
endif()

set(GCB_HAVE_HWLOC OFF)
set(GCB_HAVE_NUMA OFF)
set(OPENBLAS_FOUND OFF)
if(PkgConfig_FOUND)
  # GCB_HAVE_<NAME> ON and PkgConfig::<NAME> when GCB_ENABLE_<NAME> and pkg-config finds `module`.
  macro(_gcb_optional_pkg name module)
    if(GCB_ENABLE_${name})
      pkg_check_modules(${name} QUIET IMPORTED_TARGET ${module})
      if(${name}_FOUND)
        set(GCB_HAVE_${name} ON)
      endif()
    endif()
  endmacro()
  _gcb_optional_pkg(HWLOC hwloc)
  _gcb_optional_pkg(NUMA numa)
  # OpenBLAS built on OpenMP shares our loops' thread pool; the default pthreads build keeps a
  # pool of its own whose threads spin while OpenMP's work, and the other way round. Debian
  # installs the variants side by side (libopenblas-openmp-dev) and points the plain
  # openblas.pc at the highest-priority one, so the OpenMP variant's own .pc is looked up first.
  if(GCB_ENABLE_OPENBLAS)
    find_file(GCB_OPENBLAS_OPENMP_PC openblas.pc
              PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/pkgconfig lib/openblas-openmp/pkgconfig
              NO_CACHE)
    set(_gcb_pc_path "$ENV{PKG_CONFIG_PATH}")
    if(GCB_OPENBLAS_OPENMP_PC)
      get_filename_component(_gcb_pc_dir ${GCB_OPENBLAS_OPENMP_PC} DIRECTORY)
      set(ENV{PKG_CONFIG_PATH} "${_gcb_pc_dir}:${_gcb_pc_path}")
    endif()
    pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
    if(OPENBLAS_FOUND)
      pkg_get_variable(_gcb_openblas_config openblas openblas_config)
    endif()
    set(ENV{PKG_CONFIG_PATH} "${_gcb_pc_path}")
  endif()
endif()
set(GCB_HAVE_OPENBLAS ${OPENBLAS_FOUND})
if(NOT GCB_HAVE_OPENBLAS)
  set(GCB_HAVE_OPENBLAS OFF)
endif()
set(GCB_OPENBLAS_THREADING "")
if(GCB_HAVE_OPENBLAS)
  if(_gcb_openblas_config MATCHES "USE_OPENMP=1")
    set(GCB_OPENBLAS_THREADING "OpenMP")
  else()
    set(GCB_OPENBLAS_THREADING "own pthreads pool: competes with the OpenMP loops (install libopenblas-openmp-dev)")
  endif()
endif()

# --- test and benchmark frameworks ----------------------------------------------------------
set(GCB_GTEST_SOURCE "not found")
if(GCB_BUILD_TESTS)
  find_package(GTest QUIET CONFIG)
  if(GTest_FOUND)
    set(GCB_GTEST_SOURCE "system GoogleTest ${GTest_VERSION}")
  elseif(GCB_DEPS_DIR AND EXISTS ${GCB_DEPS_DIR}/googletest/CMakeLists.txt)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory(${GCB_DEPS_DIR}/googletest ${CMAKE_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL)
    if(NOT TARGET GTest::gtest)  # googletest ≥ 1.11 defines these aliases itself
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
    set(GCB_GTEST_SOURCE "built from ${GCB_DEPS_DIR}/googletest")
  else()
    message(WARNING "GoogleTest not found: tests are not built")
    set(GCB_BUILD_TESTS OFF)
  endif()
endif()
set(GCB_HAVE_BENCHMARK OFF)
if(GCB_BUILD_MICRO)
  find_package(benchmark QUIET CONFIG)
  if(benchmark_FOUND)
    set(GCB_HAVE_BENCHMARK ON)
  endif()
endif()
