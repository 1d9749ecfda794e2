# `gcbench train` tests (included from tests/bench/CMakeLists.txt).
gcb_add_test(test_train_cli SOURCES test_train_cli.cpp LIBS gcb_bench LABELS models)
target_compile_definitions(test_train_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_train_cli gcbench)
