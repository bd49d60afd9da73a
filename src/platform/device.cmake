# Device fingerprint tests and the memory bandwidth probe (DESIGN.md 4.6). Included from
# src/platform/CMakeLists.txt; device_linux.cc itself is part of pipette_platform.
add_library(pipette_bandwidth STATIC ${CMAKE_CURRENT_LIST_DIR}/bandwidth.cc
  ${CMAKE_CURRENT_LIST_DIR}/noise_floor.cc)
target_link_libraries(pipette_bandwidth PUBLIC pipette_platform pipette_base Threads::Threads
  nlohmann_json::nlohmann_json)
if(BUILD_TESTING)
  pipette_test(device_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/device_test.cc
    LIBS pipette_platform pipette_bandwidth)
  target_compile_definitions(device_test PRIVATE
    PIPETTE_DEVICE_TESTDATA="${CMAKE_CURRENT_LIST_DIR}/testdata")
endif()
