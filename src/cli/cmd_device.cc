// `pipette device [probe]` (see cmd_device.h). Measurement and fingerprint live in platform/;
// this file only validates arguments and formats output.
#include "cli/cmd_device.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "platform/bandwidth.h"
#include "platform/device.h"
#include "platform/device_access.h"
#include "platform/device_names.h"
#include "platform/noise_floor.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ProbeArgs {
  int threads = 0;
  int runs = 5;
  int64_t size_mib = 0;
};

// 1536 -> "1.5 KiB"; binary units, as cache and memory sizes are.
std::string Binary(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return v == static_cast<uint64_t>(v) ? fmt::format("{:.0f} {}", v, units[u])
                                       : fmt::format("{:.1f} {}", v, units[u]);
}

std::string GbPerS(double bytes_per_s) { return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9); }

std::string Joined(const std::vector<std::string>& parts, const std::string& none) {
  if (parts.empty()) return none;
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string CacheLine(const CacheInfo& c) {
  const std::string kind = c.type == "Data" ? "d" : c.type == "Instruction" ? "i" : "";
  return fmt::format("L{}{} {}{}", c.level, kind, Binary(c.size_bytes),
                     c.shared_cpus.empty() ? "" : " (CPUs " + c.shared_cpus + ")");
}

std::string GpuLine(const GpuInfo& g) {
  std::string s = g.name.empty() ? g.vendor : g.name;
  if (s.empty()) s = "GPU";
  if (!g.vendor_id.empty()) s += " [" + g.vendor_id + ":" + g.device_id + "]";
  if (!g.driver.empty()) s += " (" + g.driver + ")";
  if (g.memory_bytes) s += " " + Binary(g.memory_bytes);
  return s;
}

std::string Clusters(const DeviceInfo& d) {
  std::vector<std::string> parts;
  for (const auto& c : d.clusters) {
    parts.push_back(fmt::format("CPUs {} up to {} MHz", c.cpus, c.max_khz / 1000));
  }
  return Joined(parts, "not exposed (no cpufreq)");
}

std::string Battery(const DeviceInfo& d) {
  if (!d.battery) return "none";
  const BatteryInfo& b = *d.battery;
  std::string s = b.name;
  if (b.level_percent) s += fmt::format(" {}%", *b.level_percent);
  if (!b.status.empty()) s += ", " + b.status;
  if (b.celsius) s += fmt::format(", {:.1f} C", *b.celsius);
  return s;
}

// "1.1% run to run pinned to CPU 0, 2.4% unpinned, 6.0% for memory-bound work such as decode
// (60 runs of 40 ms each, measured ...)".
std::string NoiseFloorLine(const NoiseFloorResult& f) {
  const std::string memory =
      f.memory.run_ms.empty()
          ? ""
          : fmt::format(", {:.1f}% for memory-bound work such as decode", 100 * f.memory.spread);
  return fmt::format("{:.1f}% run to run pinned to CPU {}, {:.1f}% unpinned{} ({} runs of {:.0f} "
                     "ms each, measured {})",
                     100 * f.pinned.spread, f.pinned.cpu, 100 * f.unpinned.spread, memory,
                     f.pinned.run_ms.size(), f.pinned.median_ms, f.measured_at);
}

// Where the probe's two files went (either empty: not stored), and what reads them.
std::string StoredLine(const std::string& bandwidth_path, const std::string& floor_path) {
  std::vector<std::string> files;
  for (const std::string& p : {bandwidth_path, floor_path}) {
    if (!p.empty()) files.push_back(p);
  }
  if (files.empty()) return "nothing (see the error below)";
  return Joined(files, "") + (files.size() == 2 ? "; every result measured on this device "
                                                  "from now on records both"
                                                : "");
}

void PrintDevice(const DeviceInfo& d, const json& block, CliContext& ctx) {
  const std::string id = block["id"];
  const auto bw = CachedBandwidth(id);
  const auto floor = CachedNoiseFloor(id);
  if (ctx.json) {
    json out = block;
    AddCachedBandwidth(out);
    AddCachedNoiseFloor(out);
    out["memory_bandwidth"] = bw ? BandwidthJson(*bw) : json(nullptr);
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::vector<std::string> caches, gpus, zones;
  for (const auto& c : d.cpu.caches) caches.push_back(CacheLine(c));
  for (const auto& g : d.gpus) gpus.push_back(GpuLine(g));
  for (const auto& z : d.thermal_zones) zones.push_back(z.type);
  std::string frequency = "not exposed (no cpufreq; typical in VMs)";
  if (d.frequency) {
    frequency = fmt::format("governor {}{}, {}-{} MHz", d.frequency->governor,
                            d.frequency->driver.empty() ? "" : " (" + d.frequency->driver + ")",
                            d.frequency->min_khz / 1000, d.frequency->max_khz / 1000);
  }
  std::string power = d.power.source;
  if (!d.power.profile.empty()) power += ", profile " + d.power.profile;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"id", id},
      {"os", fmt::format("{}, kernel {}, {}", d.os.pretty_name, d.os.kernel, d.os.arch)},
      {"cpu",
       fmt::format("{} ({}), {} cores, {} threads{}", d.cpu.model.empty() ? "?" : d.cpu.model,
                   d.cpu.vendor.empty() ? "?" : d.cpu.vendor, d.cpu.physical_cores,
                   d.cpu.logical_cores, d.cpu.smt ? ", SMT" : "")},
      {"caches", Joined(caches, "not exposed")},
      {"frequency", frequency},
      {"memory", fmt::format("{} ({} bytes), swap {}", Binary(d.memory_bytes), d.memory_bytes,
                             Binary(d.swap_bytes))},
      {"gpus", Joined(gpus, "none")},
      {"power", power},
      {"thermal zones", Joined(zones, "none")},
      {"virtualized", !d.virtualized   ? "unknown"
                      : *d.virtualized ? "yes (hypervisor flag)"
                                       : "no"},
      {"board", d.board.empty() ? "unknown" : d.board},
      {"clusters", Clusters(d)},
      {"battery", Battery(d)},
      {"emulated", d.emulated_on.empty()
                       ? "no"
                       : "yes: " + d.os.arch + " on a " + d.emulated_on +
                             " kernel (speed results are flagged: they are not the hardware's)"},
      {"bandwidth", bw ? fmt::format("{} (stream triad, {} threads, measured {})",
                                     GbPerS(bw->bytes_per_s), bw->threads, bw->measured_at)
                       : "not measured; run `pipette device probe`"},
      {"noise floor", floor ? NoiseFloorLine(*floor) : "not measured; run `pipette device probe`"},
  };
  std::cout << fmt::format("{:<14}{}\n", "name",
                           block.contains("name") ? block["name"].get<std::string>()
                                                  : "none (pipette device --name NAME gives one)");
  if (block.contains("uri") && block["uri"] != "local") {
    std::cout << fmt::format("{:<14}{}\n", "device", block["uri"].get<std::string>());
  }
  for (const auto& [k, v] : rows) std::cout << fmt::format("{:<14}{}\n", k, v);
}

