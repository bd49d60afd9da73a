// The timed benchmarks (DESIGN.md 4.1): prefill, decode, end-to-end and memory, on any runtime.
// The runtime times the work (pipette/runtime.h); here the input is built, counts are validated
// and the metrics of DESIGN.md 4.3 are derived.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "base/ids.h"
#include "harness/prompt.h"
#include "harness/workload.h"

namespace pipette {
namespace {

using nlohmann::json;

std::string CountMismatch(const std::string& what, int got, int want) {
  return fmt::format("runtime {} {} tokens, expected {}", what, got, want);
}

class TimedWorkload : public Workload {
 public:
  TimedWorkload(const BenchmarkSpec& b, const RuntimeCapabilities& caps) : b_(b), caps_(caps) {}

  bool FreshSessionPerRep() const override { return b_.type == BenchmarkType::kMemory; }

  Status Prepare(RuntimeSession& session, json& record) override {
    if (caps_.own_tokens && b_.type != BenchmarkType::kEndToEnd) {
      tokens_.assign(b_.prefill_tokens, 0);  // only the count reaches the runtime
      record["input"] = {{"prompt_tokens", b_.prefill_tokens},
                         {"token_ids", "the runtime's own (it takes a count, not ids)"}};
      return Status::Ok();
    }
    Tokenizer tokenize = [&session](const std::string& text) { return session.Tokenize(text); };
    // A text-only runtime needs the text of every shape; an end-to-end request always is text.
    if (b_.type == BenchmarkType::kEndToEnd || !caps_.token_input) {
      auto p = BuildTextPrompt(tokenize, b_.prefill_tokens);
      if (!p) return p.error();
      text_ = p->text;
      tokens_ = p->tokens;
      record["input"] = {{"prompt_tokens", p->tokens.size()},
                         {"prompt_sha256", p->sha256},
                         {"text_sha256", p->text_sha256},
                         {"text_chars", p->text.size()}};
    } else {
      auto p = BuildTokenPrompt(tokenize, b_.prefill_tokens);
      if (!p) return p.error();
      tokens_ = p->tokens;
      record["input"] = {{"prompt_tokens", p->tokens.size()},
                         {"prompt_sha256", p->sha256},
                         {"text_sha256", p->text_sha256}};
    }
    return Status::Ok();
  }

