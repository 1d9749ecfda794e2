# `gcbench p2p` (bench/p2p*.cpp) in gcb_bench; its GPU kernels (kernels/gpu_p2p.cu) and the host
# reference of the ping-pong protocol are gcb_kernels' own (kernels/CMakeLists.txt). Uses coll's
# RankTimer (bench/coll_timing).
target_sources(gcb_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/p2p.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_links.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_matrix.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_rank.cpp
)
if(GCB_HAVE_CUDA)
  target_sources(gcb_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/p2p_gpu.cpp)
else()
  target_sources(gcb_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/p2p_gpu_none.cpp)
endif()
