// The decision funnel (issue 26, docs/deciding.md): a suite plus a decision (hard limits,
// objectives, a stability stage) run as three stages that spend device time only where it can
// change the choice:
//   screen     every configuration on the cheapest benchmark of each judged metric, with just
//              enough repetitions for a bounded interval (pipette/funnel.h); a configuration
//              leaves as soon as its intervals show it fails a limit or is dominated.
//   measure    the survivors on every benchmark of the decision with the suite's harness policy
//              (to its CI target), then up to `rounds` more results where the judge says more
//              repetitions could change the decision (near a limit, near another on the front).
//   stabilize  the top finalists (`select`'s ranking of the survivors) under a soak; a crash,
//              throughput drift or memory growth ranks a finalist down, with the evidence.
// Every cell is stored as a result like any other (select, report, compare read them); the
// funnel's own state (which result belongs to which stage, who left where and why) is a JSON
// file beside the store, written after every cell, so an interrupted funnel resumes where it
// stopped.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/analysis.h"
#include "pipette/fleet_client.h"
#include "pipette/fleet_plan.h"
#include "pipette/funnel.h"
#include "pipette/status.h"
#include "pipette/suite.h"

namespace pipette {

// The [decision] table of a decision file (the rest of the file is a suite, pipette/suite.h).
struct Decision {
  Limits limits;                          // [decision.limits]
  std::vector<FunnelObjective> objectives;  // decision.objectives = ["decode", "memory", "quality"]
  double alpha = 0.05;                    // decision.alpha: the most often a configuration that
                                          // should win is eliminated, over the whole funnel
  int screen_repetitions = 0;  // [decision.screen] repetitions; 0: FunnelMinRepetitions + 3
  int measure_rounds = 2;      // [decision.measure] rounds after the first measure result
  int finalists = 2;           // [decision.stabilize] finalists; 0: no stabilize stage
  std::string soak;            // [decision.stabilize] soak = "soak_varied_<P>_<D>_<minutes>" or
                               // "soak_<P>_<D>_<minutes>"; "": none
  double soak_minutes = 0;     // that soak's duration
  // decision.budget_minutes: device time for the funnel; once spent, no measure round and no
  // soak starts (the screen and the first measure always run: without them nothing is decided).
  std::optional<double> budget_minutes;
};

// A parsed decision file: its suite and its decision, and the file as JSON (for resuming: what
// changed since the funnel started).
struct DecisionFile {
  Suite suite;
  Decision decision;
  nlohmann::json suite_json;     // the file without [decision]
  nlohmann::json decision_json;  // [decision] without its limits
  nlohmann::json limits_json;    // [decision.limits]
};

// Reads a decision file. Errors (one line, naming the file and key): everything ParseSuiteFile
// refuses; no limit and no objective ("nothing to decide on"); an unknown objective or limit; a
// limit or objective whose metric no benchmark of the suite measures (naming the benchmarks that
// would); a soak that is not a soak benchmark; finalists x soak longer than budget_minutes.
Result<DecisionFile> ParseDecisionFile(const std::string& path);
Result<DecisionFile> ParseDecisionToml(const std::string& text, const std::string& base_dir,
                                       const std::string& source_name);

// One configuration in the funnel (a suite configuration: model x runtime settings x device).
struct FunnelConfiguration {
  std::string key;   // model path | runtime label | settings | device: stable across runs
  std::string name;  // short display name: the model file, then what differs ("Q8_0 threads=2")
  std::string model_path;
  std::string device_uri;
  nlohmann::json settings;
  // Where it stands: "screen", "measure", "stabilize" (the stage it left at, when out),
  // or "in" (survived measure, not a finalist), "finalist", "chosen".
  std::string stage;
  bool out = false;
  std::string reason;  // why it left, or the finalist's soak evidence; "" otherwise
  std::vector<std::string> open_limits;  // limits its intervals still cross (borderline)
  bool on_front = false;                 // on `select`'s front among the survivors
};

struct FunnelStageTime {
  std::string stage;  // "screen", "measure", "stabilize"
  int cells = 0;
  double seconds = 0;  // sum of the cells' wall time (device time)
};

struct FunnelVerdict {
  std::string state_path;
  std::string chosen;  // the chosen configuration's name; "" when none qualifies
  std::string why_none;  // when chosen is empty
  std::vector<FunnelConfiguration> configurations;
  std::vector<FunnelStageTime> stages;
  double confidence = 0;   // of each interval (FunnelConfidence)
  int screen_repetitions = 0;
  bool interrupted = false;  // stopped by a signal: run the same command to resume
  bool budget_spent = false; // the device-time budget ran out before every stage finished
  std::vector<std::string> notes;  // e.g. "limits changed since the funnel started: re-judged"
  std::vector<std::string> benchmarks;          // the decision's benchmarks
  std::vector<std::string> benchmarks_skipped;  // the suite's others: no limit or objective reads them
};

// Runs the funnel's cells on a fleet (`decide --server`) instead of this machine: each batch of
// cells the funnel can run at once (a screen benchmark of every configuration, the measure's
// cells of one cost, a round, the finalists' soaks) becomes one plan that workers matching
// `requirements` claim and run in parallel; the funnel judges between batches. Records are
// copied from the server into the funnel's store.
struct FunnelFleet {
  std::string server_url;        // http[s]://HOST:PORT of a `pipette serve`
  Identity identity;             // an approved client's key pair: signs the plans
  FleetClientOptions client;     // timeouts, the CA file of an https server
  JobRequirements requirements;  // labels and architecture every job requires of a worker
  double poll_interval_s = 2;    // how often a plan's progress is read
};

struct DecideOptions {
  std::string store_path;   // DefaultStorePath() when empty
  std::string state_path;   // "" : <store folder>/decide/<suite name>.json
  std::string logs_dir;     // "" : <store folder>/decide/<suite name>/logs
  std::string driver_path;  // the llamacpp driver; "" beside pipette
  bool restart = false;     // discard the saved state and start again
  // Set: the cells run as plans on this fleet (a suite that lists [[devices]] is refused: on a
  // fleet, workers measure their own devices). A plan in flight is kept in the state, so an
  // interrupted funnel resumes by waiting for it, not by submitting it again.
  std::optional<FunnelFleet> fleet;
};

struct DecideHooks {
  // A cell starts: its stage, its position among the stage's planned cells, the time left
  // estimated for the stage (seconds, from its cells so far; < 0 unknown).
  std::function<void(const std::string& stage, const SuiteCell&, int index, int planned,
                     double seconds_left)> cell_started;
  std::function<void(const std::string&)> cell_progress;
  std::function<void(const std::string& stage, const SuiteCellOutcome&)> cell_finished;
  // On a fleet: a plan was submitted, its progress changed, the server cannot be reached.
  std::function<void(const std::string&)> plan_progress;
  // A configuration left the funnel (name, stage, reason).
  std::function<void(const FunnelConfiguration&)> left;
};

// Whether the saved state (if any) may be resumed with `file`: an error when anything but the
// limits changed since the funnel started (the message lists what changed and says to pass
// --restart or use another state file), or when the state file is not a funnel's. Only reads.
Status CheckFunnelState(const DecisionFile& file, const DecideOptions& options);

// Runs (or resumes) the funnel. Errors: the store or the state cannot be read or written; a saved
// state from a different decision file (anything but the limits changed: the message lists what
// changed and says to pass --restart or use another state file); a record that cannot be stored.
Result<FunnelVerdict> RunFunnel(const DecisionFile& file, const DecideOptions& options,
                                const DecideHooks& hooks = {});

}  // namespace pipette
