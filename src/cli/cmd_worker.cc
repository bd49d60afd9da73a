// `pipette worker` (see cmd_worker.h).
#include "cli/number_range.h"
#include "cli/cmd_worker.h"

#include <iostream>
#include <memory>

#include "base/ids.h"
#include "cli/fleet_connection.h"
#include "pipette/identity.h"
#include "pipette/worker.h"
#include "platform/interrupt.h"

namespace pipette::cli {
namespace {

int Work(WorkerOptions& o, CliContext& ctx) {
  o.store_path = ctx.store_path;
  o.client = FleetOptions(ctx);
  WarnIfInTheClear(FleetHttpClient(o.server_url, Identity{}, o.client));
  WorkerHooks hooks;
  hooks.line = [](const std::string& line) {
    // "12:05:01 claimed job ...": the UTC time of day, then the event.
    std::cout << NowRfc3339().substr(11, 8) << " " << line << std::endl;
  };
  auto jobs = RunWorker(o, hooks);
  if (!jobs) return ReportError(ctx, jobs.error());
  if (Interrupted()) ctx.exit_code = 130;
  return ctx.exit_code;
}

}  // namespace

void AddWorkerCommand(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<WorkerOptions>();
  CLI::App* w = app.add_subcommand(
      "worker", "Pull jobs from a pipette serve and run them on this device, until interrupted");
  w->add_option("--server", o->server_url, "the server, http://HOST:PORT or https://HOST:PORT")->required();
  w->add_option("--labels", o->labels, "capability labels offered to jobs, e.g. x86,ci")
      ->delimiter(',');
  w->add_option("--label", o->label, "device label recorded when a job carries none");
  w->add_option("--device", o->device,
                "the device to measure: local, ssh://[user@]host[:port] or adb://SERIAL (one "
                "worker per device; give each its own --identity)")
      ->capture_default_str();
  w->add_option("--driver", o->driver_path,
                "the llamacpp driver (with --device: a device build; default: the one for its "
                "architecture from scripts/build-device.sh)");
  w->add_option("--models", o->models_dirs,
                "a folder of *.gguf models this device offers (repeatable)");
  w->add_option("--identity", o->identity_path,
                "the key pair file (default: $PIPETTE_IDENTITY or " + DefaultIdentityPath() + ")");
  w->add_option("--max-jobs", o->max_jobs, "stop after N jobs (0: never)")
      ->check(NumberIn(0, 1 << 30));
  w->add_flag("--once", o->once, "stop when there is no job");
  w->add_option("--logs", o->logs_dir,
                "folder of each cell's runtime log (default: worker-logs beside the store)");
  w->add_option("--outbox", o->outbox_dir,
                "folder of results waiting for the server (default: $PIPETTE_OUTBOX/<host_port>)");
  w->add_option("--lease", o->lease_s,
                "the server's lease in seconds: heartbeats go every third of it")
      ->capture_default_str()
      ->check(NumberIn(1.0, 86400.0));
  w->callback([o, &ctx] { Work(*o, ctx); });
}

}  // namespace pipette::cli
