// How `pipette select` prints its decision: a table with intervals and verdicts, each limit's
// check per configuration, and notes on noise, pooling and where the time goes.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "pipette/analysis.h"

namespace pipette::cli {

// The text output (stdout of `pipette select`).
void PrintSelection(const SelectResult& s, const Limits& limits, const std::string& limits_text,
                    std::ostream& out);

// The --json output's candidates and notes (the caller adds store and limits).
nlohmann::json SelectionJson(const SelectResult& s);

}  // namespace pipette::cli
