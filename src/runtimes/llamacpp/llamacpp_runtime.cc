#include "runtimes/llamacpp/llamacpp_runtime.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "pipette/build_info.h"
#include "platform/device_access.h"
#include "platform/probe.h"
#include "platform/proc_memory.h"
#include "runtimes/common/resident.h"
#include "runtimes/common/resolve.h"
#include "runtimes/llamacpp/driver_client.h"
#include "runtimes/llamacpp/protocol.h"
#include "base/sha256.h"

namespace pipette {
namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

double MsSince(SteadyTime::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyTime::now() - t0).count();
}

}  // namespace

std::vector<SettingDef> LlamaCppSettingDefs() {
  SettingDef n_ctx;
  n_ctx.name = "n_ctx";
  n_ctx.kind = SettingKind::kInteger;
  n_ctx.min = 0;
  n_ctx.max = 1 << 24;
  n_ctx.default_value = 0;
  n_ctx.unit = "tokens";
  n_ctx.meaning = "context size (0: exactly the benchmark's shape, P + D; P + 1 for memory)";
  n_ctx.resolution = "0 becomes the shape's need";
  SettingDef leak;
  leak.name = "test_leak_bytes";
  leak.kind = SettingKind::kInteger;
  leak.min = 0;
  leak.max = int64_t{1} << 40;
  leak.unit = "bytes";
  leak.meaning = "fault injection: the driver leaks this many bytes per request (tests only)";
  leak.recorded_only_when_set = true;
  leak.test_only = true;
  return {ThreadsSetting(),     NGpuLayersSetting(),   MmapSetting(),    FlashAttnSetting(),
          NBatchSetting(),      NUbatchSetting(),      KvTypeSetting("type_k"),
          KvTypeSetting("type_v"), n_ctx,              PollSetting(),    CpusSetting(),
          leak};
}

namespace {

// The warnings a load reply gives: llama.cpp's own, and a batch size llama.cpp changed beyond
// its documented caps (n_batch at n_ctx, n_ubatch at n_batch), which alters how the shape runs.
std::vector<std::string> LoadWarnings(const json& reply, const json& asked_settings) {
  std::vector<std::string> out;
  for (const auto& w : reply.value("warnings", json::array())) {
    if (w.is_string()) out.push_back(w.get<std::string>());
  }
  const json e = reply.value("effective", json::object());
  for (const char* key : {"n_batch", "n_ubatch"}) {
    // Checked before any is read as an int: a float out of an int's range is undefined behaviour.
    if (e.contains(key) && !e[key].is_number_integer()) {
      throw std::invalid_argument(std::string("effective ") + key + " is not an integer");
    }
  }
  const auto asked = [&](const char* key) { return asked_settings.value(key, 0); };
  // llama.cpp caps n_batch at the whole context: n_ctx per sequence times the sequences.
  const int n_ctx_total = asked("n_ctx") * std::max(1, asked_settings.value("n_seq", 1));
  const int expected_batch =
      std::min(asked("n_batch"), n_ctx_total > 0 ? n_ctx_total : asked("n_batch"));
  const int expected_ubatch = std::min(asked("n_ubatch"), e.value("n_batch", expected_batch));
  const std::pair<const char*, int> checks[] = {{"n_batch", expected_batch},
                                                {"n_ubatch", expected_ubatch}};
  for (const auto& [key, expected] : checks) {
    if (e.contains(key) && e[key].get<int>() != expected) {
      out.push_back(fmt::format("llama.cpp used {} = {}, not the {} asked for", key,
                                e[key].get<int>(), asked(key)));
    }
  }
  return out;
}

}  // namespace

