#include "harness/record.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/sha256.h"
#include "pipette/build_info.h"
#include "pipette/gguf.h"
#include "platform/bandwidth.h"
#include "platform/cpu_affinity.h"
#include "platform/device.h"
#include "platform/output_path.h"
#include "runtimes/llamacpp/driver_client.h"

namespace pipette {
namespace {

using nlohmann::json;

// The shape's context need: prompt plus generated tokens (one for the memory benchmark).
int ContextNeed(const BenchmarkSpec& b) {
  switch (b.type) {
    case BenchmarkType::kMemory: return b.prefill_tokens + 1;
    case BenchmarkType::kKlDivergence: return b.prefill_tokens;
    case BenchmarkType::kSoak: return b.prefill_tokens + b.decode_tokens;
    case BenchmarkType::kPrefill: return b.prefill_tokens;
    default: return b.prefill_tokens + b.decode_tokens;
  }
}

// KV cache types llama.cpp accepts (its common/arg.cpp `kv_cache_types`).
constexpr const char* kKvCacheTypes[] = {"f32",  "f16",  "bf16",   "q8_0", "q4_0",
                                         "q4_1", "iq4_nl", "q5_0", "q5_1"};

Status CheckKvType(const std::string& option, const std::string& type) {
  std::string valid;
  for (const char* t : kKvCacheTypes) {
    if (type == t) return Status::Ok();
    valid += std::string(valid.empty() ? "" : ", ") + t;
  }
  return MakeError(option + " '" + type + "' is not a KV cache type llama.cpp accepts; use one of " +
                   valid);
}

Status CheckSettings(const RuntimeSettings& s, int need) {
  if (s.threads < 0) return MakeError("threads must be at least 1 (0 means physical cores)");
  if (s.n_batch < 1 || s.n_ubatch < 1) return MakeError("n_batch and n_ubatch must be at least 1");
  if (s.n_ctx != 0 && s.n_ctx < need) {
    return MakeError("--ctx-size (n_ctx) " + std::to_string(s.n_ctx) + " is smaller than the " +
                     std::to_string(need) + " tokens this benchmark needs; raise it or leave it out");
  }
  if (auto st = CheckKvType("--cache-type-k", s.type_k); !st) return st;
  if (auto st = CheckKvType("--cache-type-v", s.type_v); !st) return st;
  if (s.flash_attn != "auto" && s.flash_attn != "on" && s.flash_attn != "off") {
    return MakeError("flash_attn must be auto, on or off, not '" + s.flash_attn + "'");
  }
  return Status::Ok();
}

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
    return MakeError(b.id + " compares the model with a higher-precision one: give it with "
                     "--reference FILE (e.g. the F16 or F32 GGUF the model was quantized from; in a "
                     "suite: reference = \"FILE\" in the model's [[models]] entry)");
  }
  auto ref = ReadGgufInfo(spec.reference_model_path);
  if (!ref) return ref.error().Wrap("--reference");
  if (ref->vocab_size != model.vocab_size) {
    return MakeError("--reference " + ref->file_name + " has a vocabulary of " +
                     std::to_string(ref->vocab_size) + " tokens but " + model.file_name + " has " +
                     std::to_string(model.vocab_size) + "; both must share one tokenizer");
  }
  if (ref->n_ctx_train > 0 && static_cast<uint64_t>(b.prefill_tokens) > ref->n_ctx_train &&
      !spec.allow_context_overflow) {
    return MakeError(b.id + " needs " + std::to_string(b.prefill_tokens) +
                     " tokens of context but --reference " + ref->file_name + " was trained for " +
                     std::to_string(ref->n_ctx_train));
  }
  auto sha = hooks.hash_file ? hooks.hash_file(spec.reference_model_path)
                             : Sha256OfFile(spec.reference_model_path);
  if (!sha) return sha.error();
  return json{{"path", std::filesystem::absolute(spec.reference_model_path).string()},
              {"file_name", ref->file_name},
              {"sha256", *sha},
              {"quant", ref->quant},
              {"params", ref->params}};
}

}  // namespace

std::string MetricUnit(const std::string& metric) {
  if (metric.ends_with("_throughput")) return "tokens/s";
  if (metric == "max_host_usage" || metric == "max_gpu_usage" || metric == "swap_observed") {
    return "bytes";
  }
  if (metric == "kl_divergence") return "nats";
  if (metric == "top1_agreement") return "ratio";
  if (metric == "perplexity" || metric == "reference_perplexity") return "perplexity";
  return "ms";
}