void Probe(const ProbeArgs& args, const std::string& uri, const std::string& driver,
           const CLI::App& cmd, CliContext& ctx) {
  if (cmd.count("--threads") && args.threads < 1) {
    ReportError(ctx, MakeError(fmt::format("--threads must be at least 1, not {}", args.threads)));
    return;
  }
  constexpr int64_t kMaxSizeMib = int64_t{1} << 30;  // 1 PiB: keeps the byte count in range
  if (cmd.count("--size-mib") && (args.size_mib < 1 || args.size_mib > kMaxSizeMib)) {
    ReportError(ctx, MakeError(fmt::format("--size-mib must be between 1 and {}, not {}",
                                           kMaxSizeMib, args.size_mib)));
    return;
  }
  BandwidthOptions options;
  options.threads = args.threads;
  options.runs = args.runs;
  options.total_bytes = static_cast<uint64_t>(args.size_mib) << 20;
  auto address = ParseDeviceAddress(uri);
  if (!address) return (void)ReportError(ctx, address.error());
  if (address->kind == TransportKind::kLocal) {
    auto plan = PlanBandwidth(options);
    if (!plan) {
      ReportError(ctx, plan.error().Wrap("device probe"));
      return;
    }
    std::cerr << fmt::format("measuring memory bandwidth: {} threads, 3 arrays of {}, {} {}...",
                             plan->threads, Binary(plan->array_bytes), options.runs,
                             options.runs == 1 ? "run" : "runs")
              << std::endl;
  }
  auto device = DeviceAccess::Open(*address, {}, driver);
  if (!device) return (void)ReportError(ctx, device.error(), kExitFailure);
  auto block = (*device)->Fingerprint("");
  if (!block) return (void)ReportError(ctx, block.error(), kExitFailure);
  if (address->kind != TransportKind::kLocal) {
    std::cerr << "measuring memory bandwidth on " << (*device)->Uri() << "..." << std::endl;
  }
  auto result = (*device)->Bandwidth(options);
  if (!result) {
    // A remote device's refusal of the options (no stage) is bad input; the rest are failures.
    const bool refused = address->kind != TransportKind::kLocal && result.error().stage.empty();
    ReportError(ctx, result.error().Wrap("device probe"), refused ? kExitBadInput : kExitFailure);
    return;
  }
  const std::string id = (*block)["id"];
  const Status stored = StoreBandwidth(id, *result);
  const std::string path = BandwidthCachePath(id);
  std::cerr << "measuring the noise floor: a fixed kernel timed " << NoiseFloorOptions{}.runs
            << " times pinned, unpinned and reading memory..." << std::endl;
  auto floor = (*device)->NoiseFloor({});
  const Status floor_stored = floor ? StoreNoiseFloor(id, *floor) : Status::Ok();
  if (ctx.json) {
    json out = BandwidthJson(*result);
    out["device_id"] = id;
    out["cache_path"] = stored.ok() ? json(path) : json(nullptr);
    out["noise_floor"] = floor ? NoiseFloorJson(*floor) : json(nullptr);
    out["noise_floor_cache_path"] =
        floor && floor_stored.ok() ? json(NoiseFloorCachePath(id)) : json(nullptr);
    std::cout << out.dump(2) << "\n";
  } else {
    std::vector<std::string> runs;
    for (double r : result->run_bytes_per_s) runs.push_back(fmt::format("{:.2f}", r / 1e9));
    std::vector<std::string> cpus;
    for (int c : result->cpus) cpus.push_back(std::to_string(c));
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"bandwidth",
         fmt::format("{} (best of {} runs of {} sweeps: {} GB/s)", GbPerS(result->bytes_per_s),
                     result->runs, result->sweeps, Joined(runs, ""))},
        {"method", result->method + ": a[i] = b[i] + s*c[i], 24 bytes counted per element"},
        {"threads", fmt::format("{}{}", result->threads,
                                cpus.empty() ? " (not pinned)" : " on CPUs " + Joined(cpus, ""))},
        {"working set", fmt::format("3 x {}", Binary(result->array_bytes))},
        {"noise floor", floor ? NoiseFloorLine(*floor) : "not measured"},
        {"device", id},
        {"stored", StoredLine(stored.ok() ? path : "",
                              floor && floor_stored.ok() ? NoiseFloorCachePath(id) : "")},
    };
    for (const auto& [k, v] : rows) std::cout << fmt::format("{:<13}{}\n", k, v);
  }
  if (!stored.ok()) {
    return (void)ReportError(ctx, stored.error().Wrap("device probe"), kExitFailure);
  }
  if (!floor) {
    return (void)ReportError(ctx, floor.error().Wrap("device probe: noise floor"), kExitFailure);
  }
  if (!floor_stored.ok()) ReportError(ctx, floor_stored.error().Wrap("device probe"), kExitFailure);
}

}  // namespace

void AddDeviceCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* device = app.add_subcommand(
      "device",
      "This machine's fingerprint (--json: the record's device block); probe: bandwidth, noise "
      "floor");
  device->require_subcommand(0, 1);
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* probe = device->add_subcommand(
      "probe",
      "Measure memory bandwidth (STREAM-like triad) and the noise floor (run-to-run spread of a "
      "fixed kernel, pinned and unpinned) and cache them for this device");
  probe->add_option("--threads", args->threads, "worker threads (default: one per physical core)");
  probe->add_option("--runs", args->runs, "timed runs; the best is kept (1 to 1000)")
      ->capture_default_str();
  probe->add_option("--size-mib", args->size_mib,
                    "working set of the three arrays, MiB (default and minimum: 256 MiB or 12x "
                    "the last-level cache, whichever is larger)");
  auto uri = std::make_shared<std::string>("local");
  auto driver = std::make_shared<std::string>();
  for (CLI::App* cmd : {device, probe}) {
    cmd->add_option("--device", *uri,
                    "which device: local, ssh://[user@]host[:port] or adb://SERIAL (read and "
                    "measured there by the driver's probe)")
        ->capture_default_str();
    cmd->add_option("--driver", *driver,
                    "the driver build to copy to --device (default: the one scripts/build-device.sh "
                    "made for its architecture)")
        ->type_name("FILE");
  }
  probe->callback([args, uri, driver, probe, &ctx] { Probe(*args, *uri, *driver, *probe, ctx); });
  auto name = std::make_shared<std::string>();
  CLI::Option* name_option =
      device->add_option("--name", *name,
                         "give the device its one name, e.g. pixel-8 (kept on this host; shown "
                         "for it by every command and recorded with its results)");
  device->callback([probe, uri, driver, name, name_option, &ctx] {
    if (probe->parsed()) return;
    auto address = ParseDeviceAddress(*uri);
    if (!address) return (void)ReportError(ctx, address.error());
    if (name_option->count() > 0) {
      if (auto s = CheckDeviceName(*name); !s) return (void)ReportError(ctx, s.error().Wrap("--name"));
    }
    auto access = DeviceAccess::Open(*address, {}, *driver);
    if (!access) return (void)ReportError(ctx, access.error(), kExitFailure);
    auto info = (*access)->Info();
    if (!info) return (void)ReportError(ctx, info.error(), kExitFailure);
    auto block = (*access)->Fingerprint("");
    if (!block) return (void)ReportError(ctx, block.error(), kExitFailure);
    if (name_option->count() > 0) {
      if (auto s = NameDevice((*block)["id"], *name); !s) {
        return (void)ReportError(ctx, s.error().Wrap("--name"));
      }
    }
    if (auto known = DeviceNameOf((*block)["id"])) (*block)["name"] = *known;
    PrintDevice(*info, *block, ctx);
  });
}

}  // namespace pipette::cli
