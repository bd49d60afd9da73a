// Reading the small text files of /proc and /sys: shared by the fingerprint (device_linux.cc)
// and the thermal readers (thermal_linux.cc). Device side: plain C++ only.
#pragma once

#include <filesystem>
#include <string>

namespace pipette::sysfs {

// `s` without leading and trailing whitespace and NUL (device-tree strings end in NUL).
std::string Trim(std::string s);

// The first line of a small file, trimmed as by Trim; empty when the file is absent, unreadable
// or empty (VMs, containers and boards each lack a different subset of /sys).
std::string ReadFirstLine(const std::filesystem::path& path);

// `s` in ASCII lower case.
std::string Lower(std::string s);

}  // namespace pipette::sysfs