Result<LoadFacts> LoadFactsFromReply(const json& reply, const json& asked_settings) {
  try {
    if (!reply.is_object()) throw std::invalid_argument("not a JSON object");
    LoadFacts facts;
    facts.effective = reply.value("effective", json::object());
    if (!facts.effective.is_object()) throw std::invalid_argument("effective is not an object");
    if (reply.contains("runtime")) {
      const json& rt = reply["runtime"];
      facts.backends = rt.value("backends", json::array());
      if (!facts.backends.is_array()) throw std::invalid_argument("backends is not a list");
      facts.build = {{"system_info", rt.value("system_info", "")},
                     {"supports_gpu_offload", rt.value("supports_gpu_offload", false)}};
    }
    facts.warnings = LoadWarnings(reply, asked_settings);
    return facts;
  } catch (const std::exception& e) {
    return MakeError("the runtime's load reply does not fit the protocol (" +
                         std::string(e.what()).substr(0, 200) + "); is the driver from this build?",
                     "load");
  }
}

namespace {

class LlamaCppSession : public RuntimeSession {
 public:
  // `device` null: the driver runs here, and `sampler` (may be null) samples it from outside.
  // Otherwise the driver reads its own memory on its device (the memory command).
  // `loaded.load_reply` passed LoadFactsFromReply.
  // `settings`: the load request's (n_seq included: the slots of parallel completions).
  LlamaCppSession(LoadedDriver loaded, std::unique_ptr<MemorySampler> sampler, const json& settings,
                  std::shared_ptr<DeviceAccess> device)
      : driver_(std::move(loaded.driver)), sampler_(std::move(sampler)), device_(std::move(device)) {
    facts_ = *LoadFactsFromReply(loaded.load_reply, settings);
    facts_.load_ms = loaded.load_ms;
    slots_.resize(static_cast<size_t>(std::max(1, settings.value("n_seq", 1))));
  }
  ~LlamaCppSession() override { Stop(); }

  const LoadFacts& Facts() const override { return facts_; }

  Result<std::vector<int32_t>> Tokenize(const std::string& text) override {
    return driver_->Tokenize(text);
  }

  Result<PrefillTiming> Prefill(const std::vector<int32_t>& tokens, const std::string&) override {
    const auto t0 = SteadyTime::now();
    auto r = driver_->Call(protocol::PrefillRequest(tokens), protocol::kPrefill);
    const double outside_ms = MsSince(t0);
    if (!r) return r.error();
    const auto reply = protocol::ReadReply<protocol::PrefillReply>(*r, protocol::kPrefill);
    if (!reply) return reply.error();
    return PrefillTiming{reply->prefill_ns / 1e6, false, outside_ms};
  }

  Result<DecodeTiming> Decode(const std::vector<int32_t>& context, const std::string&,
                              int n) override {
    auto r = driver_->Call(protocol::DecodeRequest(context, n), protocol::kDecode);
    if (!r) return r.error();
    const auto reply = protocol::ReadReply<protocol::DecodeReply>(*r, protocol::kDecode);
    if (!reply) return reply.error();
    DecodeTiming t;
    for (int64_t ns : reply->step_ns) {
      t.step_ms.push_back(ns / 1e6);
      t.total_ms += ns / 1e6;
    }
    t.tokens = static_cast<int>(reply->step_ns.size());
    t.context_tokens = static_cast<int>(context.size());
    return t;
  }

  Result<GenerateTiming> Generate(const std::string& text, int n) override {
    const auto t0 = SteadyTime::now();
    auto r = driver_->Call(protocol::GenerateRequest(text, n, true), protocol::kGenerate);
    const double outside_ms = MsSince(t0);
    if (!r) return r.error();
    const auto reply = protocol::ReadReply<protocol::GenerateReply>(*r, protocol::kGenerate);
    if (!reply) return reply.error();
    GenerateTiming g;
    for (int64_t ns : reply->token_ns) g.token_ms.push_back(ns / 1e6);
    g.end_ms = g.token_ms.empty() ? 0 : g.token_ms.back();
    g.prefill_ms = reply->prefill_ns / 1e6;
    g.request_ms = outside_ms;
    g.prompt_tokens = reply->n_prompt_tokens;
    g.generated_tokens = static_cast<int>(reply->token_ns.size());
    g.text = reply->text;
    return g;
  }

