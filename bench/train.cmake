# `gcbench train` sources, added to gcb_bench (included from bench/CMakeLists.txt).
target_sources(gcb_bench PRIVATE train.cpp)
target_link_libraries(gcb_bench PUBLIC gcb_models)
