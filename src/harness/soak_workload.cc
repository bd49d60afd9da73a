// soak_<P>_<D>_<minutes> and soak_varied_<P>_<D>_<minutes> (DESIGN.md 4.1): end-to-end requests
// back to back for the given time, no readiness gate between them (the point is to keep the
// device busy). A plain soak repeats the one P/D request; a varied soak cycles through the fixed
// shapes of SoakShapes (the longest first), each shape's prompt built once up front. Each
// request's decode throughput, shape and the runtime's peak memory after it feed AnalyzeSoak,
// which flags thermal decay and leaks.
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
  explicit SoakWorkload(const WorkloadContext& c)
      : c_(c), b_(c.spec.benchmark), shapes_(SoakShapes(b_)) {}

  bool Gated() const override { return false; }

  // record.input describes the longest shape (the first) as for any e2e request; a varied soak
  // adds input.shapes, every shape's prompt and output lengths and hashes, by index.
  Status Prepare(RuntimeSession& session, json& record) override {
    Tokenizer tokenize = [&session](const std::string& text) { return session.Tokenize(text); };
    json shapes = json::array();
    for (const SoakShape& shape : shapes_) {
      auto p = BuildTextPrompt(tokenize, shape.prompt_tokens);
      if (!p) return p.error();
      texts_.push_back(p->text);
      shapes.push_back({{"prompt_tokens", p->tokens.size()}, {"decode_tokens", shape.decode_tokens},
                        {"prompt_sha256", p->sha256}, {"text_sha256", p->text_sha256},
                        {"text_chars", p->text.size()}});
    }
    json input = shapes.front();
    input.erase("decode_tokens");
    if (b_.varied) input["shapes"] = shapes;
    record["input"] = input;
    return Status::Ok();
  }

  // Warm-ups run the longest shape; measured requests cycle through the shapes from the first.
  Result<Rep> Once(RuntimeSession& session) override {
    const double t_s = Seconds();
    const int index = measuring_ ? static_cast<int>(points_.size() % shapes_.size()) : 0;
    const SoakShape& shape = shapes_[index];
    auto g = session.Generate(texts_[index], shape.decode_tokens);
    if (!g) return g.error();
    if (g->generated_tokens != shape.decode_tokens || g->token_ms.empty()) {
      return MakeError(fmt::format("runtime produced {} tokens, expected {}{}", g->generated_tokens,
                                   shape.decode_tokens, ShapeNote(index)),
                       "validate");
    }
    Rep rep;
    rep.started_at = NowRfc3339();
    const double first = g->token_ms.front(), last = g->token_ms.back();
    rep.values = {{"end_to_end_latency", g->end_ms}, {"ttft", first}};
    if (shape.decode_tokens > 1) {
      rep.values["decode_throughput"] = (shape.decode_tokens - 1) / ((last - first) / 1e3);
    }
    const uint64_t peak = session.PeakHostBytes().value_or(0);
    rep.extra = {{"t_s", t_s}, {"peak_host_bytes", peak}};
    if (b_.varied) rep.extra["shape"] = index;
    rep.tokens_in = shape.prompt_tokens;
    rep.tokens_out = shape.decode_tokens;
    if (measuring_) {
      points_.push_back({t_s, rep.values.count("decode_throughput")
                                  ? rep.values["decode_throughput"] : 0.0,
                         peak, index});
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

  // A varied soak's metrics pool every shape; record.soak judges each shape against its start.
  void Finish(const std::vector<Rep>&, json& record, json& metrics) override {
    const SoakAnalysis a = AnalyzeSoak(points_);
    json soak = ToJson(a);
    if (b_.varied) {
      json& shapes = soak["shapes"];
      for (size_t i = 0; i < shapes_.size(); ++i) {
        if (i == shapes.size()) shapes.push_back({{"requests", 0}});  // never reached
        shapes[i]["prompt_tokens"] = shapes_[i].prompt_tokens;
        shapes[i]["decode_tokens"] = shapes_[i].decode_tokens;
      }
    }
    record["soak"] = soak;
    if (a.drift_flagged) {
      AddWarning(record, fmt::format("soak: decode throughput drifted {:+.1f}% from the first to "
                                     "the last tenth of the run{} (thermal decay?)",
                                     100 * a.drift,
                                     b_.varied ? ", each shape against its own start" : ""));
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

  // " (shape 2: 64 prompt tokens, 4 generated)" for a varied soak, "" for a plain one.
  std::string ShapeNote(int index) const {
    if (!b_.varied) return "";
    return fmt::format(" (shape {}: {} prompt tokens, {} generated)", index,
                       shapes_[index].prompt_tokens, shapes_[index].decode_tokens);
  }

  const WorkloadContext& c_;
  BenchmarkSpec b_;
  std::vector<SoakShape> shapes_;  // SoakShapes(b_): one for a plain soak
  std::vector<std::string> texts_;  // each shape's prompt text, by index
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