  Result<Completion> Complete(const CompletionRequest& request,
                              const std::function<bool(const std::string&)>& keep_going) override {
    const protocol::CompleteRequest r = RequestOf(request);
    const auto t0 = SteadyTime::now();
    auto reply = driver_->Call(protocol::ToRequest(r), protocol::kComplete);
    Completion c;
    c.sampling = SamplingOf(r);
    while (true) {
      if (!reply) return reply.error();
      const auto decoded = protocol::ReadReply<protocol::CompletionReply>(*reply, protocol::kComplete);
      if (!decoded) return decoded.error();
      const protocol::CompletionReply& part = *decoded;
      if (!part.prompt_format.empty()) {
        c.prompt_tokens = part.prompt_tokens;
        c.prompt_format = part.prompt_format;
        c.chat_template = part.chat_template;
        c.template_engine = part.template_engine;
      }
      c.text += part.text;
      c.output_tokens += part.tokens;
      c.time_to_first_token_ms = part.first_token_ns / 1e6;
      c.decode_ms = part.decode_ns / 1e6;
      if (part.done) {
        c.stop = part.stop;
        break;
      }
      if (!keep_going(c.text)) {
        c.stop = "stopped";
        break;
      }
      reply = driver_->Call(protocol::ContinueRequest(kChunk), protocol::kContinue);
    }
    c.total_ms = MsSince(t0);
    return c;
  }

  Status StartCompletion(int slot, const CompletionRequest& request) override {
    if (slot < 0 || slot >= static_cast<int>(slots_.size())) {
      return MakeError(fmt::format("slot {} is out of range: the session runs {} in parallel",
                                   slot, slots_.size()),
                       "generate");
    }
    if (slots_[slot].running) return MakeError(fmt::format("slot {} is busy", slot), "generate");
    const protocol::CompleteRequest r = RequestOf(request);
    const auto t0 = SteadyTime::now();
    auto reply = driver_->Call(protocol::SeqStartRequest(r, slot, kChunk), protocol::kSeqStart);
    if (!reply) {
      // The driver refused this prompt alone ("context", "template"): the others run on.
      // Anything else may have ended the driver, and every running completion with it.
      if (reply.error().stage != "context" && reply.error().stage != "template") LoseAll();
      return reply.error();
    }
    const auto decoded = protocol::ReadReply<protocol::SeqStartReply>(*reply, protocol::kSeqStart);
    if (!decoded) {
      LoseAll();
      return decoded.error();
    }
    Slot& st = slots_[slot];
    st = Slot{};
    st.running = true;
    st.t0 = t0;
    Completion& c = st.c;
    c.sampling = SamplingOf(r);
    c.prompt_tokens = decoded->prompt_tokens;
    c.prompt_format = decoded->prompt_format;
    c.chat_template = decoded->chat_template;
    c.template_engine = decoded->template_engine;
    // The first chunk is one token: no check point falls in it (kChunk > 1).
    const protocol::SeqChunk& part = decoded->chunk;
    c.text = part.text;
    c.output_tokens = part.tokens;
    c.time_to_first_token_ms = part.first_token_ns / 1e6;
    c.decode_ms = part.decode_ns / 1e6;
    if (part.done) End(slot, part.stop, ended_);
    return Status::Ok();
  }

