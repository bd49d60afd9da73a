#include "harness/record.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/sha256.h"
#include "harness/model_file.h"
#include "harness/workload.h"
#include "pipette/build_info.h"
#include "pipette/gguf.h"
#include "pipette/record.h"
#include "platform/bandwidth.h"
#include "platform/noise_floor.h"
#include "platform/cpu_affinity.h"
#include "platform/device.h"
#include "platform/device_access.h"
#include "platform/device_names.h"
#include "platform/output_path.h"

namespace pipette {
namespace {

using nlohmann::json;

}  // namespace

int ContextNeed(const BenchmarkSpec& b) {
  switch (b.type) {
    case BenchmarkType::kMemory: return b.prefill_tokens + 1;
    case BenchmarkType::kKlDivergence: return b.prefill_tokens;
    case BenchmarkType::kSoak: return b.prefill_tokens + b.decode_tokens;
    case BenchmarkType::kPrefill: return b.prefill_tokens;
    default: return b.prefill_tokens + b.decode_tokens;
  }
}

namespace {

// Environment variables that change how the engine runs (threads, backends, kernels, devices);
// the driver inherits them, so they are part of what a result must record (DESIGN.md 4.6).
json EngineEnvironment() {
  static constexpr const char* kPrefixes[] = {"OMP_",  "GOMP_", "KMP_",  "GGML_",     "LLAMA_",
                                              "CUDA_", "HIP_",  "ROCR_", "HSA_",      "VK_",
                                              "MKL_",  "OPENBLAS_", "BLIS_", "ONEDNN_"};
  json env = json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    for (const char* prefix : kPrefixes) {
      if (kv.rfind(prefix, 0) == 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  return env;
}

// kl_divergence: the reference model must be a readable GGUF with the same vocabulary.
Result<json> ResolveReference(const CellSpec& spec, const GgufInfo& model, const CellHooks& hooks) {
  const BenchmarkSpec& b = spec.benchmark;
  if (spec.reference_model_path.empty()) {
    return MakeError(b.id + " compares the model with a higher-precision one: give its reference "
                     "model (e.g. the F16 or F32 GGUF the model was quantized from; in a suite: "
                     "reference = \"FILE\" in the model's [[models]] entry)");
  }
  DeviceAccess* device = spec.device.get();
  auto ref = ReadModelHeader(spec.reference_model_path, device);
  if (!ref) return ref.error().Wrap("reference model");
  if (ref->vocab_size != model.vocab_size) {
    return MakeError("reference model " + ref->file_name + " has a vocabulary of " +
                     std::to_string(ref->vocab_size) + " tokens but " + model.file_name + " has " +
                     std::to_string(model.vocab_size) + "; both must share one tokenizer");
  }
  if (ref->n_ctx_train > 0 && static_cast<uint64_t>(b.prefill_tokens) > ref->n_ctx_train &&
      !spec.allow_context_overflow) {
    return MakeError(b.id + " needs " + std::to_string(b.prefill_tokens) +
                     " tokens of context but reference model " + ref->file_name + " was trained for " +
                     std::to_string(ref->n_ctx_train));
  }
  auto sha = ModelSha256(spec.reference_model_path, device, hooks.hash_file);
  if (!sha) return sha.error();
  return json{{"path", RecordModelPath(spec.reference_model_path, device)},
              {"file_name", ref->file_name},
              {"sha256", *sha},
              {"quant", ref->quant},
              {"params", ref->params}};
}

}  // namespace

std::string MetricUnit(const std::string& metric) {
  if (metric.ends_with("_throughput")) return "tokens/s";
  if (metric == "max_host_usage" || metric == "max_gpu_usage" || metric == "swap_observed" ||
      metric.starts_with("rss_")) {
    return "bytes";
  }
  if (metric == "kl_divergence") return "nats";
  if (metric == "top1_agreement" || metric == "accuracy" || metric.ends_with("_rate")) {
    return "ratio";
  }
  if (metric == "output_tokens" || metric == "prompt_tokens") return "tokens";
  if (metric == "perplexity" || metric == "reference_perplexity") return "perplexity";
  if (metric == "average_power") return "W";
  if (metric == "energy_per_token") return "mJ/token";
  return "ms";
}

// On a big.LITTLE device (CPU clusters of different maximum frequencies), threads beyond its
// fastest cores run on slower ones, which usually slows decode down (choosing threads on such
// chips is the most common question in llama.cpp's issues): said in the record. "" otherwise.
std::string BigCoresWarning(const json& device, const json& settings) {
  const json clusters = device.value("clusters", json::array());
  if (!clusters.is_array() || clusters.size() < 2) return "";
  const json& big = clusters.back();  // slowest first
  auto big_cpus = ParseCpuList(big.value("cpus", ""));
  if (!big_cpus) return "";
  const int threads = settings.value("threads", 0);
  int big_used = static_cast<int>(big_cpus->size());
  std::string where = "its " + std::to_string(big_used) + " big cores (CPUs " +
                      big.value("cpus", "") + ", up to " +
                      std::to_string(big.value("max_khz", 0) / 1000) + " MHz)";
  if (settings.contains("cpus") && settings["cpus"].is_string()) {
    auto given = ParseCpuList(settings["cpus"].get<std::string>());
    if (given) {
      big_used = 0;
      for (int c : *given) {
        big_used += std::count(big_cpus->begin(), big_cpus->end(), c) > 0;
      }
      where = std::to_string(big_used) + " of the given CPUs " +
              settings["cpus"].get<std::string>() + " are big cores (CPUs " +
              big.value("cpus", "") + ")";
      if (threads <= big_used) return "";
      return fmt::format("threads {} exceed the big cores: {}; the other threads run on slower "
                         "cores, which usually slows decode down",
                         threads, where);
    }
  }
  if (threads <= big_used) return "";
  return fmt::format("threads {} exceed {} on this big.LITTLE device; the other threads run on "
                     "slower cores, which usually slows decode down",
                     threads, where);
}

Result<json> ResolveCell(const CellSpec& spec, const CellHooks& hooks) {
  const BenchmarkSpec& b = spec.benchmark;
  if (b.type != BenchmarkType::kPrefill && b.type != BenchmarkType::kDecode &&
      b.type != BenchmarkType::kEndToEnd && b.type != BenchmarkType::kMemory &&
      b.type != BenchmarkType::kKlDivergence && b.type != BenchmarkType::kSoak &&
      b.type != BenchmarkType::kEval) {
    return MakeError("benchmark " + b.id + " (type " + std::string(TypeName(b.type)) +
                     ") is not run by `pipette run` yet");
  }
  if (!spec.runtime) return MakeError("no runtime was given for " + b.id);
  const Runtime& runtime = *spec.runtime;
  const RuntimeIdentity& id = runtime.Identity();
  const RuntimeCapabilities caps = runtime.Capabilities();
  if (std::find(caps.benchmarks.begin(), caps.benchmarks.end(), b.type) == caps.benchmarks.end()) {
    std::vector<std::string> types;
    for (BenchmarkType t : caps.benchmarks) types.emplace_back(TypeName(t));
    return MakeError(fmt::format("runtime {} cannot run {} ({} benchmarks); it runs: {}", id.name,
                                 b.id, TypeName(b.type), fmt::join(types, ", ")));
  }
  // An eval's prompts and completions vary in length: it runs in the model's training context
  // (or the n_ctx given), and an attempt whose prompt and max_tokens do not fit fails alone.
  int need = ContextNeed(b);
  if (b.type == BenchmarkType::kEval) {
    if (auto s = CheckEvalCell(spec); !s) return s.error();
    auto header = ReadModelHeader(spec.model_path, spec.device.get());
    if (!header) return header.error();
    need = header->n_ctx_train > 0 ? static_cast<int>(header->n_ctx_train) : 4096;
    if (spec.settings.contains("n_ctx") && spec.settings["n_ctx"].is_number_integer() &&
        spec.settings["n_ctx"].get<int64_t>() > 0) {
      need = static_cast<int>(spec.settings["n_ctx"].get<int64_t>());
    }
  }
  if (!spec.log_path.empty()) {
    if (auto s = CheckOutputPath(spec.log_path); !s) return s.error().Wrap("runtime log");
  }
  // The device's facts first: its cores resolve the thread count, its id enters config_id.
  json device_block;
  int physical_cores = ReadCpuTopology().physical;
  int device_cpus = 0;
  if (spec.device) {
    auto fingerprint = spec.device->Fingerprint(spec.label);
    if (!fingerprint) return fingerprint.error();
    device_block = std::move(*fingerprint);
    physical_cores = std::max(1, device_block["cpu"].value("physical_cores", 1));
    if (!spec.device->IsHost()) device_cpus = device_block["cpu"].value("logical_cores", 0);
  } else {
    device_block = DeviceFingerprint(spec.label);
  }
  if (auto name = DeviceNameOf(device_block.value("id", "")); name) device_block["name"] = *name;
  auto settings = runtime.ResolveSettings(spec.settings, {b, need, physical_cores, device_cpus});
  if (!settings) return settings.error();
  auto info = ReadModelHeader(spec.model_path, spec.device.get());
  if (!info) return info.error();
  if (auto s = runtime.CheckModel(RuntimeModelPath(spec.model_path, spec.device.get())); !s) {
    return s.error();
  }
  if (info->n_ctx_train > 0 && static_cast<uint64_t>(need) > info->n_ctx_train &&
      !spec.allow_context_overflow) {
    return MakeError(b.id + " needs " + std::to_string(need) + " tokens of context but " +
                     info->file_name + " was trained for " + std::to_string(info->n_ctx_train) +
                     "; pick a smaller shape or allow context overflow");
  }
  auto sha = ModelSha256(spec.model_path, spec.device.get(), hooks.hash_file);
  if (!sha) return sha.error();
  json reference;
  if (b.type == BenchmarkType::kKlDivergence) {
    auto r = ResolveReference(spec, *info, hooks);
    if (!r) return r.error();
    reference = std::move(*r);
  }

  json model = ToJson(*info);
  model["path"] = RecordModelPath(spec.model_path, spec.device.get());
  model["sha256"] = *sha;
  json runtime_json = id.extra;
  runtime_json.update({{"name", id.name},
                       {"version", id.version},
                       {"commit", id.commit},
                       {"backends", json::array()},
                       {"build", id.build},
                       {"settings", *settings}});
  json record = {
      {"schema", "pipette.result/1"},
      {"result_id", NewUuidV7()},
      {"status", "running"},
      {"benchmark", ToJson(b)},
      {"model", model},
      {"runtime", runtime_json},
      {"device", device_block},
      {"harness",
       {{"version", build_info::kVersion},
        {"commit", build_info::kGitCommit},
        {"compiler", build_info::kCompiler},
        {"build_type", build_info::kBuildType},
        {"cxx_flags", build_info::kCxxFlags},
        {"warmup_runs", spec.policy.warmup_runs},
        {"min_reps", spec.policy.min_reps},
        {"max_reps", spec.policy.max_reps},
        {"ci_target", spec.policy.ci_target},
        {"request_timeout_s", spec.policy.request_timeout_s},
        {"spin_up_ms", spec.policy.spin_up_ms},
        {"environment", EngineEnvironment()},
        {"readiness", {{"policy", nullptr}, {"waits", json::array()}}}}},
      {"started_at", NowRfc3339()},
      {"logs", {{"warnings", json::array()}}}};
  if (!reference.is_null()) record["input"] = {{"reference_model", reference}};
  record["config_id"] = ConfigId(record);  // computed once, before anything runs
  AddCachedBandwidth(record["device"]);  // from `pipette device probe`; never measured here
  AddCachedNoiseFloor(record["device"]);
  for (const SettingDef& d : runtime.Settings()) {
    if (d.test_only && settings->contains(d.name)) {
      AddWarning(record, fmt::format("test setting {} = {}: {}", d.name, (*settings)[d.name].dump(),
                                     d.meaning));
    }
  }
  if (const std::string w = QuantFallbackWarning(*info); !w.empty()) AddWarning(record, w);
  if (const std::string w = BigCoresWarning(record["device"], *settings); !w.empty()) {
    AddWarning(record, w);
  }
  if (record["device"].value("emulated", false)) {
    AddWarning(record, "emulated device: the runtime ran as " +
                           record["device"]["os"].value("arch", std::string("?")) + " on a " +
                           record["device"].value("emulated_on", std::string("?")) +
                           " kernel (an emulator); its speed is not the hardware's");
  }
  if (info->synthetic) {
    AddWarning(record, "synthetic model: its performance stands for its shape, not for any quality");
  }
  return record;
}

void MarkFailed(json& record, const Error& error, const std::string& default_stage) {
  record["status"] = "failed";
  record["failure"] = {{"stage", error.stage.empty() ? default_stage : error.stage},
                       {"message", error.message}};
  record["metrics"] = json::object();
  if (!record.contains("samples")) record["samples"] = json::array();
  record["finished_at"] = NowRfc3339();
}

void AddWarning(json& record, const std::string& warning) {
  json& warnings = record["logs"]["warnings"];
  if (!warnings.is_array()) warnings = json::array();
  for (const auto& w : warnings) {
    if (w == warning) return;
  }
  warnings.push_back(warning);
}

void RecordLoadFacts(const LoadFacts& facts, json& record) {
  for (const std::string& w : facts.warnings) {
    if (!record::IsEngineNote(w)) {
      AddWarning(record, w);
      continue;
    }
    // A harmless line of the engine's log (pipette/record.h): kept, apart, once.
    json& notes = record["logs"]["notes"];
    if (!notes.is_array()) notes = json::array();
    if (std::find(notes.begin(), notes.end(), w) == notes.end()) notes.push_back(w);
  }
  json& rt = record["runtime"];
  rt["backends"] = facts.backends;
  if (!facts.effective.empty()) rt["effective"] = facts.effective;
  rt["build"].update(facts.build);
  rt.update(facts.extra);
}

std::string ConfigId(const json& record) {
  const json key = {
      {"model.sha256", record["model"]["sha256"]},
      {"model.quant", record["model"]["quant"]},
      {"runtime.name", record["runtime"]["name"]},
      {"runtime.version", record["runtime"]["version"]},
      {"runtime.commit", record["runtime"]["commit"]},
      {"runtime.settings", record["runtime"]["settings"]},
      {"device.id", record["device"]["id"]},
      {"benchmark.id", record["benchmark"]["id"]},
      {"benchmark.methodology", record["benchmark"]["methodology"]}};
  return Sha256Hex(key.dump());  // nlohmann::json orders object keys: canonical, no spaces
}

Result<std::string> PlannedConfigId(const CellSpec& spec, const CellHooks& hooks) {
  auto record = ResolveCell(spec, hooks);
  if (!record) return record.error();
  return (*record)["config_id"].get<std::string>();
}

}  // namespace pipette
