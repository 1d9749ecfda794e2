# `gcbench gemm` sources, added to gcb_bench (included from bench/CMakeLists.txt).
target_sources(gcb_bench PRIVATE gemm.cpp gemm_shapes.cpp gemm_cpu.cpp gemm_peer.cpp)
if(GCB_HAVE_CUDA AND GCB_HAVE_CUBLASLT)
  target_sources(gcb_bench PRIVATE gemm_gpu.cpp)
else()
  target_sources(gcb_bench PRIVATE gemm_gpu_none.cpp)
endif()
target_link_libraries(gcb_bench PUBLIC gcb_gemm)
