# The dashboard in headless Chromium against a real `pipette serve` (tests/e2e/
# dashboard_browser_test.cc; skips without chromium; about half a minute: some 30 browser runs, and
# two that measure every page and `pipette report` at 1366 and 390 px).
# Included from tests/e2e/CMakeLists.txt.
pipette_test(dashboard_browser_test
  SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/dashboard_browser_test.cc
    ${CMAKE_SOURCE_DIR}/tests/e2e/headless_chromium.cc
  LIBS pipette_fleet_store pipette_store pipette_platform PkgConfig::CPP_HTTPLIB
  LABELS slow e2e)
target_compile_definitions(dashboard_browser_test PRIVATE PIPETTE_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(dashboard_browser_test pipette)
