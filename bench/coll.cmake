# `gcbench coll` (bench/coll*.cpp) in gcb_bench, and bench/coll_peers (the bare MPI library vs
# our MPI and threads backends, same run) when MPI was found.
target_sources(gcb_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/coll.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_case.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_cli.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_timing.cpp
)
target_link_libraries(gcb_bench PUBLIC gcb_collectives)

if(GCB_HAVE_MPI)
  add_executable(gcb_coll_peers ${CMAKE_CURRENT_LIST_DIR}/coll_peers.cpp)
  target_link_libraries(gcb_coll_peers PRIVATE gcb_bench MPI::MPI_C)
  gcb_target_warnings(gcb_coll_peers)
endif()
