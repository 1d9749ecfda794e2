# Failure behaviour end to end (README "Failure behaviour"): the CLI tests, and under mpirun
# (label mpi) that only world rank 0 writes, that several Worlds share one MPI initialisation,
# and that a stopped rank ends the run within --timeout.
gcb_add_test(test_failure_cli SOURCES test_failure_cli.cpp LIBS gcb_bench LABELS bench)  # the tables, for their names
target_compile_definitions(test_failure_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_failure_cli gcbench)

# Tight resource limits (ulimit -v; ulimit -u for another user through setpriv): a clear refusal
# (exit 3, one line) or a normal run, never a hang before main() or the OpenMP runtime's exit 1.
# Skipped (exit 77) with the reason where the limit cannot be set (no root, no setpriv).
foreach(_limit address_space threads)
  add_test(NAME tight_limits_${_limit} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tight_limits.sh $<TARGET_FILE:gcbench> ${_limit})
  set_tests_properties(tight_limits_${_limit} PROPERTIES LABELS "bench;limits" SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()

# Ctrl-C and scancel keep what finished (core/interrupt.hpp): a run stopped by SIGINT or SIGTERM
# writes its finished results, marked interrupted, and exits 130 / 143 (interrupted_run.sh).
foreach(_sig INT TERM)
  add_test(NAME interrupted_threads_sig${_sig}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interrupted_run.sh $<TARGET_FILE:gcbench> threads ${_sig})
  set_tests_properties(interrupted_threads_sig${_sig} PROPERTIES LABELS "bench;interrupt" TIMEOUT 120)
endforeach()
# name:MODE:SIGNAL of the other single-process modes (interrupted_run.sh says what each does).
foreach(_case interrupted_train_sigINT:train:INT interrupted_under_timeout_sigTERM:timeout:TERM
              interrupted_signal_twice_at_once:copy:TERM interrupted_threads_twice:twice:INT)
  string(REPLACE ":" ";" _case ${_case})
  list(GET _case 0 _name)
  list(GET _case 1 _mode)
  list(GET _case 2 _sig)
  add_test(NAME ${_name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interrupted_run.sh $<TARGET_FILE:gcbench> ${_mode} ${_sig})
  set_tests_properties(${_name} PROPERTIES LABELS "bench;interrupt" TIMEOUT 120)
endforeach()

# Launches without MPI (label envlaunch): processes started only by torchrun-style variables
# (scripts/envrun.sh) meet through rank 0's store and talk over Gloo (env_launch.sh); SIGTERM to
# the launcher (what Kubernetes and scancel send) keeps what finished. SIGINT is not tested
# through the launcher: a background job ignores it, and Ctrl-C reaches every process directly.
if(GCB_HAVE_GLOO)
  foreach(_mode coll train killed)
    add_test(NAME env_launch_${_mode}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/env_launch.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:gcbench> ${_mode})
    set_tests_properties(env_launch_${_mode} PROPERTIES LABELS "bench;envlaunch" TIMEOUT 120)
  endforeach()
  # Three network-namespace hosts launched by the variables alone (label netns: needs root).
  add_test(NAME netns_env_launch COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netns_env_launch.sh $<TARGET_FILE:gcbench>)
  set_tests_properties(netns_env_launch PROPERTIES LABELS "netns;envlaunch" TIMEOUT 180 SKIP_RETURN_CODE 77
                       RUN_SERIAL TRUE)
  add_test(NAME env_interrupted_sigTERM
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interrupted_run.sh $<TARGET_FILE:gcbench> env TERM ${PROJECT_SOURCE_DIR})
  set_tests_properties(env_interrupted_sigTERM PROPERTIES LABELS "bench;envlaunch;interrupt" TIMEOUT 120)
  add_test(NAME env_interrupted_group_sigINT
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interrupted_run.sh $<TARGET_FILE:gcbench> envgroup INT ${PROJECT_SOURCE_DIR})
  set_tests_properties(env_interrupted_group_sigINT PROPERTIES LABELS "bench;envlaunch;interrupt" TIMEOUT 120)
endif()

if(GCB_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  add_test(NAME mpi_interrupted_sigTERM
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interrupted_run.sh $<TARGET_FILE:gcbench> mpi TERM ${MPIEXEC_EXECUTABLE})
  set_tests_properties(mpi_interrupted_sigTERM PROPERTIES LABELS "mpi;interrupt" TIMEOUT 120
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  string(JOIN " " _mpirun2 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe ${MPIEXEC_PREFLAGS})
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/failure_mpi)
  # Rank 1 may not write a byte (rank1_cannot_write.sh): before, every rank wrote the same files.
  foreach(cmd "train --model tiny --dp 2 --steps 2 --warmup-steps 0 --peak-flops 1e15"
              "mem --device cpu --group stream --kernels copy --size 64K --min-samples 3 --max-time 0.2 --no-peers")
    string(REGEX MATCH "^[a-z]+" _sub "${cmd}")
    add_test(NAME mpi_only_rank0_writes_${_sub}
             COMMAND sh -c "rm -f ${_out}_${_sub}.* && ${_mpirun2} ${CMAKE_CURRENT_SOURCE_DIR}/rank1_cannot_write.sh $<TARGET_FILE:gcbench> ${cmd} -q --json ${_out}_${_sub}.json --jsonl ${_out}_${_sub}.jsonl --csv ${_out}_${_sub}.csv && test \"$(grep -c '\"key\"' ${_out}_${_sub}.json)\" = 1 && test \"$(wc -l < ${_out}_${_sub}.jsonl)\" = 1")
  endforeach()
  # Two layouts = two Worlds in one process: the second used to abort after MPI_Finalize.
  add_test(NAME mpi_train_sweep_runs_two_worlds
           COMMAND sh -c "${_mpirun2} $<TARGET_FILE:gcbench> train --model tiny --sweep dp2,zero1 --ranks 2 --steps 1 --warmup-steps 0 --peak-flops 1e15 -q --json ${_out}_sweep.json && grep -q '\"key\": \"train/dp2-zero1\"' ${_out}_sweep.json")
  add_test(NAME mpi_stopped_rank_ends_within_timeout
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stopped_rank.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:gcbench> running)
  # Stopped before MPI_Init: the others used to wait in MPI_Init forever (no watchdog yet).
  add_test(NAME mpi_rank_stopped_at_startup_ends_within_timeout
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stopped_rank.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:gcbench> startup)
  set_tests_properties(mpi_only_rank0_writes_train mpi_only_rank0_writes_mem mpi_train_sweep_runs_two_worlds
                       mpi_stopped_rank_ends_within_timeout mpi_rank_stopped_at_startup_ends_within_timeout PROPERTIES
                       LABELS mpi TIMEOUT 120 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
