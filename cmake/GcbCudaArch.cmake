# GCB_CUDA_ARCHITECTURES: the GPU architectures the CUDA code is compiled for, in
# CMAKE_CUDA_ARCHITECTURES syntax. Default 90a when this nvcc accepts it, else 90. 90a is Hopper
# with its architecture-specific instructions (wgmma, TMA, setmaxnreg: PTX ISA, "Architecture-
# specific features"); its code runs on sm_90 devices only (H100, H200, GH200). CMake turns 90a
# into `--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]`, the -gencode spelling that
# nvcc 13 compiles as sm_90a alone (`-arch=sm_90a` may also run a plain sm_90 pass). Choose 90
# (any Hopper feature level), or a list such as "80;90" for other GPUs.
# Included by GcbCuda.cmake before enable_language(CUDA).

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

_gcb_nvcc_accepts(90a GCB_NVCC_HAS_SM90A)
if(GCB_NVCC_HAS_SM90A)
  set(_gcb_arch_default 90a)
else()
  set(_gcb_arch_default 90)
endif()
# A CMAKE_CUDA_ARCHITECTURES given on the command line (the spelling README used before) seeds
# the choice; the value an earlier gcbench configure cached by itself (help string "CUDA
# architectures", always 90) does not, so old build folders move to the new default.
if(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES})
  get_property(_gcb_arch_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(NOT _gcb_arch_help STREQUAL "CUDA architectures")
    set(_gcb_arch_default "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
endif()
set(GCB_CUDA_ARCHITECTURES "${_gcb_arch_default}" CACHE STRING
    "CUDA architectures (CMAKE_CUDA_ARCHITECTURES syntax): 90a (default when nvcc supports it), 90, or a list")
foreach(_gcb_arch IN LISTS GCB_CUDA_ARCHITECTURES)
  if(_gcb_arch MATCHES "^[0-9]+a$")
    _gcb_nvcc_accepts(${_gcb_arch} _gcb_ok)
    if(NOT _gcb_ok)
      message(FATAL_ERROR "GCB_CUDA_ARCHITECTURES=${GCB_CUDA_ARCHITECTURES}: nvcc ${CMAKE_CUDA_COMPILER} does not "
                          "accept ${_gcb_arch}; choose 90 (or upgrade to a toolkit with sm_${_gcb_arch})")
    endif()
  endif()
endforeach()
set(CMAKE_CUDA_ARCHITECTURES "${GCB_CUDA_ARCHITECTURES}" CACHE STRING "Set from GCB_CUDA_ARCHITECTURES" FORCE)
