# PIPETTE_DRIVER_ONLY: pipette-llamacpp-driver alone, for a device (scripts/build-device.sh). It
# needs llama.cpp's prefix (built for the target), nlohmann-json's headers (PIPETTE_JSON_INCLUDE:
# a folder holding nlohmann/, so a cross compiler need not search the host's /usr/include) and
# the C++ library; nothing else of pipette's dependencies.
find_package(Threads REQUIRED)
if(PIPETTE_JSON_INCLUDE)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${PIPETTE_JSON_INCLUDE}")
else()
  find_package(nlohmann_json REQUIRED)
endif()
if(NOT PIPETTE_LLAMA_PREFIX)
  message(FATAL_ERROR "Set -DPIPETTE_LLAMA_PREFIX (scripts/build-device.sh does this)")
endif()
# Statically linked: -fopenmp at link time makes gcc take libgomp.a (FindOpenMP would name
# libgomp.so, which a static link cannot use). llama_prefix.cmake's find_package keeps these.
foreach(_lang C CXX)
  add_library(OpenMP::OpenMP_${_lang} INTERFACE IMPORTED GLOBAL)
  set_target_properties(OpenMP::OpenMP_${_lang} PROPERTIES
    INTERFACE_COMPILE_OPTIONS -fopenmp INTERFACE_LINK_OPTIONS -fopenmp)
endforeach()
include(${CMAKE_SOURCE_DIR}/cmake/llama_prefix.cmake)
file(STRINGS "${PIPETTE_LLAMA_PREFIX}/COMMIT" PIPETTE_LLAMA_COMMIT LIMIT_COUNT 1)
add_compile_options(-Wall -Wextra)
include_directories(${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
include(${CMAKE_SOURCE_DIR}/src/platform/device_side.cmake)
add_subdirectory(${CMAKE_SOURCE_DIR}/src/stats)
add_subdirectory(${CMAKE_SOURCE_DIR}/src/driver)
