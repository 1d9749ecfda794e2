# GCB_CUDA_ARCHITECTURES: the GPU architectures the CUDA code is compiled for, in
# CMAKE_CUDA_ARCHITECTURES syntax. The default follows the toolkit, as nccl-tests and NVBench
# pick theirs: native code (cubins) for every data-centre architecture the toolkit supports plus
# one PTX target that the driver JIT-compiles for newer GPUs —
#   CUDA ≥ 12.8:        80-real;90-real;100-real;120-real;120-virtual  (A100, H100/H200, B200/GB200, RTX 50 / RTX PRO)
#   CUDA 12.4 – 12.7:   80-real;90-real;90-virtual                     (Blackwell through the compute_90 PTX)
# A cubin for sm_XY also runs on sm_XZ with Z ≥ Y (A10/A40 8.6 and L40S 8.9 run the sm_80 code).
# Our kernels use sm_80-level instructions only (mma.sync, ldmatrix, cp.async); architecture-
# specific targets such as 90a (wgmma, TMA, setmaxnreg: PTX ISA "Architecture-specific features")
# are opt-in — their code runs on that architecture alone. A list given here is used as is.
# Included by GcbCuda.cmake before enable_language(CUDA), with GCB_NVCC_VERSION known.

# Whether nvcc accepts `arch` (e.g. 90a) as a -gencode target: a --dryrun fails fast on an
# unknown architecture without compiling anything.
function(_gcb_nvcc_accepts arch out)
  execute_process(
    COMMAND ${CMAKE_CUDA_COMPILER} --dryrun -gencode=arch=compute_${arch},code=sm_${arch} -c -x cu /dev/null -o /dev/null
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

if(GCB_NVCC_VERSION VERSION_GREATER_EQUAL 12.8)
  set(_gcb_arch_default "80-real;90-real;100-real;120-real;120-virtual")
else()
  set(_gcb_arch_default "80-real;90-real;90-virtual")
endif()
set(_gcb_arch_help "CUDA architectures (CMAKE_CUDA_ARCHITECTURES syntax); default by toolkit: ${_gcb_arch_default}")
# A CMAKE_CUDA_ARCHITECTURES given on the command line seeds the choice. A value an earlier
# gcbench configure chose by itself (90a, or 90: help strings of its own) does not: such build
# folders move to the new default. A value the user set stays.
if(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES})
  get_property(_gcb_cached_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(NOT _gcb_cached_help MATCHES "^(CUDA architectures|Set from GCB_CUDA_ARCHITECTURES)$")
    set(_gcb_arch_default "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
endif()
if(DEFINED CACHE{GCB_CUDA_ARCHITECTURES})
  get_property(_gcb_cached_help CACHE GCB_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(_gcb_cached_help MATCHES "^CUDA architectures \\(CMAKE_CUDA_ARCHITECTURES syntax\\): 90a \\(default")
    unset(GCB_CUDA_ARCHITECTURES CACHE)
  endif()
endif()
set(GCB_CUDA_ARCHITECTURES "${_gcb_arch_default}" CACHE STRING "${_gcb_arch_help}")
foreach(_gcb_arch IN LISTS GCB_CUDA_ARCHITECTURES)
  string(REGEX REPLACE "-(real|virtual)$" "" _gcb_arch_plain "${_gcb_arch}")
  if(_gcb_arch_plain MATCHES "^[0-9]+[af]?$")
    _gcb_nvcc_accepts(${_gcb_arch_plain} _gcb_ok)
    if(NOT _gcb_ok)
      message(FATAL_ERROR "GCB_CUDA_ARCHITECTURES=${GCB_CUDA_ARCHITECTURES}: nvcc ${GCB_NVCC_VERSION} "
                          "(${CMAKE_CUDA_COMPILER}) does not accept ${_gcb_arch_plain}; remove it or use a newer "
                          "toolkit")
    endif()
  endif()
endforeach()
set(CMAKE_CUDA_ARCHITECTURES "${GCB_CUDA_ARCHITECTURES}" CACHE STRING "Set from GCB_CUDA_ARCHITECTURES" FORCE)
