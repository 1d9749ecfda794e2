# `gcbench attn` sources, added to gcb_bench (included from bench/CMakeLists.txt).
target_sources(gcb_bench PRIVATE attn.cpp attn_verify.cpp attn_peer.cpp)
if(GCB_HAVE_CUDA)
  target_sources(gcb_bench PRIVATE attn_gpu.cpp)
else()
  target_sources(gcb_bench PRIVATE attn_gpu_none.cpp)
endif()
target_link_libraries(gcb_bench PUBLIC gcb_attention)
