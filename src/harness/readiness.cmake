# Readiness gate (DESIGN.md 4.5) and its platform probes; included from src/harness/CMakeLists.txt.
add_library(pipette_readiness STATIC
  ${CMAKE_CURRENT_LIST_DIR}/readiness.cc
  ${CMAKE_SOURCE_DIR}/src/platform/thermal_linux.cc
  ${CMAKE_SOURCE_DIR}/src/platform/cpu_load_linux.cc)
target_link_libraries(pipette_readiness PUBLIC pipette_base nlohmann_json::nlohmann_json)
if(BUILD_TESTING)
  pipette_test(readiness_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/readiness_test.cc
    LIBS pipette_readiness)
endif()
