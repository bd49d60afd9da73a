// Capability matching (docs/fleet-protocol.md "Plans and jobs") and the names of states.
#include <algorithm>
#include <cctype>
#include <string>

#include "fleet_store/common.h"
#include "pipette/fleet_store.h"

namespace pipette {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The strings of `doc[key]` (an array); other entries and other types are ignored.
std::vector<std::string> Strings(const json& doc, const char* key, bool lowercase = false) {
  std::vector<std::string> out;
  if (!doc.is_object()) return out;
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string())
      out.push_back(lowercase ? Lower(v.get<std::string>()) : v.get<std::string>());
  }
  return out;
}

std::string StringField(const json& doc, const char* key) {
  if (!doc.is_object()) return "";
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntField(const json& doc, const char* key) {
  if (!doc.is_object()) return 0;
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number()) return 0;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

bool Contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

bool Refuse(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return false;
}

}  // namespace

const char* ClientStatusName(ClientStatus status) {
  switch (status) {
    case ClientStatus::kPending:
      return "pending";
    case ClientStatus::kApproved:
      return "approved";
    case ClientStatus::kRevoked:
      return "revoked";
  }
  return "pending";
}

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kLeased:
      return "leased";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kExpired:
      return "expired";
  }
  return "queued";
}

// A missing or null `requirements` (or field) requires nothing.
bool JobMatches(const json& requirements, const json& capabilities, std::string* why) {
  const std::vector<std::string> labels = Strings(capabilities, "labels");
  for (const std::string& label : Strings(requirements, "labels")) {
    if (!Contains(labels, label)) return Refuse(why, "needs label " + label);
  }
  const std::string arch = StringField(requirements, "arch");
  const std::string has_arch = StringField(capabilities, "arch");
  if (!arch.empty() && arch != has_arch) {
    return Refuse(why,
                  "needs arch " + arch + " (has " + (has_arch.empty() ? "none" : has_arch) + ")");
  }
  const int64_t min_memory = IntField(requirements, "min_memory_bytes");
  const int64_t memory = IntField(capabilities, "memory_bytes");
  if (min_memory > 0 && memory < min_memory) {
    return Refuse(why, "needs " + std::to_string(min_memory) + " bytes of memory (has " +
                           std::to_string(memory) + ")");
  }
  const std::vector<std::string> runtimes = Strings(capabilities, "runtimes");
  for (const std::string& runtime : Strings(requirements, "runtimes")) {
    if (!Contains(runtimes, runtime)) return Refuse(why, "needs runtime " + runtime);
  }
  // SHA-256 digests: compared without regard to case.
  const std::vector<std::string> models = Strings(capabilities, "models", /*lowercase=*/true);
  for (const std::string& model : Strings(requirements, "models", /*lowercase=*/true)) {
    if (!Contains(models, model)) return Refuse(why, "needs model " + model);
  }
  return true;
}

namespace fleet_store {

std::optional<JobState> ParseJobState(const std::string& name) {
  for (JobState s : {JobState::kQueued, JobState::kLeased, JobState::kDone, JobState::kFailed,
                     JobState::kExpired}) {
    if (name == JobStateName(s)) return s;
  }
  return std::nullopt;
}

std::optional<ClientStatus> ParseClientStatus(const std::string& name) {
  for (ClientStatus s : {ClientStatus::kPending, ClientStatus::kApproved, ClientStatus::kRevoked}) {
    if (name == ClientStatusName(s)) return s;
  }
  return std::nullopt;
}

}  // namespace fleet_store
}  // namespace pipette
