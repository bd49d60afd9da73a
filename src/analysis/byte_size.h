// Sizes as people type them on a command line: "1048576", "12MiB", "1.5 GiB", "800MB", "64k".
#pragma once

#include <string_view>

#include "pipette/status.h"

namespace pipette::analysis {

// Bytes for a non-negative number with an optional unit, case-insensitive, spaces allowed between
// them: B; KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB and the bare K, M, G, T (powers of
// 1024, as llama.cpp and `ls -h` use them). Error: "'<text>' is not a size: give bytes or a
// number with a unit (B, KB, MB, GB, KiB, MiB, GiB), e.g. 12MiB".
Result<double> ParseByteSize(std::string_view text);

}  // namespace pipette::analysis
