# Imported targets for the llama.cpp prefix assembled by scripts/llama.sh:
#   pipette::llama      libllama (links the ggml libraries below)
#   pipette::ggml-base  ggml core, gguf reader/writer, type tables
#   pipette::ggml       backend registry + CPU backend
#   pipette::llama-common  llama.cpp's common library (chat templates through its Jinja engine;
#                       headers as <PREFIX>/include/common/*.h), when the prefix has it: prefixes
#                       scripts/llama.sh made before it installed the library lack it until the
#                       script runs again (it then adds the library to the existing build)
set(_p "${PIPETTE_LLAMA_PREFIX}")
foreach(_f include/llama.h lib/libllama.a lib/libggml.a lib/libggml-base.a lib/libggml-cpu.a COMMIT)
  if(NOT EXISTS "${_p}/${_f}")
    message(FATAL_ERROR "${_p} lacks ${_f}; rebuild it with scripts/llama.sh")
  endif()
endforeach()

# ggml built with OpenMP uses it in ggml-base (quantization tables) and ggml-cpu.
set(_base_deps Threads::Threads m)
file(STRINGS "${_p}/GGML_OPENMP" _openmp LIMIT_COUNT 1)
if(_openmp STREQUAL "ON")
  if(NOT TARGET OpenMP::OpenMP_CXX)  # cmake/driver_only.cmake makes its own, for a static link
    find_package(OpenMP REQUIRED)
  endif()
  list(APPEND _base_deps OpenMP::OpenMP_CXX OpenMP::OpenMP_C)
endif()
add_library(pipette::ggml-base STATIC IMPORTED GLOBAL)
set_target_properties(pipette::ggml-base PROPERTIES
  IMPORTED_LOCATION "${_p}/lib/libggml-base.a"
  INTERFACE_INCLUDE_DIRECTORIES "${_p}/include"
  INTERFACE_LINK_LIBRARIES "${_base_deps}")
add_library(ggml::ggml-base ALIAS pipette::ggml-base)

add_library(pipette::ggml-cpu STATIC IMPORTED GLOBAL)
set_target_properties(pipette::ggml-cpu PROPERTIES
  IMPORTED_LOCATION "${_p}/lib/libggml-cpu.a"
  INTERFACE_LINK_LIBRARIES "pipette::ggml-base")

add_library(pipette::ggml STATIC IMPORTED GLOBAL)
set_target_properties(pipette::ggml PROPERTIES
  IMPORTED_LOCATION "${_p}/lib/libggml.a"
  INTERFACE_LINK_LIBRARIES "pipette::ggml-cpu;pipette::ggml-base;${CMAKE_DL_LIBS}"
  IMPORTED_LINK_INTERFACE_MULTIPLICITY 3)

add_library(pipette::llama STATIC IMPORTED GLOBAL)
set_target_properties(pipette::llama PROPERTIES
  IMPORTED_LOCATION "${_p}/lib/libllama.a"
  INTERFACE_LINK_LIBRARIES "pipette::ggml"
  IMPORTED_LINK_INTERFACE_MULTIPLICITY 3)

if(EXISTS "${_p}/lib/libllama-common.a" AND EXISTS "${_p}/include/common/chat.h")
  set(_common_deps pipette::llama Threads::Threads)
  if(EXISTS "${_p}/lib/libllama-common-base.a")  # build info, split out of common by later llama.cpp
    add_library(pipette::llama-common-base STATIC IMPORTED GLOBAL)
    set_target_properties(pipette::llama-common-base PROPERTIES
      IMPORTED_LOCATION "${_p}/lib/libllama-common-base.a")
    list(PREPEND _common_deps pipette::llama-common-base)
  endif()
  add_library(pipette::llama-common STATIC IMPORTED GLOBAL)
  set_target_properties(pipette::llama-common PROPERTIES
    IMPORTED_LOCATION "${_p}/lib/libllama-common.a"
    INTERFACE_LINK_LIBRARIES "${_common_deps}")
endif()
