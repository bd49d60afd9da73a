# Readiness gate (DESIGN.md 4.5); its readings come from platform (pipette_device_facts here,
# platform/device_readings.h for any device). Included from src/harness/CMakeLists.txt.
add_library(pipette_readiness STATIC ${CMAKE_CURRENT_LIST_DIR}/readiness.cc)
target_link_libraries(pipette_readiness PUBLIC pipette_device_facts pipette_base
  nlohmann_json::nlohmann_json)
if(BUILD_TESTING)
  pipette_test(readiness_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/readiness_test.cc
    LIBS pipette_readiness)
endif()
