# GEMM tests (kernels/gemm), included from tests/kernels/CMakeLists.txt.
gcb_add_test(test_gemm_types SOURCES test_gemm_types.cpp LIBS gcb_gemm)
gcb_add_test(test_lt_linear SOURCES test_lt_linear.cpp LIBS gcb_gemm)
gcb_add_test(test_cpu_gemm SOURCES test_cpu_gemm.cpp LIBS gcb_gemm)
gcb_add_test(test_autotune_rounds SOURCES test_autotune_rounds.cpp LIBS gcb_gemm)
if(GCB_HAVE_CUDA AND GCB_HAVE_CUBLASLT)
  # Label gpu: skips with a reason when no device is present.
  gcb_add_test(test_cublaslt_gemm SOURCES test_cublaslt_gemm.cpp LIBS gcb_gemm LABELS gpu)
endif()
if(GCB_HAVE_CUDA AND GCB_HAVE_CUBLASLT AND TARGET gcb_train_kernels)
  # Which GELU cuBLASLt's epilogues compute, against our tanh-GELU kernels (label gpu).
  gcb_add_test(test_lt_gelu_epilogue SOURCES test_lt_gelu_epilogue.cpp LIBS gcb_gemm gcb_train_kernels LABELS gpu)
endif()
