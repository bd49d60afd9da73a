// A batch of the funnel's cells run as one fleet plan (`pipette decide --server`,
// docs/deciding.md "On a fleet"): the cells become JobSpecs (pipette/fleet_plan.h) that workers
// matching the requirements claim and measure; each finished job's record is copied from the
// server into the funnel's store, so the funnel judges it like a cell it ran itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pipette/decide.h"
#include "pipette/fleet_client.h"
#include "pipette/store.h"
#include "pipette/suite.h"

namespace pipette {

class FleetCells {
 public:
  explicit FleetCells(const FunnelFleet& fleet);

  // Submits `cells` of `suite` (with the policy the stage runs them with) as the plan `name`.
  // Returns its plan id; `unassignable` gets one line per reason no registered worker can take
  // some of its jobs yet (they wait for one). Errors: a model file that cannot be hashed, the
  // server refusing or unreachable (one line from the client).
  Result<std::string> Submit(const Suite& suite, const std::vector<SuiteCell>& cells,
                             const std::string& name, ResultStore& store,
                             std::vector<std::string>* unassignable) const;

  // Waits until every job of `plan_id` (submitted for `cells`, in order) is done, failed or
  // expired, polling every poll_interval_s; `progress` gets a line whenever the plan's counts
  // change, and one while the server cannot be reached (the wait goes on). Copies each finished
  // job's record into `store`. Returns one outcome per cell: "ok" or "failed" as the record
  // says (seconds: the record's cell wall time, the device time the worker spent), "failed"
  // with the server's last failure line for a job no worker could finish, "failed" ("expired")
  // for one nobody claimed in time. On a signal it returns at once with *interrupted set and no
  // outcomes: the plan goes on on the fleet, and a later Await of the same id picks it up.
  // Errors: the server refuses to show the plan (e.g. it was deleted), a record that cannot be
  // fetched or stored.
  Result<std::vector<SuiteCellOutcome>> Await(const std::string& plan_id,
                                              const std::vector<SuiteCell>& cells,
                                              ResultStore& store,
                                              const std::function<void(const std::string&)>& progress,
                                              bool* interrupted) const;

 private:
  FleetHttpClient client_;
  JobRequirements requirements_;
  double poll_interval_s_;
};

}  // namespace pipette
