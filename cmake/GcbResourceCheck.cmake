# Build-time resource check of the CUDA kernels, without a GPU and without cuobjdump. Every CUDA
# object is compiled with -Xptxas=-v through cmake/gcb-ptxas-log.sh, which keeps ptxas's report
# in <object>.ptxas.txt (ccache replays it on a hit). gcb_add_resource_check(), called once all
# targets exist, runs gcb-flash-resources on every CUDA object after it is built: it prints
# every kernel's registers, barriers, stack frame, spills and shared memory (kept in
# <build>/kernel-resources.txt) and FAILS THE BUILD when a flash kernel spills, has a stack
# frame or exceeds its register budget (kernels/attention/flash_budget.hpp). ctest runs the same
# check as the test `kernel_resources` (label build-check), so CI reports it as a test too.

set(_GCB_PTXAS_LOG ${CMAKE_CURRENT_LIST_DIR}/gcb-ptxas-log.sh)

# After enable_language(CUDA), before any CUDA target: ptxas -v on, its report captured. The
# launcher goes in front of any launcher already chosen (ccache).
macro(gcb_capture_ptxas_reports)
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${_GCB_PTXAS_LOG} ${CMAKE_CUDA_COMPILER_LAUNCHER})
endmacro()

# Targets with CUDA sources in `dir` and below.
function(_gcb_cuda_targets dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      get_target_property(sources ${t} SOURCES)
      if(sources MATCHES "\\.cu(;|$)")
        list(APPEND found ${t})
      endif()
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _gcb_cuda_targets(${sub} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(gcb_add_resource_check)
  if(NOT GCB_HAVE_CUDA)
    return()
  endif()
  _gcb_cuda_targets(${PROJECT_SOURCE_DIR} targets)
  set(objects "")
  foreach(t IN LISTS targets)
    list(APPEND objects "$<FILTER:$<TARGET_OBJECTS:${t}>,INCLUDE,\\.cu\\.o$>")
  endforeach()
  set(list_file ${CMAKE_BINARY_DIR}/kernel-resources.objects)
  set(table ${CMAKE_BINARY_DIR}/kernel-resources.txt)
  file(GENERATE OUTPUT ${list_file} CONTENT "$<JOIN:${objects},\n>\n")
  add_custom_command(
    OUTPUT ${table}
    COMMAND gcb-flash-resources --objects ${list_file} --out ${table}
    DEPENDS gcb-flash-resources ${list_file} ${objects}
    COMMENT "Kernel resources (ptxas -v) and flash kernel budgets"
    VERBATIM)
  add_custom_target(kernel_resources ALL DEPENDS ${table})
  add_dependencies(kernel_resources ${targets})
  if(GCB_BUILD_TESTS)
    add_test(NAME kernel_resources COMMAND gcb-flash-resources --objects ${list_file})
    set_tests_properties(kernel_resources PROPERTIES LABELS build-check)
  endif()
endfunction()