  Result<std::vector<SlotCompletion>> AdvanceCompletions(
      const std::function<bool(int, const std::string&)>& keep_going) override {
    std::vector<SlotCompletion> out;
    out.swap(ended_);
    const bool any_running =
        std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.running; });
    if (!out.empty() || !any_running) return out;
    auto reply = driver_->Call(protocol::SeqStepRequest(kChunk), protocol::kSeqStep);
    if (!reply) {
      LoseAll();
      return reply.error();
    }
    const auto decoded = protocol::ReadReply<protocol::SeqStepReply>(*reply, protocol::kSeqStep);
    if (!decoded) {
      LoseAll();
      return decoded.error();
    }
    std::vector<int> to_stop;  // stopped by the caller while the driver still runs them
    for (const protocol::SeqChunk& part : decoded->slots) {
      if (part.slot < 0 || part.slot >= static_cast<int>(slots_.size()) ||
          !slots_[part.slot].running) {
        LoseAll();
        return MakeError(fmt::format("the runtime's seq_step reply names slot {}, which runs "
                                     "nothing; is the driver from this build?",
                                     part.slot),
                         protocol::kSeqStep);
      }
      Completion& c = slots_[part.slot].c;
      c.time_to_first_token_ms = part.first_token_ns / 1e6;
      // The check points in order: where Complete's caller would judge the text, this one does,
      // and a stop cuts the completion back to that point (later tokens were decoded for
      // nothing, and are dropped).
      bool stopped = false;
      for (const protocol::SeqCheck& check : part.checks) {
        if (check.bytes < 0 || check.bytes > static_cast<int64_t>(part.text.size())) {
          LoseAll();
          return MakeError("the runtime's seq_step reply has a check point outside its text; is "
                           "the driver from this build?",
                           protocol::kSeqStep);
        }
        std::string text = c.text + part.text.substr(0, static_cast<size_t>(check.bytes));
        if (!keep_going(part.slot, text)) {
          c.text = std::move(text);
          c.output_tokens = check.tokens;
          c.decode_ms = check.decode_ns / 1e6;
          stopped = true;
          break;
        }
      }
      if (stopped) {
        if (!part.done) to_stop.push_back(part.slot);
        End(part.slot, "stopped", out);
        continue;
      }
      c.text += part.text;
      c.output_tokens += part.tokens;
      c.decode_ms = part.decode_ns / 1e6;
      if (part.done) End(part.slot, part.stop, out);
    }
    for (int slot : to_stop) {
      if (auto r = driver_->Call(protocol::SeqStopRequest(slot), protocol::kSeqStop); !r) {
        LoseAll();
        return r.error();
      }
    }
    return out;
  }

  Status WriteLogProbs(const std::vector<int32_t>& tokens, const std::string& path) override {
    if (!device_) {
      auto r = driver_->Call(protocol::LogProbsRequest(tokens, path), protocol::kLogProbs);
      if (!r) return r.error();
      return Status::Ok();
    }
    // Written on the device, then fetched: the file is the driver's, the path the host's.
    Transport& t = *device_->transport();
    const std::string on_device = t.DeviceDir() + "/logprobs-" + std::to_string(driver_->DevicePid()) + ".pplp";
    auto r = driver_->Call(protocol::LogProbsRequest(tokens, on_device), protocol::kLogProbs);
    Status fetched = r ? t.Fetch(on_device, path) : Status(r.error());
    t.Run({"rm", "-f", on_device});
    return fetched;
  }

  std::vector<int> Pids() const override { return {driver_->DevicePid()}; }

  std::optional<uint64_t> PeakHostBytes() override {
    if (device_) {
      const json m = DeviceMemory();
      if (!m.contains("peak_bytes")) return std::nullopt;
      return m["peak_bytes"].get<uint64_t>();
    }
    if (sampler_) {
      sampler_->Sample();
      return sampler_->PeakBytes();
    }
    const auto m = ReadProcMemory(driver_->Pid());
    if (!m) return std::nullopt;
    return std::max(m->vm_hwm, m->vm_rss + m->vm_swap);
  }
  uint64_t PeakSwapBytes() override {
    if (device_) return DeviceMemory().value("peak_swap_bytes", uint64_t{0});
    return sampler_ ? sampler_->PeakSwapBytes() : 0;
  }
  std::optional<ResidentSplit> ResidentAtPeak() override {
    if (device_) {
      const json m = DeviceMemory();
      const json& at = m.contains("at_peak") ? m["at_peak"] : m.value("now", json());
      if (!at.is_object()) return std::nullopt;
      return SplitOf(ProcMemoryFromJson(at));
    }
    return ResidentAtPeakOf(sampler_.get(), driver_->Pid());
  }

  std::string LogTail() const override { return driver_->StderrTail(); }

  void Stop() override {
    if (sampler_) sampler_->Stop();
    driver_->Quit();
  }

 private:
  // The driver's memory reply on its device ({} when it cannot answer: it is gone).
  json DeviceMemory() {
    auto r = driver_->Call({{"cmd", protocol::kMemory}}, "memory");
    return r ? *r : json::object();
  }

  // Tokens per round trip of a completion: the detector sees the text this often; the IPC costs
  // well under 1% of 32 decode steps. Parallel completions keep the same check points.
  static constexpr int kChunk = 32;

  static protocol::CompleteRequest RequestOf(const CompletionRequest& request) {
    protocol::CompleteRequest r;
    r.message = request.message;
    r.max_tokens = request.max_tokens;
    r.n = kChunk;
    r.temperature = request.temperature;
    r.seed = request.seed;
    return r;
  }
  static json SamplingOf(const protocol::CompleteRequest& r) {
    return {{"top_k", r.top_k},       {"top_p", r.top_p}, {"min_p", r.min_p},
            {"temperature", r.temperature}, {"seed", r.seed},
            {"chain", r.temperature > 0 ? "top_k,top_p,min_p,temp,dist" : "greedy"}};
  }

  // A parallel completion as the harness assembles it from the driver's chunks.
  struct Slot {
    bool running = false;
    SteadyTime::time_point t0;  // its StartCompletion call
    Completion c;
  };
  void End(int slot, const std::string& stop, std::vector<SlotCompletion>& out) {
    Slot& st = slots_[slot];
    st.c.stop = stop;
    st.c.total_ms = MsSince(st.t0);
    out.push_back({slot, std::move(st.c)});
    st = Slot{};
  }
  // The engine failed: whatever ran is gone.
  void LoseAll() {
    for (Slot& st : slots_) st = Slot{};
    ended_.clear();
  }

  std::unique_ptr<LlamaCppDriver> driver_;
  std::unique_ptr<MemorySampler> sampler_;
  std::shared_ptr<DeviceAccess> device_;  // null: this machine
  LoadFacts facts_;
  std::vector<Slot> slots_;              // SessionOptions::parallel of them
  std::vector<SlotCompletion> ended_;    // ended in StartCompletion, not yet returned
};

