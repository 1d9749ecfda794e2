# `gcbench attn` sources, added to gcb_bench (included from bench/CMakeLists.txt).
target_sources(gcb_bench PRIVATE attn.cpp attn_verify.cpp attn_peer.cpp)
if(GCB_HAVE_CUDA)
  target_sources(gcb_bench PRIVATE attn_gpu.cpp)
else()
  target_sources(gcb_bench PRIVATE attn_gpu_none.cpp)
endif()
set_source_files_properties(attn_peer.cpp PROPERTIES COMPILE_DEFINITIONS GCB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(gcb_bench PUBLIC gcb_attention)
