gcb_add_test(test_attn_cases SOURCES test_attn_cases.cpp LIBS gcb_bench)
target_compile_definitions(test_attn_cases PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_attn_cases gcbench)
