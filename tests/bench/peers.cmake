# The torch peers' timer (scripts/peers/peer_common.py) with a fake torch: no GPU, no torch needed.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME peer_timing COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/peer_timing_test.py
                                    ${PROJECT_SOURCE_DIR})
endif()
