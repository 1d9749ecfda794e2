# gcbench coll end to end: the CLI on rank threads (label bench) and the MPI runs (label mpi)
# under mpirun --oversubscribe: a sweep, mismatched arguments, a failing rank, #wrong.
set(_expect ${GCB_EXPECT_RUN})
add_test(NAME coll_cli_threads_all
         COMMAND ${_expect} 0 "# Avg bus bandwidth" "out-of-place +in-place" "busbw" "#wrong"
                 "^ +524288 +131072 +float +sum +-1" "# statistics"
                 -- $<TARGET_FILE:gcbench> coll --backend threads --ranks 4 -b 8 -e 512K -f 4 --op all
                    --min-samples 3 --max-time 0.5)
set_tests_properties(coll_cli_threads_all PROPERTIES LABELS bench TIMEOUT 300 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME coll_cli_wrong_exits_1
         COMMAND ${_expect} 1 "FAILED" -- $<TARGET_FILE:gcbench> coll --backend threads --ranks 2 -b 1K -e 1K
                 --test-corrupt 1:0 --min-samples 2)
add_test(NAME coll_cli_bad_size_exits_2
         COMMAND ${_expect} 2 "12Q" -- $<TARGET_FILE:gcbench> coll --backend threads -b 12Q)
add_test(NAME coll_cli_failing_rank
         COMMAND ${_expect} 3 "rank 1 on host .* failed: test hook" -- $<TARGET_FILE:gcbench> coll --backend threads
                 --ranks 3 -b 1K -e 1K --test-fail-rank 1 --timeout 10)
set_tests_properties(coll_cli_wrong_exits_1 coll_cli_bad_size_exits_2 coll_cli_failing_rank PROPERTIES
                     LABELS bench TIMEOUT 60 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

if(GCB_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  set(_mpirun ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe ${MPIEXEC_PREFLAGS})
  add_test(NAME mpi_coll_np2
           COMMAND ${_expect} 0 "# Avg bus bandwidth" "backend: mpi +ranks: 2 " "# library: .*MPI" "Rank +1 Group"
                   -- ${_mpirun} $<TARGET_FILE:gcbench> coll --backend mpi -b 8 -e 64K --min-samples 3 --max-time 0.5)
  add_test(NAME mpi_coll_mismatched_arguments
           COMMAND ${_expect} 2 "rank 1 on host .* different arguments"
                   -- ${_mpirun} ${CMAKE_CURRENT_SOURCE_DIR}/rank1_extra_flag.sh $<TARGET_FILE:gcbench> coll
                      --backend mpi -b 8 -e 1K)
  add_test(NAME mpi_coll_failing_rank
           COMMAND ${_expect} nonzero "rank 1 on host .* failed: test hook"
                   -- ${_mpirun} $<TARGET_FILE:gcbench> coll --backend mpi -b 1K -e 1K --test-fail-rank 1)
  add_test(NAME mpi_coll_wrong_exits_1
           COMMAND ${_expect} 1 "Out of bounds values : 2 FAILED"
                   -- ${_mpirun} $<TARGET_FILE:gcbench> coll --backend mpi --op all_reduce -b 1K -e 1K
                      --test-corrupt 1:3 --min-samples 2)
  # The same-run peer tool: every side runs, and exit 0 says the library side's results (gcbench
  # coll's own launch on MPI) were exact at every size (#wrong would exit 1).
  add_test(NAME mpi_coll_peers_np2
           COMMAND ${_expect} 0 "bare/lib" "^ +all_reduce +8 " "^ +alltoall +64 "
                   -- ${_mpirun} --bind-to none $<TARGET_FILE:gcb_coll_peers> 1 64)
  set_tests_properties(mpi_coll_np2 mpi_coll_mismatched_arguments mpi_coll_failing_rank mpi_coll_wrong_exits_1
                       mpi_coll_peers_np2
                       PROPERTIES LABELS mpi TIMEOUT 120 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
# --device cpu: the collectives move host memory, on the first built host backend of this launch
# (rank threads here), whatever GPUs exist.
add_test(NAME coll_cli_device_cpu_is_host_memory
         COMMAND ${_expect} 0 "backend: threads" "# Avg bus bandwidth"
                 -- $<TARGET_FILE:gcbench> coll --device cpu --ranks 2 -b 1K -e 1K --min-samples 2 --max-time 0.3)
set_tests_properties(coll_cli_device_cpu_is_host_memory PROPERTIES LABELS bench TIMEOUT 300
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
