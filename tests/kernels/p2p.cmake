# gcbench p2p kernels: the host reference of the flag ping-pong (always) and the CUDA ping-pong
# and peer SM copy (label gpu; they skip without two peer-capable devices).
gcb_add_test(test_p2p_pingpong SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_p2p_pingpong.cpp LIBS gcb_kernels)
if(GCB_HAVE_CUDA)
  gcb_add_test(test_gpu_p2p SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_p2p.cpp LIBS gcb_kernels LABELS gpu)
endif()
