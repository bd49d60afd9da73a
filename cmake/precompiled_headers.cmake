# Precompiled headers: nlohmann/json and fmt are included by nearly every file of pipette and
# cost 2-3 s of parsing each at -O3 (gcc 12), CLI11 (header-only in Debian 12's 2.1) about 5 s
# more in the CLI's files, GoogleTest about 2 s in every test's. Each target compiles them once
# into its own precompiled header, so a first build on 2 cores (the quick start's, issue 27)
# spends that time once per target instead of once per file: building pipette and its driver
# from nothing took 503 s instead of 626 s (2 cores, gcc 12, no ccache). Off: -DPIPETTE_PCH=OFF.
option(PIPETTE_PCH "precompile the heavy third-party headers once per target" ON)

function(pipette_precompile_headers dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    # A target of one or two files gains nothing: the header costs as much to precompile.
    get_target_property(sources ${t} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.cc$")
    list(LENGTH sources n)
    if(n LESS 3)
      continue()
    endif()
    set(headers <string> <vector> <map> <optional> <nlohmann/json.hpp> <fmt/format.h>)
    get_target_property(links ${t} LINK_LIBRARIES)
    if(links MATCHES "GTest::")
      list(APPEND headers <gtest/gtest.h>)
    endif()
    get_target_property(source_dir ${t} SOURCE_DIR)
    if(source_dir MATCHES "/src/cli$")
      list(APPEND headers <CLI/CLI.hpp>)
    endif()
    list(TRANSFORM headers REPLACE "(.+)" "$<$<COMPILE_LANGUAGE:CXX>:\\1>")
    target_precompile_headers(${t} PRIVATE ${headers})
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(s ${subdirs})
    pipette_precompile_headers(${s})
  endforeach()
endfunction()

if(PIPETTE_PCH)
  pipette_precompile_headers(${CMAKE_SOURCE_DIR})
endif()