class LlamaCppRuntime : public Runtime {
 public:
  LlamaCppRuntime(std::string driver_path, std::shared_ptr<DeviceAccess> device)
      : driver_path_(std::move(driver_path)), defs_(LlamaCppSettingDefs()) {
    const std::string commit = build_info::kLlamaCommit;
    identity_.name = "llamacpp";
    identity_.version = "llama.cpp@" + commit.substr(0, 7);
    identity_.commit = commit;
    identity_.build = {{"flags", build_info::kLlamaBuildFlags},
                       {"prefix", build_info::kLlamaPrefix}};
    if (device && !device->IsHost()) {
      device_ = std::move(device);
      driver_path_ = device_->DriverPath();
      // The device build: its own flags (static, its CPU level), the same pinned commit.
      identity_.build = {{"device_build", device_->DriverBuildJson()}};
    }
  }

  const RuntimeIdentity& Identity() const override { return identity_; }
  const std::vector<SettingDef>& Settings() const override { return defs_; }
  RuntimeCapabilities Capabilities() const override {
    return {{BenchmarkType::kPrefill, BenchmarkType::kDecode, BenchmarkType::kEndToEnd,
             BenchmarkType::kMemory, BenchmarkType::kSoak, BenchmarkType::kKlDivergence,
             BenchmarkType::kEval},
            true,
            true,
            true,
            false,
            kMaxParallel};
  }

  Result<json> ResolveSettings(const json& given, const ResolveContext& cell) const override {
    auto s = ResolveByDefinitions(
        identity_.name, defs_, given,
        [&](const SettingDef& d) -> json {
          if (d.name == "threads") return cell.physical_cores;
          return nullptr;
        },
        device_ ? cell.device_cpus : 0);
    if (!s) return s.error();
    json& r = *s;
    if (auto st = CheckContextSize(r["n_ctx"].get<int64_t>(), cell.context_tokens); !st) {
      return st.error();
    }
    if (r["n_ctx"].get<int64_t>() == 0) r["n_ctx"] = cell.context_tokens;
    if (r["n_gpu_layers"].get<int>() < 0) {
      r["n_gpu_layers"] = build_info::kLlamaGpuOffload ? 999 : 0;
    }
    if (r.contains("test_leak_bytes") && r["test_leak_bytes"].get<int64_t>() == 0) {
      r.erase("test_leak_bytes");
    }
    return r;
  }

