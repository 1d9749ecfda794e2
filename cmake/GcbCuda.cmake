# Decides whether CUDA code is built. AUTO builds it whenever nvcc exists, also on machines
# without a GPU (our build and CI machines): GPU code must always compile, it runs only where
# a device is present.
set(GCB_HAVE_CUDA OFF)
if(NOT GCB_CUDA STREQUAL "OFF")
  # nvcc need not be on PATH: FindCUDAToolkit also looks at CUDAToolkit_ROOT, $CUDA_PATH and the
  # platform's default install location, and names the nvcc it found.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_NVCC_EXECUTABLE)
      set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  set(_gcb_cuda_skip "")
  if(CMAKE_CUDA_COMPILER)
    # The oldest toolkit we build with is CUDA 12.4 (C++20 in nvcc, the cuBLASLt and cuDNN 9 APIs
    # we call); older ones are refused with the version found.
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --version OUTPUT_VARIABLE _gcb_nvcc_out ERROR_QUIET)
    string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _gcb_match "${_gcb_nvcc_out}")
    set(GCB_NVCC_VERSION "${CMAKE_MATCH_1}")
    if(NOT GCB_NVCC_VERSION)
      set(_gcb_cuda_skip "could not read the version of ${CMAKE_CUDA_COMPILER}")
    elseif(GCB_NVCC_VERSION VERSION_LESS 12.4)
      set(_gcb_cuda_skip "nvcc ${GCB_NVCC_VERSION} (${CMAKE_CUDA_COMPILER}) is older than CUDA 12.4, the oldest we build with")
    endif()
  else()
    set(_gcb_cuda_skip "no CUDA compiler found (nvcc not on PATH, in $CUDA_PATH or /usr/local/cuda; set CMAKE_CUDA_COMPILER)")
  endif()
  if(_gcb_cuda_skip AND GCB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GCB_CUDA=ON but ${_gcb_cuda_skip}")
  elseif(_gcb_cuda_skip)
    # AUTO: say it loudly — a CPU-only binary on a GPU node WAIVEs every GPU case.
    message(WARNING "gcbench: building WITHOUT CUDA (CPU-only; every GPU case will be WAIVED): ${_gcb_cuda_skip}. "
                    "Pass -DGCB_CUDA=ON to make this an error, -DGCB_CUDA=OFF to silence it.")
  endif()
  if(NOT _gcb_cuda_skip)
    include(${CMAKE_CURRENT_LIST_DIR}/GcbCudaArch.cmake)
    enable_language(CUDA)
    # CMake 3.25 does not know that nvcc ≥ 12 speaks C++20; teach it the flag.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # Static CUDA runtime: the binary carries cudart and needs only the driver at run time.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    find_package(CUDAToolkit REQUIRED)
    include(${CMAKE_CURRENT_LIST_DIR}/GcbResourceCheck.cmake)
    gcb_capture_ptxas_reports()
    set(GCB_HAVE_CUDA ON)
  endif()
endif()
