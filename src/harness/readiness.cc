#include "harness/readiness.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "platform/cpu_load.h"

namespace pipette {
namespace {

using nlohmann::json;

// Shortest poll interval used, so that a zero interval cannot spin on a clock that stands still.
constexpr double kMinPollIntervalS = 0.01;

std::string Format(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// Keeps a poll that held the gate: the first, every kHeldPollEvery-th, and always the latest
// (which replaces the previous latest unless that one is kept for its number).
void KeepHeld(ReadinessWait& wait) {
  if (!wait.held.empty() && (wait.held.back().poll - 1) % kHeldPollEvery != 0) wait.held.pop_back();
  wait.held.push_back({wait.waited_s, wait.polls, wait.last});
}

// The worst value of `field` over the held polls whose held_by names `criterion`.
std::optional<double> WorstHeld(const json& readiness, const char* criterion, const char* field) {
  std::optional<double> worst;
  const json waits = readiness.is_object() ? readiness.value("waits", json::array()) : json();
  if (!waits.is_array()) return worst;
  for (const json& wait : waits) {
    if (!wait.is_object() || !wait.contains("held") || !wait["held"].is_array()) continue;
    for (const json& o : wait["held"]) {
      const json held_by = o.is_object() ? o.value("held_by", json::array()) : json();
      const bool named = held_by.is_array() &&
                         std::find(held_by.begin(), held_by.end(), criterion) != held_by.end();
      if (!named) continue;
      const double v = o.contains(field) && o[field].is_number() ? o[field].get<double>() : 1.0;
      if (!worst || v > *worst) worst = v;
    }
  }
  return worst;
}

double PolicyNumber(const json& readiness, const char* field, double fallback) {
  const json::json_pointer p("/policy/" + std::string(field));
  return readiness.is_object() && readiness.contains(p) && readiness.at(p).is_number()
             ? readiness.at(p).get<double>()
             : fallback;
}

std::string Waived(bool waived) { return waived ? " (waived)" : ""; }

std::string DescribeThermal(const ReadinessObservation& o) {
  if (!o.thermal_available)
    return "no CPU thermal zone (thermal unavailable)" + Waived(o.waive_thermal);
  const double c = *o.hottest_cpu_celsius;
  return "hottest CPU zone " + o.hottest_zone + " (" + o.hottest_type + ") " + Format("%.1f", c) +
         " C " + (c > o.max_cpu_celsius ? "> " : "<= ") + Format("%g", o.max_cpu_celsius) + " C" +
         Waived(o.waive_thermal);
}

std::string DescribeLoad(const ReadinessObservation& o) {
  if (!o.load_available) return "CPU load unavailable" + Waived(o.waive_load);
  return "other processes busy " + Format("%.2f", o.busy_fraction) +
         (o.busy_fraction > o.max_busy_fraction ? " > " : " <= ") +
         Format("%.2f", o.max_busy_fraction) + Waived(o.waive_load);
}

std::string DescribeThrottle(const ReadinessObservation& o) {
  if (!o.throttle_available) return "throttle counters unavailable" + Waived(o.waive_throttle);
  return (o.throttling ? "throttling reported" : "no throttling") + Waived(o.waive_throttle);
}

// Sets the thermal fields from the hottest zone that gates.
void ObserveThermal(const std::vector<ThermalSample>& zones, ReadinessObservation* o) {
  for (const ThermalSample& z : zones) {
    if (!z.gates || (o->hottest_cpu_celsius && *o->hottest_cpu_celsius >= z.celsius)) continue;
    o->hottest_cpu_celsius = z.celsius;
    o->hottest_zone = z.zone;
    o->hottest_type = z.type;
  }
  o->thermal_available = o->hottest_cpu_celsius.has_value();
}

ReadinessObservation WithPolicy(const ReadinessPolicy& p) {
  ReadinessObservation o;
  o.max_cpu_celsius = p.max_cpu_celsius;
  o.max_busy_fraction = p.max_busy_fraction;
  o.waive_thermal = p.waive_thermal;
  o.waive_load = p.waive_load;
  o.waive_throttle = p.waive_throttle;
  return o;
}

// "let it cool, or raise the readiness deadline (deadline_s), or waive the thermal criterion".
// Named as the policy knows them, never by a command's flags (the CLI adds those).
std::string NotReadyAdvice(const ReadinessObservation& o) {
  std::vector<std::string> actions, waive;
  if (!o.ThermalOk() || !o.ThrottleOk()) actions.push_back("let it cool");
  if (!o.LoadOk()) actions.push_back("stop other work");
  if (!o.ThermalOk()) waive.push_back("the thermal criterion");
  if (!o.LoadOk()) waive.push_back("the load criterion");
  if (!o.ThrottleOk()) waive.push_back("the throttling criterion");
  std::string advice;
  for (size_t i = 0; i < actions.size(); ++i) advice += (i ? " and " : "") + actions[i];
  advice += ", or raise the readiness deadline (deadline_s), or waive ";
  for (size_t i = 0; i < waive.size(); ++i) advice += (i ? " / " : "") + waive[i];
  return advice;
}

Error NotReadyError(const ReadinessPolicy& policy, const ReadinessWait& wait) {
  return MakeError("device not ready after " + Format("%g", policy.deadline_s) + " s (" +
                       std::to_string(wait.polls) + (wait.polls == 1 ? " poll): " : " polls): ") +
                       wait.last.Describe() + "; " + NotReadyAdvice(wait.last),
                   "readiness");
}

std::string CriterionState(bool waived, bool available) {
  if (waived) return "waived";
  return available ? "checked" : "unavailable";
}

}  // namespace

double SteadyClock::NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SteadyClock::SleepSeconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

bool ReadinessObservation::ThermalOk() const {
  return waive_thermal || !thermal_available || *hottest_cpu_celsius <= max_cpu_celsius;
}

bool ReadinessObservation::LoadOk() const {
  return waive_load || !load_available || busy_fraction <= max_busy_fraction;
}

bool ReadinessObservation::ThrottleOk() const {
  return waive_throttle || !throttle_available || !throttling;
}

std::string ReadinessObservation::Describe() const {
  return DescribeThermal(*this) + "; " + DescribeLoad(*this) + "; " + DescribeThrottle(*this);
}

std::vector<std::string> ReadinessObservation::HeldBy() const {
  std::vector<std::string> held;
  if (!ThermalOk()) held.push_back("thermal");
  if (!LoadOk()) held.push_back("load");
  if (!ThrottleOk()) held.push_back("throttle");
  return held;
}

std::string ReadinessObservation::DescribeHeld() const {
  std::vector<std::string> parts;
  if (!ThermalOk()) parts.push_back(DescribeThermal(*this));
  if (!LoadOk()) parts.push_back(DescribeLoad(*this));
  if (!ThrottleOk()) parts.push_back(DescribeThrottle(*this));
  return Join(parts, "; ");
}

ReadinessObservation ObserveReadiness(const ReadinessPolicy& policy, Clock& clock,
                                      const std::vector<int>& own_pids,
                                      ThrottleCounts* previous_throttle) {
  HostReadings host(policy.sys_root, policy.proc_root);
  return ObserveReadiness(policy, clock, own_pids, previous_throttle, host);
}

ReadinessObservation ObserveReadiness(const ReadinessPolicy& policy, Clock& clock,
                                      const std::vector<int>& own_pids,
                                      ThrottleCounts* previous_throttle,
                                      DeviceReadings& readings) {
  ReadinessObservation o = WithPolicy(policy);
  const CpuSample before = readings.Cpu(own_pids);
  if (!policy.waive_load || !policy.waive_throttle) clock.SleepSeconds(policy.sample_window_s);
  const CpuSample after = readings.Cpu(own_pids);
  // Without a window (load waived) no time passes between the readings: nothing was measured.
  o.load_available = before.available && after.available && after.total_ticks > before.total_ticks;
  o.busy_fraction = BusyFractionOfOthers(before, after);

  const ThrottleCounts throttle = readings.Throttle();
  o.throttle_available = throttle.available;
  o.throttling = throttle.available && previous_throttle->available &&
                 throttle.total > previous_throttle->total;
  *previous_throttle = throttle;

  ObserveThermal(readings.Thermal(), &o);
  return o;
}

Result<ReadinessWait> WaitUntilReady(const ReadinessPolicy& policy, Clock& clock,
                                     const std::vector<int>& own_pids,
                                     const std::function<bool()>& stop,
                                     const std::function<void(const ReadinessWait&)>& waiting) {
  HostReadings host(policy.sys_root, policy.proc_root);
  return WaitUntilReady(policy, clock, own_pids, host, stop, waiting);
}

Result<ReadinessWait> WaitUntilReady(const ReadinessPolicy& policy, Clock& clock,
                                     const std::vector<int>& own_pids, DeviceReadings& readings,
                                     const std::function<bool()>& stop,
                                     const std::function<void(const ReadinessWait&)>& waiting) {
  const double interval = std::max(policy.poll_interval_s, kMinPollIntervalS);
  const double start = clock.NowSeconds();
  ThrottleCounts throttle = readings.Throttle();
  ReadinessWait wait;
  for (;;) {
    const double poll_start = clock.NowSeconds();
    wait.last = ObserveReadiness(policy, clock, own_pids, &throttle, readings);
    ++wait.polls;
    wait.waited_s = clock.NowSeconds() - start;
    if (wait.last.Ready()) {
      wait.ready = true;
      return wait;
    }
    KeepHeld(wait);
    const double next_poll = poll_start + interval;
    if (next_poll - start > policy.deadline_s) return NotReadyError(policy, wait);
    if (waiting) waiting(wait);
    if (stop && stop()) return MakeError("interrupted by the user", "readiness");
    clock.SleepSeconds(next_poll - clock.NowSeconds());
    if (stop && stop()) return MakeError("interrupted by the user", "readiness");
  }
}

void CoolDown(const ReadinessPolicy& policy, Clock& clock) {
  if (policy.cooldown_s > 0) clock.SleepSeconds(policy.cooldown_s);
}

json PolicyJson(const ReadinessPolicy& policy, const ReadinessObservation& first) {
  json waived = json::array();
  if (policy.waive_thermal) waived.push_back("thermal");
  if (policy.waive_load) waived.push_back("load");
  if (policy.waive_throttle) waived.push_back("throttle");
  return {{"enabled", true},
          {"max_cpu_celsius", policy.max_cpu_celsius},
          {"max_busy_fraction", policy.max_busy_fraction},
          {"poll_interval_s", policy.poll_interval_s},
          {"deadline_s", policy.deadline_s},
          {"sample_window_s", policy.sample_window_s},
          {"cooldown_s", policy.cooldown_s},
          {"waived", waived},
          {"thermal", CriterionState(policy.waive_thermal, first.thermal_available)},
          {"load", CriterionState(policy.waive_load, first.load_available)},
          {"throttle", CriterionState(policy.waive_throttle, first.throttle_available)}};
}

json ObservationJson(const ReadinessObservation& o) {
  json j = {{"hottest_cpu_celsius", nullptr}, {"hottest_zone", o.hottest_zone},
            {"hottest_type", o.hottest_type}, {"busy_fraction", nullptr},
            {"throttling", nullptr},          {"ready", o.Ready()}};
  if (o.hottest_cpu_celsius) j["hottest_cpu_celsius"] = *o.hottest_cpu_celsius;
  if (o.load_available) j["busy_fraction"] = o.busy_fraction;
  if (o.throttle_available) j["throttling"] = o.throttling;
  if (!o.Ready()) j["held_by"] = o.HeldBy();
  return j;
}

json WaitJson(const ReadinessWait& wait) {
  json j = {{"waited_s", wait.waited_s},
            {"polls", wait.polls},
            {"observation", ObservationJson(wait.last)}};
  if (wait.held.empty()) return j;
  json& held = j["held"] = json::array();
  for (const HeldPoll& h : wait.held) {
    json o = ObservationJson(h.observation);
    o["at_s"] = h.at_s;
    o["poll"] = h.poll;
    held.push_back(std::move(o));
  }
  return j;
}

std::string DescribeHolds(const json& readiness) {
  std::vector<std::string> parts;
  if (const auto c = WorstHeld(readiness, "thermal", "hottest_cpu_celsius")) {
    parts.push_back("hottest CPU zone up to " + Format("%.1f", *c) + " C > " +
                    Format("%g", PolicyNumber(readiness, "max_cpu_celsius", 70)) + " C");
  }
  if (const auto busy = WorstHeld(readiness, "load", "busy_fraction")) {
    parts.push_back("other processes busy up to " + Format("%.2f", *busy) + " > " +
                    Format("%.2f", PolicyNumber(readiness, "max_busy_fraction", 0.30)));
  }
  if (WorstHeld(readiness, "throttle", "throttling")) parts.push_back("throttling reported");
  return Join(parts, "; ");
}

json ThermalSnapshotJson(const std::vector<ThermalSample>& zones) {
  json out = json::array();
  for (const ThermalSample& z : zones) {
    out.push_back({{"zone", z.zone}, {"type", z.type}, {"celsius", z.celsius}, {"gates", z.gates}});
  }
  return out;
}

}  // namespace pipette
