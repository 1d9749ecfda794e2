# `gcbench train` tests (included from tests/bench/CMakeLists.txt).
gcb_add_test(test_train_cli SOURCES test_train_cli.cpp LIBS gcb_bench LABELS models)
target_compile_definitions(test_train_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_train_cli gcbench)
# --overlap under mpirun (the dp collectives from a second thread, beside the tp group:
# MPI_THREAD_MULTIPLE) gives the same losses and parameters, bit for bit, as the blocking run of
# the same layout on rank threads (OpenBLAS pinned to one thread in both, as train_world_dump).
if(GCB_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  set(_dump ${CMAKE_CURRENT_BINARY_DIR}/train_overlap)
  add_test(NAME train_mpi_overlap_equals_threads
           COMMAND sh -c "$<TARGET_FILE:gcbench> train --model tiny --dp 2 --tp 2 --zero 2 --steps 2 --warmup 1 --quiet --dump ${_dump}_threads.txt && ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 --oversubscribe $<TARGET_FILE:gcbench> train --model tiny --dp 2 --tp 2 --zero 2 --steps 2 --warmup 1 --overlap --quiet --dump ${_dump}_mpi.txt && ${CMAKE_COMMAND} -E compare_files ${_dump}_mpi.txt ${_dump}_threads.txt")
  set_tests_properties(train_mpi_overlap_equals_threads PROPERTIES
    LABELS mpi TIMEOUT 300
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1")
endif()
