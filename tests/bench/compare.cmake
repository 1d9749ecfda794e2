# `gcbench compare` / `export` CLI tests (included from tests/bench/CMakeLists.txt): they run the
# built binary, so they need its path and must build after it.
gcb_add_test(test_compare_cli SOURCES test_compare_cli.cpp LIBS gcb_reports)
target_compile_definitions(test_compare_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_compare_cli gcbench)
