# One generated header, gcb/config.hpp, says which optional parts this build has (GCB_HAVE_*,
# each 0 or 1), instead of compile definitions scattered over the targets. gcb_core exports the
# folder that holds it, so every target of ours can include it.
set(GCB_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)
configure_file(${CMAKE_CURRENT_LIST_DIR}/config.hpp.in ${GCB_GENERATED_INCLUDE_DIR}/gcb/config.hpp)
