# One generated header, gcb/config.hpp, says which optional parts this build has (GCB_HAVE_*,
# each 0 or 1), instead of compile definitions scattered over the targets. gcb_core exports the
# folder that holds it, so every target of ours can include it.
# The CUDA training backend (models/cuda_backend*) needs both the CUDA toolkit and cuBLASLt.
if(GCB_HAVE_CUDA AND GCB_HAVE_CUBLASLT)
  set(GCB_HAVE_CUDA_TRAINING ON)
else()
  set(GCB_HAVE_CUDA_TRAINING OFF)
endif()
set(GCB_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)
configure_file(${CMAKE_CURRENT_LIST_DIR}/config.hpp.in ${GCB_GENERATED_INCLUDE_DIR}/gcb/config.hpp)
