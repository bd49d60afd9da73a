// The decision funnels `pipette report` shows (its Funnel sections): the state files `pipette
// decide` writes beside the store (<store folder>/decide/<name>.json), found for the store being
// reported, and those named with --funnel FILE. The report library takes them parsed
// (pipette/report.h); reading and finding the files is here.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "pipette/report.h"
#include "pipette/status.h"

namespace pipette::cli {

// The funnel state at `path`. Errors (one line, naming the file and what to do): it cannot be
// read, it is not JSON, it is not a funnel state (ParseFunnelState).
Result<FunnelReport> ReadFunnelState(const std::string& path);

// The funnel states in <folder of store_path>/decide/*.json (not deeper) whose "store" is this
// store (the same file, however the paths are spelled), sorted by file name; files already in
// `known` (paths of states given explicitly) are left out. A file there that cannot be read or is
// not a funnel state is skipped with a one-line warning on `warnings`. No folder: none.
std::vector<FunnelReport> FindFunnelStates(const std::string& store_path,
                                           const std::vector<std::string>& known,
                                           std::ostream& warnings);

}  // namespace pipette::cli