  Result<Rep> Once(RuntimeSession& session) override {
    Rep rep;
    rep.started_at = NowRfc3339();
    const int P = b_.prefill_tokens, D = b_.decode_tokens;
    rep.tokens_in = P;
    switch (b_.type) {
      case BenchmarkType::kPrefill: {
        auto t = session.Prefill(tokens_, text_);
        if (!t) return t.error();
        rep.values = {{"prefill_throughput", P / (t->prefill_ms / 1e3)}, {"ttft", t->prefill_ms}};
        if (t->request_ms >= 0) rep.values["harness_overhead"] = t->request_ms - t->prefill_ms;
        if (t->derived_from_ttft) rep.extra["prefill_derived_from_ttft"] = true;
        break;
      }
      case BenchmarkType::kDecode: {
        auto t = session.Decode(tokens_, text_, D);
        if (!t) return t.error();
        if (t->tokens != D) return MakeError(CountMismatch("produced", t->tokens, D), "validate");
        if (t->context_tokens != P) {
          return MakeError(CountMismatch("decoded after a context of", t->context_tokens, P),
                           "validate");
        }
        rep.inter_token_ms = t->step_ms;
        rep.values = {{"decode_throughput", D / (t->total_ms / 1e3)}};
        rep.tokens_out = D;
        // No harness_overhead here: the request also holds the untimed context prefill.
        break;
      }
      case BenchmarkType::kEndToEnd: {
        auto g = session.Generate(text_, D);
        if (!g) return g.error();
        if (g->prompt_tokens != P || g->generated_tokens != D || g->token_ms.empty()) {
          return MakeError(fmt::format("request had {} prompt and {} generated tokens, expected "
                                       "{} and {}",
                                       g->prompt_tokens, g->generated_tokens, P, D),
                           "validate");
        }
        const double ttft = g->token_ms.front(), last = g->token_ms.back();
        if (static_cast<int>(g->token_ms.size()) == D) {
          for (size_t i = 1; i < g->token_ms.size(); ++i) {
            rep.inter_token_ms.push_back(g->token_ms[i] - g->token_ms[i - 1]);
          }
        } else {  // tokens merged into events: no per-token series, never an invented one
          rep.extra["token_events"] = g->token_ms.size();
        }
        rep.values = {{"end_to_end_latency", g->end_ms}, {"ttft", ttft}};
        if (g->prefill_ms > 0) {
          rep.values["prefill_throughput"] = P / (g->prefill_ms / 1e3);
        } else {
          rep.values["prefill_throughput"] = P / (ttft / 1e3);  // derived: recorded as such
          rep.extra["prefill_derived_from_ttft"] = true;
        }
        if (g->request_ms >= 0) rep.values["harness_overhead"] = g->request_ms - g->end_ms;
        if (D > 1) rep.values["decode_throughput"] = (D - 1) / ((last - ttft) / 1e3);
        rep.tokens_out = D;
        break;
      }
      case BenchmarkType::kMemory: {
        // A fresh runtime per repetition: load, prefill P, decode 1, then its peak memory.
        auto t = session.Decode(tokens_, text_, 1);
        if (!t) return t.error();
        // The split first: the peak's own last reading then comes after the split's reading, so
        // anonymous + file-backed + shared <= VmRSS then <= VmHWM now <= the peak.
        const auto split = session.ResidentAtPeak();
        const auto peak = session.PeakHostBytes();
        if (!peak) {
          return MakeError("the runtime's process is not pipette's, so its memory cannot be read",
                           "memory");
        }
        rep.values = {{"max_host_usage", static_cast<double>(*peak)}};
        if (split) {
          // What the resident set was made of (mmapped weights are file-backed). A part is there
          // when some of it was resident, as swap_observed: a metric of zeros has no ratio.
          const std::pair<const char*, uint64_t> parts[] = {
              {"rss_anon_at_peak", split->anon_bytes},
              {"rss_file_at_peak", split->file_bytes},
              {"rss_shmem_at_peak", split->shmem_bytes}};
          for (const auto& [name, bytes] : parts) {
            if (bytes > 0) rep.values[name] = static_cast<double>(bytes);
          }
        }
        if (session.Facts().load_ms > 0) rep.values["load_time"] = session.Facts().load_ms;
        if (const uint64_t swap = session.PeakSwapBytes(); swap > 0) {
          rep.values["swap_observed"] = static_cast<double>(swap);
        }
        rep.tokens_out = 1;
        break;
      }
      default:
        return MakeError(std::string("not a timed benchmark: ") + std::string(TypeName(b_.type)));
    }
    return rep;
  }

  // A 32-token prefill, repeated for `ms`, on engines that keep one process (the work of a
  // llama-bench or a server request would start a process or cross HTTP: no spin-up there).
  Status SpinUp(RuntimeSession& session, int ms) override {
    if (!caps_.token_input || caps_.own_tokens || tokens_.empty()) return Status::Ok();
    const std::vector<int32_t> prefix(tokens_.begin(),
                                      tokens_.begin() + std::min<size_t>(32, tokens_.size()));
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    do {
      auto t = session.Prefill(prefix, "");
      if (!t) return t.error();
    } while (std::chrono::steady_clock::now() < until);
    return Status::Ok();
  }

  bool Done(const std::vector<Rep>& reps, const HarnessPolicy& policy, bool* ci_reached) override {
    return AdaptiveDone(reps, std::string(HeadlineMetric(b_.type)), policy, ci_reached);
  }
  std::string RepLine(const std::vector<Rep>& reps) const override {
    return AdaptiveRepLine(reps, std::string(HeadlineMetric(b_.type)));
  }

  void Finish(const std::vector<Rep>& reps, json& record, json&) override {
    for (const Rep& r : reps) {
      if (r.extra.contains("token_events")) {
        record["logs"]["warnings"].push_back(
            "the runtime streamed several tokens in one event in some repetitions (see "
            "samples[].token_events), so those have no inter-token latencies");
        break;
      }
    }
    if (!reps.empty() && reps.front().extra.value("prefill_derived_from_ttft", false)) {
      record["harness"]["prefill_throughput_derived"] =
          "P / time to first token: the runtime does not time prefill by itself";
    }
  }

 private:
  BenchmarkSpec b_;
  RuntimeCapabilities caps_;
  std::vector<int32_t> tokens_;
  std::string text_;
};

}  // namespace

std::unique_ptr<Workload> MakeTimedWorkload(const BenchmarkSpec& b, const RuntimeCapabilities& c) {
  return std::make_unique<TimedWorkload>(b, c);
}

}  // namespace pipette
