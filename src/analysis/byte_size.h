// Sizes as people type them on a command line: "1048576B", "12MiB", "1.5 GiB", "800MB", "64k".
#pragma once

#include <string_view>

#include "pipette/status.h"

namespace pipette::analysis {

// Bytes for a non-negative number with a unit, case-insensitive, spaces allowed between them: B;
// KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB and the bare K, M, G, T (powers of 1024, as
// llama.cpp and `ls -h` use them). A number without a unit is refused with the likely fix
// ("'11.5' has no unit: did you mean 11.5MiB? ..."): a limit of 11.5 bytes is never meant.
// Other errors: "'<text>' is not a size: give bytes or a number with a unit (B, KB, MB, GB, KiB,
// MiB, GiB), e.g. 12MiB".
Result<double> ParseByteSize(std::string_view text);

// A limit such as a number of milliseconds: a finite decimal number >= 0 ("250", "0.5", "1e3"),
// nothing else (no sign, no spaces, no "nan" or "inf"). Error: "'<text>' is not a finite number
// >= 0; give <what>", e.g. what = "milliseconds, e.g. 250".
Result<double> ParseNonNegative(std::string_view text, std::string_view what);

}  // namespace pipette::analysis
