# gcbench p2p: matrices, expected-rate arithmetic, WAIVED device cases and rank-pair matrices on
# rank threads (label bench); the CLI end to end; an MPI run of rank mode (label mpi).
gcb_add_test(test_p2p SOURCES test_p2p.cpp LIBS gcb_bench LABELS bench)

set(_p2p_expect ${CMAKE_CURRENT_SOURCE_DIR}/expect_run.sh)
add_test(NAME p2p_cli_threads_3_ranks
         COMMAND ${_p2p_expect} 0 "src.dst +0 +1 +2$" "^ +2 +[0-9.]+ +[0-9.]+ +-$" "^ +0 +- +[0-9.]+ +[0-9.]+$"
                 "memcpy through the ThreadCommunicator"
                 -- $<TARGET_FILE:gcbench> p2p --mode rank --backend threads --ranks 3 --size 1M
                    --min-samples 3 --max-time 0.3)
add_test(NAME p2p_cli_bad_mode_exits_2
         COMMAND ${_p2p_expect} 2 "--mode" -- $<TARGET_FILE:gcbench> p2p --mode sideways)
add_test(NAME p2p_cli_device_waived_without_gpus
         COMMAND ${_p2p_expect} 0 "WAIVED" "needs two GPUs" -- $<TARGET_FILE:gcbench> p2p --mode device,host --size 1M
                 --min-samples 3 --max-time 0.3)
set_tests_properties(p2p_cli_threads_3_ranks p2p_cli_bad_mode_exits_2 p2p_cli_device_waived_without_gpus
                     PROPERTIES LABELS bench TIMEOUT 120 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

if(GCB_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  add_test(NAME mpi_p2p_np2
           COMMAND ${_p2p_expect} 0 "src.dst +0 +1$" "^ +1 +[0-9.]+ +-$" "MPI, host memory, between processes"
                   -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe ${MPIEXEC_PREFLAGS}
                      $<TARGET_FILE:gcbench> p2p --mode rank --backend mpi --size 1M --min-samples 3 --max-time 0.3)
  set_tests_properties(mpi_p2p_np2 PROPERTIES LABELS mpi TIMEOUT 120 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
