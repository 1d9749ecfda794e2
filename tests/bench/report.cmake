# gcbench report: the CLI (exit codes, outputs) and the real-browser check of the HTML.
gcb_add_test(test_report_cli SOURCES test_report_cli.cpp LIBS gcb_core)
target_compile_definitions(test_report_cli PRIVATE GCB_BINARY="$<TARGET_FILE:gcbench>")
add_dependencies(test_report_cli gcbench)

find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME report_browser
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report_browser_test.py $<TARGET_FILE:gcbench>
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/report_browser
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(report_browser PROPERTIES LABELS browser TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