  Result<std::unique_ptr<RuntimeSession>> Start(const SessionOptions& o) override {
    if (o.parallel < 1 || o.parallel > kMaxParallel) {
      return MakeError(fmt::format("{} completions in parallel: llamacpp runs 1 to {}", o.parallel,
                                   kMaxParallel),
                       "start");
    }
    if (device_) return StartOnDevice(o);
    std::unique_ptr<MemorySampler> sampler;
    const json settings = LoadSettings(o);
    auto loaded = StartAndLoad(driver_path_, o.log_path, o.timeout, o.model_path, settings,
                               [&](int pid) {
                                 if (o.sample_memory) {
                                   sampler = std::make_unique<MemorySampler>(pid, 10);
                                 }
                                 if (o.on_started) o.on_started(pid);
                               });
    if (!loaded) return loaded.error();
    if (auto facts = LoadFactsFromReply(loaded->load_reply, settings); !facts) {
      return facts.error();
    }
    return std::unique_ptr<RuntimeSession>(
        new LlamaCppSession(std::move(*loaded), std::move(sampler), settings, nullptr));
  }

 private:
  // The model copied to the device once (by its SHA-256), then the driver started there; it
  // samples its own memory every 10 ms when asked (memory benchmarks).
  Result<std::unique_ptr<RuntimeSession>> StartOnDevice(const SessionOptions& o) {
    if (o.model_path.starts_with(kDeviceModelPrefix)) {  // already there: opened where it is
      return StartDriverOnDevice(o, o.model_path.substr(kDeviceModelPrefix.size()));
    }
    std::string sha = o.model_sha256;
    if (sha.empty()) {
      auto h = Sha256OfFile(o.model_path);
      if (!h) return Error{h.error().message, "start"};
      sha = *h;
    }
    const std::string name = o.model_path.substr(o.model_path.rfind('/') + 1);
    auto model = device_->transport()->Install(o.model_path, sha, "models", name, false);
    if (!model) return Error{model.error().message, "start"};
    return StartDriverOnDevice(o, *model);
  }

  Result<std::unique_ptr<RuntimeSession>> StartDriverOnDevice(const SessionOptions& o,
                                                              const std::string& model) {
    json extra = json::object();
    if (o.sample_memory) extra["sample_memory_ms"] = 10;
    const json settings = LoadSettings(o);
    auto loaded = StartAndLoad(driver_path_, o.log_path, o.timeout, model, settings,
                               o.on_started, device_->transport(), extra);
    if (!loaded) return loaded.error();
    if (auto facts = LoadFactsFromReply(loaded->load_reply, settings); !facts) {
      return facts.error();
    }
    return std::unique_ptr<RuntimeSession>(
        new LlamaCppSession(std::move(*loaded), nullptr, settings, device_));
  }

  // The load request's settings: the recorded ones, and the sequences of parallel completions
  // (not a setting: it changes how the cell runs, not what it measures per attempt).
  static json LoadSettings(const SessionOptions& o) {
    json settings = o.settings;
    if (o.parallel > 1) settings["n_seq"] = o.parallel;
    return settings;
  }

  static constexpr int kMaxParallel = 64;

  std::string driver_path_;
  std::vector<SettingDef> defs_;
  RuntimeIdentity identity_;
  std::shared_ptr<DeviceAccess> device_;  // null: this machine
};

}  // namespace

Result<std::shared_ptr<Runtime>> MakeLlamaCppRuntime(const std::string& driver_path,
                                                     std::shared_ptr<DeviceAccess> device) {
  if (device && !device->IsHost()) {
    return std::shared_ptr<Runtime>(new LlamaCppRuntime("", std::move(device)));
  }
  const std::string path = driver_path.empty() ? DefaultDriverPath() : driver_path;
  if (access(path.c_str(), X_OK) != 0) {
    return MakeError("the runtime driver " + path +
                     " is missing or not executable; rebuild with scripts/build.sh");
  }
  return std::shared_ptr<Runtime>(new LlamaCppRuntime(path, nullptr));
}

}  // namespace pipette
