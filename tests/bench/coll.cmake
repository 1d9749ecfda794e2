# gcbench coll unit tests on rank threads (label bench). The end-to-end CLI and MPI ctests are
# in coll_cli.cmake (include it from here once they have been run once against a linked gcbench).
gcb_add_test(test_coll SOURCES test_coll.cpp LIBS gcb_bench LABELS bench)
include(${CMAKE_CURRENT_SOURCE_DIR}/coll_cli.cmake)
