// soak_<P>_<D>_<minutes> (DESIGN.md 4.1): the end-to-end request repeated back to back for the
// given time, no readiness gate between requests (the point is to keep the device busy); each
// request's decode throughput and the runtime's peak memory after it feed AnalyzeSoak, which
// flags thermal decay and leaks.
#include <chrono>

#include <fmt/format.h>

#include "base/ids.h"
#include "harness/prompt.h"
#include "harness/record.h"
#include "harness/workload.h"
#include "pipette/soak.h"

namespace pipette {
namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

class SoakWorkload : public Workload {
 public:
  explicit SoakWorkload(const WorkloadContext& c) : c_(c), b_(c.spec.benchmark) {}

  bool Gated() const override { return false; }

  Status Prepare(RuntimeSession& session, json& record) override {
    Tokenizer tokenize = [&session](const std::string& text) { return session.Tokenize(text); };
    auto p = BuildTextPrompt(tokenize, b_.prefill_tokens);
    if (!p) return p.error();
    text_ = p->text;
    record["input"] = {{"prompt_tokens", p->tokens.size()}, {"prompt_sha256", p->sha256},
                       {"text_sha256", p->text_sha256}, {"text_chars", p->text.size()}};
    return Status::Ok();
  }

  Result<Rep> Once(RuntimeSession& session) override {
    const double t_s = Seconds();
    auto g = session.Generate(text_, b_.decode_tokens);
    if (!g) return g.error();
    if (g->generated_tokens != b_.decode_tokens || g->token_ms.empty()) {
      return MakeError(fmt::format("runtime produced {} tokens, expected {}", g->generated_tokens,
                                   b_.decode_tokens),
                       "validate");
    }
    Rep rep;
    rep.started_at = NowRfc3339();
    const double first = g->token_ms.front(), last = g->token_ms.back();
    rep.values = {{"end_to_end_latency", g->end_ms}, {"ttft", first}};
    if (b_.decode_tokens > 1) {
      rep.values["decode_throughput"] = (b_.decode_tokens - 1) / ((last - first) / 1e3);
    }
    const uint64_t peak = session.PeakHostBytes().value_or(0);
    rep.extra = {{"t_s", t_s}, {"peak_host_bytes", peak}};
    rep.tokens_in = b_.prefill_tokens;
    rep.tokens_out = b_.decode_tokens;
    if (measuring_) {
      points_.push_back({t_s, rep.values.count("decode_throughput")
                                  ? rep.values["decode_throughput"] : 0.0,
                         peak});
    }
    return rep;
  }

  bool Done(const std::vector<Rep>& reps, const HarnessPolicy&, bool*) override {
    if (!measuring_) {
      measuring_ = true;
      t0_ = SteadyTime::now();
    }
    const double duration_s = 60.0 * b_.minutes;
    const double t = Seconds();
    if (t >= next_report_ && c_.progress) {
      c_.progress(fmt::format("soak {:.0f}/{:.0f} s: {} requests", t, duration_s, reps.size()));
      next_report_ += 10;
    }
    return t >= duration_s;  // a soak runs for its time, not to a CI target
  }

  std::string RepLine(const std::vector<Rep>&) const override { return ""; }

  void Finish(const std::vector<Rep>&, json& record, json& metrics) override {
    const SoakAnalysis a = AnalyzeSoak(points_);
    record["soak"] = ToJson(a);
    if (a.drift_flagged) {
      AddWarning(record, fmt::format("soak: decode throughput drifted {:+.1f}% from the first to "
                                     "the last tenth of the run (thermal decay?)",
                                     100 * a.drift));
    }
    if (a.growth_flagged) {
      AddWarning(record, fmt::format("soak: peak memory grew by {:.1f} MiB between the first and "
                                     "the last {:.0f} s (a leak?)",
                                     a.growth_bytes / 1048576.0, a.window_s));
    }
    metrics.erase("decode_roofline_efficiency");  // a soak reports drift, not efficiency
  }

 private:
  double Seconds() const {
    return measuring_ ? std::chrono::duration<double>(SteadyTime::now() - t0_).count() : 0.0;
  }

  const WorkloadContext& c_;
  BenchmarkSpec b_;
  std::string text_;
  bool measuring_ = false;  // warm-ups are over and the clock runs
  SteadyTime::time_point t0_;
  double next_report_ = 10;
  std::vector<SoakPoint> points_;
};

}  // namespace

std::unique_ptr<Workload> MakeSoakWorkload(const WorkloadContext& context) {
  return std::make_unique<SoakWorkload>(context);
}

}  // namespace pipette
