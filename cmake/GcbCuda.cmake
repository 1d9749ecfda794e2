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
  if(CMAKE_CUDA_COMPILER)
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
  elseif(GCB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GCB_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()
