# `gcbench train` tests (included from tests/bench/CMakeLists.txt).
gcb_add_test(test_train_cli SOURCES test_train_cli.cpp LIBS gcb_bench LABELS models)
target_compile_definitions(test_train_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_train_cli gcbench)
# The torch peer's rows from a peer JSON (bench/train/train_peer.cpp); no Python needed.
gcb_add_test(test_train_peer SOURCES test_train_peer.cpp LIBS gcb_bench LABELS models)
# The transformers cross-check on the checked-in fixture (made once by scripts/hf_gpt2_fixture.py).
gcb_add_test(test_train_hf SOURCES test_train_hf.cpp LIBS gcb_models LABELS models)
target_compile_definitions(test_train_hf PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_train_hf gcbench)
# The same against transformers running now, where Python has torch, transformers and safetensors
# (skipped, exit 77, where it has not — CI does not install them: the CPU torch wheel alone is
# hundreds of MB): a fresh fixture, gcbench against it, then transformers loading gcbench's --save.
find_program(GCB_PYTHON3 python3)
if(GCB_PYTHON3)
  set(_hf ${CMAKE_CURRENT_BINARY_DIR}/hf_gpt2_live)
  set(_script ${PROJECT_SOURCE_DIR}/scripts/hf_gpt2_fixture.py)
  add_test(NAME train_hf_transformers_live
           COMMAND sh -c "rm -rf ${_hf} && ${GCB_PYTHON3} ${_script} make ${_hf}/fixture && GCB_HF_FIXTURE=${_hf}/fixture GCB_HF_OUT=${_hf}/out $<TARGET_FILE:test_train_hf> --gtest_filter=TrainHf.OneStep* && ${GCB_PYTHON3} ${_script} check ${_hf}/out/model.safetensors ${_hf}/fixture")
  set_tests_properties(train_hf_transformers_live PROPERTIES LABELS "models;python" SKIP_RETURN_CODE 77
                       WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} TIMEOUT 300)
  # --peer-torch on the CPU (scripts/peers/torch_gpt.py --device cpu, the same threads): eager torch
  # trains the same tiny GPT from the same weights and tokens, and its losses agree with ours within
  # 1e-4 (the row PASSes); skipped (77) without torch.
  add_test(NAME train_torch_peer_live
           COMMAND sh -c "${GCB_PYTHON3} -c 'import torch' 2>/dev/null || exit 77; $<TARGET_FILE:gcbench> train --model tiny --steps 2 --warmup 1 --peer-torch --quiet --json ${CMAKE_CURRENT_BINARY_DIR}/train_torch_peer.json && ${GCB_PYTHON3} -c \"import json,sys; r={x['key']: x['status'] for x in json.load(open(sys.argv[1]))['results']}; print(r); sys.exit(0 if r.get('train/dp1/vs_torch_eager') == 'PASS' else 1)\" ${CMAKE_CURRENT_BINARY_DIR}/train_torch_peer.json")
  set_tests_properties(train_torch_peer_live PROPERTIES LABELS "models;python" SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
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
