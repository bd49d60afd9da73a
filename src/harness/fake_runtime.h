// A scripted runtime for the harness's unit tests: it drives the one cell loop through faults
// that a real engine cannot be made to produce on demand (a crash at repetition k, a non-finite
// time, a token-count mismatch, a hang). Test-only; real components everywhere else.
#pragma once

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipette/runtime.h"

namespace pipette::testing {

struct FakeScript {
  double prefill_ms = 10;     // each prefill
  double step_ms = 1;         // each decode step
  int fail_at_rep = -1;       // the k-th unit of work (1-based, warm-ups count) fails: a crash
  int nan_at_rep = -1;        // ... returns a non-finite time
  int short_at_rep = -1;      // ... returns one token fewer than asked
  int hang_at_rep = -1;       // ... sleeps past the request timeout, then fails like a kill
  std::string load_error;     // Start() fails with this (stage "load")
  int calls = 0;              // units of work done so far
  int sessions = 0;           // sessions started
};

class FakeSession : public RuntimeSession {
 public:
  explicit FakeSession(FakeScript& s, std::chrono::milliseconds timeout)
      : s_(s), timeout_(timeout) {
    facts_.load_ms = 5;
    facts_.backends = nlohmann::json::array({{{"name", "CPU"}, {"type", "cpu"}}});
  }
  const LoadFacts& Facts() const override { return facts_; }
  Result<std::vector<int32_t>> Tokenize(const std::string& text) override {
    std::vector<int32_t> t = {1};  // BOS, then one token per character
    for (char c : text) t.push_back(static_cast<unsigned char>(c));
    return t;
  }
  Result<PrefillTiming> Prefill(const std::vector<int32_t>&, const std::string&) override {
    if (auto e = Fault("prefill")) return *e;
    return PrefillTiming{Nan(s_.prefill_ms), false, s_.prefill_ms + 0.1};
  }
  Result<DecodeTiming> Decode(const std::vector<int32_t>& context, const std::string&,
                              int n) override {
    if (auto e = Fault("decode")) return *e;
    DecodeTiming t;
    t.tokens = s_.calls == s_.short_at_rep ? n - 1 : n;
    for (int i = 0; i < t.tokens; ++i) t.step_ms.push_back(Nan(s_.step_ms));
    t.total_ms = Nan(s_.step_ms * t.tokens);
    t.context_tokens = static_cast<int>(context.size());
    return t;
  }
  Result<GenerateTiming> Generate(const std::string& text, int n) override {
    if (auto e = Fault("generate")) return *e;
    GenerateTiming g;
    auto prompt = Tokenize(text);
    g.prompt_tokens = static_cast<int>(prompt->size());
    g.generated_tokens = s_.calls == s_.short_at_rep ? n - 1 : n;
    for (int i = 0; i < g.generated_tokens; ++i) g.token_ms.push_back(s_.prefill_ms + i * s_.step_ms);
    g.end_ms = Nan(g.token_ms.back());
    g.prefill_ms = s_.prefill_ms;
    return g;
  }
  Status WriteLogProbs(const std::vector<int32_t>&, const std::string&) override {
    return MakeError("the fake runtime has no log-probabilities", "logprobs");
  }
  std::vector<int> Pids() const override { return {}; }
  std::optional<uint64_t> PeakHostBytes() override { return 64u << 20; }
  // 8 MiB anonymous, 52 MiB file-backed and no shared memory in a 60 MiB resident set: below the
  // peak, as a reading between VmHWM's rises is.
  std::optional<ResidentSplit> ResidentAtPeak() override {
    return ResidentSplit{60u << 20, 8u << 20, 52u << 20, 0};
  }
  std::string LogTail() const override { return "fake log line\n"; }
  void Stop() override {}

 private:
  std::optional<Error> Fault(const std::string& stage) {
    ++s_.calls;
    if (s_.calls == s_.fail_at_rep) {
      return MakeError("runtime process killed by signal 9 (SIGKILL) during " + stage, stage);
    }
    if (s_.calls == s_.hang_at_rep) {
      std::this_thread::sleep_for(timeout_);
      return MakeError("runtime process did not answer within the request timeout during " + stage +
                       " (killed)", stage);
    }
    return std::nullopt;
  }
  double Nan(double v) const {
    return s_.calls == s_.nan_at_rep ? std::numeric_limits<double>::quiet_NaN() : v;
  }

  FakeScript& s_;
  std::chrono::milliseconds timeout_;
  LoadFacts facts_;
};

class FakeRuntime : public Runtime {
 public:
  explicit FakeRuntime(FakeScript& s) : s_(s) {
    identity_.name = "fake";
    identity_.version = "fake@1";
    identity_.commit = "0000000";
    SettingDef threads;
    threads.name = "threads";
    threads.min = 1;
    threads.max = 1024;
    threads.meaning = "CPU threads";
    SettingDef flash_attn;
    flash_attn.name = "flash_attn";
    flash_attn.kind = SettingKind::kChoice;
    flash_attn.choices = {"auto", "on", "off"};
    flash_attn.default_value = "auto";
    flash_attn.meaning = "flash attention";
    defs_ = {threads, flash_attn};
  }
  const RuntimeIdentity& Identity() const override { return identity_; }
  const std::vector<SettingDef>& Settings() const override { return defs_; }
  RuntimeCapabilities Capabilities() const override {
    return {{BenchmarkType::kPrefill, BenchmarkType::kDecode, BenchmarkType::kEndToEnd,
             BenchmarkType::kMemory},
            true, true, true};
  }
  Result<nlohmann::json> ResolveSettings(const nlohmann::json& given,
                                         const ResolveContext& cell) const override {
    return ResolveByDefinitions("fake", defs_, given,
                                [&](const SettingDef&) { return nlohmann::json(cell.physical_cores); });
  }
  Result<std::unique_ptr<RuntimeSession>> Start(const SessionOptions& o) override {
    ++s_.sessions;
    if (!s_.load_error.empty()) return MakeError(s_.load_error, "load");
    return std::unique_ptr<RuntimeSession>(new FakeSession(s_, o.timeout));
  }

 private:
  FakeScript& s_;
  RuntimeIdentity identity_;
  std::vector<SettingDef> defs_;
};

}  // namespace pipette::testing
