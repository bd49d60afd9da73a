# The part of platform/ that runs on a measured device inside pipette-llamacpp-driver, also in
# its static device builds (scripts/build-device.sh): it needs nothing but the C++ library and
# nlohmann-json. Included from src/platform/CMakeLists.txt and cmake/driver_only.cmake.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
# CPU lists and affinity.
add_library(pipette_affinity STATIC ${_dir}/cpu_affinity_linux.cc)
target_include_directories(pipette_affinity PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
# Record ids and timestamps (base/ids.h): plain C++, so the device side has them too.
add_library(pipette_ids STATIC ${CMAKE_SOURCE_DIR}/src/base/ids.cc)
target_include_directories(pipette_ids PUBLIC ${CMAKE_SOURCE_DIR}/src)
# The fingerprint's facts, thermal zones, CPU time, process memory, energy, the bandwidth kernel,
# and the probe that answers with them (DESIGN.md 8a).
add_library(pipette_device_facts STATIC ${_dir}/device_linux.cc ${_dir}/thermal_linux.cc
  ${_dir}/cpu_load_linux.cc ${_dir}/proc_memory_linux.cc ${_dir}/device_facts_json.cc
  ${_dir}/probe.cc ${_dir}/energy_linux.cc ${_dir}/bandwidth_kernel.cc
  ${_dir}/noise_floor_kernel.cc ${_dir}/sysfs_text.cc)
target_include_directories(pipette_device_facts PUBLIC ${CMAKE_SOURCE_DIR}/include
  ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(pipette_device_facts PUBLIC pipette_affinity pipette_ids Threads::Threads
  nlohmann_json::nlohmann_json)