Result<json> ResolveCell(const CellSpec& spec, const CellHooks& hooks) {
  const BenchmarkSpec& b = spec.benchmark;
  if (b.type != BenchmarkType::kPrefill && b.type != BenchmarkType::kDecode &&
      b.type != BenchmarkType::kEndToEnd && b.type != BenchmarkType::kMemory &&
      b.type != BenchmarkType::kKlDivergence && b.type != BenchmarkType::kSoak) {
    return MakeError("benchmark " + b.id + " (type " + std::string(TypeName(b.type)) +
                     ") is not run by `pipette run` yet");
  }
  const int need = ContextNeed(b);
  if (auto s = CheckSettings(spec.settings, need); !s) return s.error();
  if (!spec.log_path.empty()) {
    if (auto s = CheckOutputPath(spec.log_path); !s) return s.error().Wrap("--runtime-log");
  }
  const std::string driver = spec.driver_path.empty() ? DefaultDriverPath() : spec.driver_path;
  if (access(driver.c_str(), X_OK) != 0) {
    return MakeError("the runtime driver " + driver +
                     " is missing or not executable; rebuild with scripts/build.sh");
  }
  auto info = ReadGgufInfo(spec.model_path);
  if (!info) return info.error();
  if (info->n_ctx_train > 0 && static_cast<uint64_t>(need) > info->n_ctx_train &&
      !spec.allow_context_overflow) {
    return MakeError(b.id + " needs " + std::to_string(need) + " tokens of context but " +
                     info->file_name + " was trained for " + std::to_string(info->n_ctx_train) +
                     "; pick a smaller shape or pass --allow-context-overflow (in a suite: "
                     "allow_context_overflow = true)");
  }
  auto sha = hooks.hash_file ? hooks.hash_file(spec.model_path) : Sha256OfFile(spec.model_path);
  if (!sha) return sha.error();
  json reference;
  if (b.type == BenchmarkType::kKlDivergence) {
    auto r = ResolveReference(spec, *info, hooks);
    if (!r) return r.error();
    reference = std::move(*r);
  }

  RuntimeSettings s = spec.settings;
  if (s.threads == 0) s.threads = ReadCpuTopology().physical;
  if (s.n_ctx == 0) s.n_ctx = need;
  if (s.n_gpu_layers < 0) s.n_gpu_layers = build_info::kLlamaGpuOffload ? 999 : 0;
  if (!s.cpus.empty()) {
    auto cpus = ParseCpuList(s.cpus);
    if (!cpus) return cpus.error().Wrap("--cpus");
    if (auto st = CheckCpusAvailable(*cpus); !st) return st.error().Wrap("--cpus " + s.cpus);
    s.cpus = FormatCpuList(*cpus);
  }

  json model = ToJson(*info);
  model["path"] = std::filesystem::absolute(spec.model_path).string();
  model["sha256"] = *sha;
  const std::string commit = build_info::kLlamaCommit;
  json record = {
      {"schema", "pipette.result/1"},
      {"result_id", NewUuidV7()},
      {"status", "running"},
      {"benchmark", ToJson(b)},
      {"model", model},
      {"runtime",
       {{"name", "llamacpp"},
        {"version", "llama.cpp@" + commit.substr(0, 7)},
        {"commit", commit},
        {"backends", json::array()},
        {"build", {{"flags", build_info::kLlamaBuildFlags}, {"prefix", build_info::kLlamaPrefix}}},
        {"settings",
         {{"threads", s.threads}, {"n_gpu_layers", s.n_gpu_layers}, {"mmap", s.mmap},
          {"flash_attn", s.flash_attn}, {"n_batch", s.n_batch}, {"n_ubatch", s.n_ubatch},
          {"type_k", s.type_k}, {"type_v", s.type_v}, {"n_ctx", s.n_ctx}, {"poll", 50}}}}},
      {"device", DeviceFingerprint(spec.label)},
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
        {"environment", EngineEnvironment()},
        {"readiness", {{"policy", nullptr}, {"waits", json::array()}}}}},
      {"started_at", NowRfc3339()},
      {"logs", {{"warnings", json::array()}}}};
  if (!reference.is_null()) record["input"] = {{"reference_model", reference}};
  AddCachedBandwidth(record["device"]);  // from `pipette device probe`; never measured here
  if (!s.cpus.empty()) record["runtime"]["settings"]["cpus"] = s.cpus;
  if (s.test_leak_bytes > 0) {
    record["runtime"]["settings"]["test_leak_bytes"] = s.test_leak_bytes;
    AddWarning(record, "test setting: the runtime leaks " + std::to_string(s.test_leak_bytes) +
                           " bytes per request on purpose");
  }
  if (const std::string w = QuantFallbackWarning(*info); !w.empty()) AddWarning(record, w);
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
  record["config_id"] = ConfigId(record);
}

void AddWarning(json& record, const std::string& warning) {
  json& warnings = record["logs"]["warnings"];
  if (!warnings.is_array()) warnings = json::array();
  for (const auto& w : warnings) {
    if (w == warning) return;
  }
  warnings.push_back(warning);
}

void RecordRuntime(const json& load_reply, json& record) {
  for (const auto& w : load_reply.value("warnings", json::array())) {
    if (w.is_string()) AddWarning(record, w.get<std::string>());
  }
  json& rt = record["runtime"];
  if (load_reply.contains("settings")) rt["settings"] = load_reply["settings"];
  if (load_reply.contains("effective")) {
    const json& e = load_reply["effective"];
    rt["effective"] = e;
    const json& s = rt["settings"];
    // llama.cpp caps n_batch at n_ctx and n_ubatch at n_batch; only a change beyond that (one
    // that alters how the shape is processed) is worth a warning.
    const auto asked = [&](const char* key) { return s.value(key, 0); };
    const int expected_batch =
        std::min(asked("n_batch"), asked("n_ctx") > 0 ? asked("n_ctx") : asked("n_batch"));
    const int expected_ubatch = std::min(asked("n_ubatch"), e.value("n_batch", expected_batch));
    const std::pair<const char*, int> checks[] = {{"n_batch", expected_batch},
                                                  {"n_ubatch", expected_ubatch}};
    for (const auto& [key, expected] : checks) {
      if (e.contains(key) && e[key].get<int>() != expected) {
        AddWarning(record, fmt::format("llama.cpp used {} = {}, not the {} asked for", key,
                                       e[key].get<int>(), asked(key)));
      }
    }
  }
  if (load_reply.contains("runtime")) {
    rt["backends"] = load_reply["runtime"].value("backends", json::array());
    rt["build"]["system_info"] = load_reply["runtime"].value("system_info", "");
    rt["build"]["supports_gpu_offload"] = load_reply["runtime"].value("supports_gpu_offload", false);
  }
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
  return ConfigId(*record);
}

}  // namespace pipette
