# Run at build time (cmake -P), on every build: writes OUT, a source file defining
# gcb::gcbench_revision(), with `git rev-parse --short=12 HEAD` of SOURCE_DIR ("unknown" outside a
# git checkout). The file is rewritten only when the revision changed, so a build after a commit
# recompiles one small file and a build without one recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT revision)
  set(revision unknown)
endif()
set(text "// Generated at build time by cmake/GcbGitRevision.cmake; do not edit.
#include \"core/context.hpp\"

namespace gcb {
std::string gcbench_revision() { return \"${revision}\"; }
}  // namespace gcb
")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
