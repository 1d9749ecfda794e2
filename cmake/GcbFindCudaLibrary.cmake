# gcb_find_cuda_library: finds one optional CUDA library (NCCL, cuDNN) as a header + a shared
# library, also where only a versioned soname exists (libnccl.so.2, libcudnn.so.9: PyTorch's
# wheels under site-packages/nvidia/<name>/{include,lib} ship no unversioned .so), reads its
# version from the header, and says in the configure log what it found and where.
#
#   gcb_find_cuda_library(<prefix> HEADER nccl.h NAMES nccl SONAME libnccl.so.2
#                         VERSION_HEADER nccl.h MACROS NCCL_MAJOR NCCL_MINOR NCCL_PATCH
#                         MINIMUM 2.18.0 TARGET gcb_nccl)
#
# With the cache variable GCB_<prefix>_ROOT set (a folder with include/ and lib/), only that
# folder is searched: whatever the system has is hidden, and a root without the library is a
# configure error. Otherwise the CUDA toolkit and the system paths are searched. Sets
# GCB_HAVE_<prefix> and GCB_<prefix>_VERSION in the caller's scope.
function(gcb_find_cuda_library prefix)
  cmake_parse_arguments(F "" "HEADER;SONAME;VERSION_HEADER;MINIMUM;TARGET" "NAMES;MACROS" ${ARGN})
  set(root "${GCB_${prefix}_ROOT}")
  # A changed root must search again, not reuse what the cache remembers from the last one.
  if(NOT "${root}" STREQUAL "${_GCB_${prefix}_ROOT_USED}")
    unset(GCB_${prefix}_INCLUDE CACHE)
    unset(GCB_${prefix}_LIBRARY CACHE)
    set(_GCB_${prefix}_ROOT_USED "${root}" CACHE INTERNAL "")
  endif()
  if(root)
    find_path(GCB_${prefix}_INCLUDE ${F_HEADER} PATHS ${root}/include NO_DEFAULT_PATH)
    find_library(GCB_${prefix}_LIBRARY NAMES ${F_NAMES} ${F_SONAME} PATHS ${root}/lib ${root}/lib64 NO_DEFAULT_PATH)
  else()
    find_path(GCB_${prefix}_INCLUDE ${F_HEADER} HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(GCB_${prefix}_LIBRARY NAMES ${F_NAMES} ${F_SONAME}
                 HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  endif()
  set(GCB_HAVE_${prefix} OFF PARENT_SCOPE)
  if(NOT GCB_${prefix}_INCLUDE OR NOT GCB_${prefix}_LIBRARY)
    if(root)
      message(FATAL_ERROR "GCB_${prefix}_ROOT=${root} has no ${F_HEADER} in include/ or no ${F_SONAME} in lib/ "
                          "(header: ${GCB_${prefix}_INCLUDE}, library: ${GCB_${prefix}_LIBRARY})")
    endif()
    message(STATUS "${prefix}: not found (no ${F_HEADER} or ${F_SONAME}); set GCB_${prefix}_ROOT to a folder with include/ and lib/")
    return()
  endif()
  # Version from the header's MAJOR/MINOR/PATCH macros.
  file(STRINGS ${GCB_${prefix}_INCLUDE}/${F_VERSION_HEADER} lines REGEX "^#define [A-Z_]+ +[0-9]+")
  set(version "")
  foreach(macro ${F_MACROS})
    set(part "")
    foreach(line ${lines})
      if(line MATCHES "^#define ${macro} +([0-9]+)")
        set(part ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(part STREQUAL "")
      set(part 0)
    endif()
    list(APPEND version ${part})
  endforeach()
  list(JOIN version "." version)
  set(GCB_${prefix}_VERSION ${version} PARENT_SCOPE)
  if(version VERSION_LESS F_MINIMUM)
    message(STATUS "${prefix}: ${version} at ${GCB_${prefix}_LIBRARY} is older than ${F_MINIMUM}, which gcbench needs: not built")
    return()
  endif()
  add_library(${F_TARGET} INTERFACE)
  if(root)
    # A chosen root must win over another copy in the CUDA toolkit's include folder (some
    # toolkits carry NCCL and cuDNN headers): -I folders come before every -isystem folder.
    target_include_directories(${F_TARGET} INTERFACE ${GCB_${prefix}_INCLUDE})
  else()
    target_include_directories(${F_TARGET} SYSTEM INTERFACE ${GCB_${prefix}_INCLUDE})
  endif()
  target_link_libraries(${F_TARGET} INTERFACE ${GCB_${prefix}_LIBRARY})
  set(GCB_HAVE_${prefix} ON PARENT_SCOPE)
  set(where "system search")
  if(root)
    set(where "GCB_${prefix}_ROOT=${root}")
  endif()
  message(STATUS "${prefix}: ${version}, library ${GCB_${prefix}_LIBRARY}, headers ${GCB_${prefix}_INCLUDE} (${where})")
endfunction()
