# `gcbench gemm` tests, included from tests/bench/CMakeLists.txt.
gcb_add_test(test_gemm_cases SOURCES test_gemm_cases.cpp LIBS gcb_bench)
gcb_add_test(test_gemm_cli SOURCES test_gemm_cli.cpp LIBS gcb_reports gcb_gemm)
target_compile_definitions(test_gemm_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_gemm_cli gcbench)
