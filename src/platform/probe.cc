#include "platform/probe.h"

#include <algorithm>

namespace pipette {
namespace {

using nlohmann::json;

}  // namespace

json ProcMemoryToJson(const ProcMemory& m) {
  return {{"vm_hwm", m.vm_hwm},       {"vm_rss", m.vm_rss},       {"vm_swap", m.vm_swap},
          {"rss_anon", m.rss_anon},   {"rss_file", m.rss_file},   {"rss_shmem", m.rss_shmem},
          {"has_rss_split", m.has_rss_split}};
}

ProcMemory ProcMemoryFromJson(const json& j) {
  ProcMemory m;
  if (!j.is_object()) return m;
  m.vm_hwm = j.value("vm_hwm", uint64_t{0});
  m.vm_rss = j.value("vm_rss", uint64_t{0});
  m.vm_swap = j.value("vm_swap", uint64_t{0});
  m.rss_anon = j.value("rss_anon", uint64_t{0});
  m.rss_file = j.value("rss_file", uint64_t{0});
  m.rss_shmem = j.value("rss_shmem", uint64_t{0});
  m.has_rss_split = j.value("has_rss_split", false);
  return m;
}

json AnswerProbe(const json& request, const DeviceRoots& roots) {
  json reply = {{"ok", true}};
  if (!request.is_object()) return reply;
  const auto asked = [&](const char* key) {
    return request.contains(key) && request[key].is_boolean() && request[key].get<bool>();
  };
  if (asked("device")) reply["device"] = DeviceFactsToJson(ReadDeviceFacts(roots));
  if (asked("thermal")) {
    json zones = json::array();
    for (const ThermalSample& z : ReadThermalSnapshot(roots.sys)) {
      zones.push_back({{"zone", z.zone}, {"type", z.type}, {"celsius", z.celsius}, {"gates", z.gates}});
    }
    reply["thermal"] = zones;
  }
  if (asked("throttle")) {
    const ThrottleCounts t = ReadThrottleCounts(roots.sys);
    reply["throttle"] = {{"available", t.available}, {"total", t.total}};
  }
  if (request.contains("cpu_pids") && request["cpu_pids"].is_array()) {
    std::vector<int> pids;
    for (const auto& p : request["cpu_pids"]) {
      if (p.is_number_integer()) pids.push_back(p.get<int>());
    }
    const CpuSample s = ReadCpuSample(roots.proc, pids);
    json own = json::object();
    for (const auto& [pid, ticks] : s.own_ticks) own[std::to_string(pid)] = ticks;
    reply["cpu"] = {{"available", s.available}, {"busy_ticks", s.busy_ticks},
                    {"total_ticks", s.total_ticks}, {"own_ticks", own}};
  }
  if (asked("energy")) reply["energy"] = EnergyToJson(ReadEnergy(roots.sys));
  if (request.contains("bandwidth") && request["bandwidth"].is_object()) {
    const json& b = request["bandwidth"];
    const auto number = [&](const char* key) -> int64_t {
      return b.contains(key) && b[key].is_number_integer() ? b[key].get<int64_t>() : 0;
    };
    BandwidthOptions o;
    o.proc_root = roots.proc;
    o.sys_root = roots.sys;
    o.threads = static_cast<int>(number("threads"));
    if (number("runs") != 0) o.runs = static_cast<int>(number("runs"));
    o.total_bytes = static_cast<uint64_t>(std::max<int64_t>(0, number("total_bytes")));
    auto measured = MeasureBandwidth(o);
    reply["bandwidth"] = measured ? BandwidthJson(*measured) : json{{"error", measured.error().message}};
  }
  if (request.contains("noise_floor") && request["noise_floor"].is_object()) {
    const json& n = request["noise_floor"];
    NoiseFloorOptions o;
    if (n.contains("runs") && n["runs"].is_number_integer()) {
      o.runs = static_cast<int>(std::clamp<int64_t>(n["runs"].get<int64_t>(), -1, 1 << 30));
    }
    if (n.contains("run_ms") && n["run_ms"].is_number()) o.run_ms = n["run_ms"].get<double>();
    if (n.contains("memory_bytes") && n["memory_bytes"].is_number_unsigned()) {
      o.memory_bytes = n["memory_bytes"].get<uint64_t>();
    }
    auto measured = MeasureNoiseFloor(o);
    reply["noise_floor"] =
        measured ? NoiseFloorJson(*measured) : json{{"error", measured.error().message}};
  }
  if (request.contains("memory_pid") && request["memory_pid"].is_number_integer()) {
    const auto m = ReadProcMemory(request["memory_pid"].get<int>(), roots.proc);
    reply["memory"] = m ? ProcMemoryToJson(*m) : json(nullptr);
  }
  return reply;
}

namespace {

// A measurement's member of a probe reply: the object, or one line when the driver there predates
// it or refused the request (its {"error": ...}).
Result<const json*> MeasuredMember(const json& reply, const char* key, const char* what) {
  if (!reply.is_object() || !reply.contains(key) || !reply[key].is_object()) {
    return MakeError(std::string("the driver there does not measure ") + what +
                     " (an older build); rebuild it with scripts/build-device.sh");
  }
  const json& m = reply[key];
  if (m.contains("error")) return MakeError(m.value("error", std::string("the probe failed")));
  return &m;
}

}  // namespace

Result<BandwidthResult> BandwidthFromProbe(const json& reply) {
  auto member = MeasuredMember(reply, "bandwidth", "bandwidth");
  if (!member) return member.error();
  BandwidthResult r = BandwidthFromJson(**member);
  if (!(r.bytes_per_s > 0)) return MakeError("the device's probe gave no bandwidth");
  return r;
}

Result<NoiseFloorResult> NoiseFloorFromProbe(const json& reply) {
  auto member = MeasuredMember(reply, "noise_floor", "the noise floor");
  if (!member) return member.error();
  NoiseFloorResult r = NoiseFloorFromJson(**member);
  if (!(r.pinned.median_ms > 0) || !(r.unpinned.median_ms > 0)) {
    return MakeError("the device's probe gave no noise floor");
  }
  return r;
}

std::vector<ThermalSample> ThermalFromProbe(const json& reply) {
  std::vector<ThermalSample> out;
  if (!reply.is_object() || !reply.contains("thermal") || !reply["thermal"].is_array()) return out;
  for (const auto& z : reply["thermal"]) {
    if (!z.is_object()) continue;
    out.push_back({z.value("zone", ""), z.value("type", ""), z.value("celsius", 0.0),
                   z.value("gates", false)});
  }
  return out;
}

ThrottleCounts ThrottleFromProbe(const json& reply) {
  ThrottleCounts t;
  if (!reply.is_object() || !reply.contains("throttle") || !reply["throttle"].is_object()) return t;
  t.available = reply["throttle"].value("available", false);
  t.total = reply["throttle"].value("total", uint64_t{0});
  return t;
}

CpuSample CpuFromProbe(const json& reply) {
  CpuSample s;
  if (!reply.is_object() || !reply.contains("cpu") || !reply["cpu"].is_object()) return s;
  const json& c = reply["cpu"];
  s.available = c.value("available", false);
  s.busy_ticks = c.value("busy_ticks", uint64_t{0});
  s.total_ticks = c.value("total_ticks", uint64_t{0});
  const json own = c.value("own_ticks", json::object());
  for (const auto& [pid, ticks] : own.items()) {
    if (ticks.is_number_unsigned()) s.own_ticks[std::atoi(pid.c_str())] = ticks.get<uint64_t>();
  }
  return s;
}

EnergyReading EnergyFromProbe(const json& reply) {
  if (!reply.is_object() || !reply.contains("energy")) return {};
  return EnergyFromJson(reply["energy"]);
}

std::optional<ProcMemory> MemoryFromProbe(const json& reply) {
  if (!reply.is_object() || !reply.contains("memory") || !reply["memory"].is_object()) {
    return std::nullopt;
  }
  return ProcMemoryFromJson(reply["memory"]);
}

}  // namespace pipette
