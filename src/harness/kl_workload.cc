// kl_divergence_<ctx> (DESIGN.md 4.1): the model's and its higher-precision reference's
// next-token distributions over one ctx-token window of the fixed text, compared position by
// position (pipette/kl.h). One evaluation is exact (a rerun gives the same numbers), so the cell
// has one repetition and no warm-up; the reference runs in its own session of the same runtime.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/ids.h"
#include "harness/prompt.h"
#include "harness/record.h"
#include "harness/workload.h"
#include "pipette/kl.h"
#include "pipette/stats.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads a log-probability file written by the driver's `logprobs` command row by row.
class LogProbReader {
 public:
  static Result<std::unique_ptr<LogProbReader>> Open(const std::string& path) {
    std::unique_ptr<LogProbReader> r(new LogProbReader);
    r->f_ = std::fopen(path.c_str(), "rb");
    char magic[4];
    uint32_t header[2];
    if (!r->f_ || std::fread(magic, 1, 4, r->f_) != 4 || std::memcmp(magic, "PPLP", 4) != 0 ||
        std::fread(header, 4, 2, r->f_) != 2) {
      return MakeError("cannot read log-probabilities from " + path, "kl_divergence");
    }
    r->positions_ = header[0];
    r->row_.resize(header[1]);
    return r;
  }
  ~LogProbReader() {
    if (f_) std::fclose(f_);
  }
  uint32_t positions() const { return positions_; }
  size_t vocab() const { return row_.size(); }
  // The next row, or nullptr at a short read.
  const std::vector<float>* Next() {
    return std::fread(row_.data(), sizeof(float), row_.size(), f_) == row_.size() ? &row_ : nullptr;
  }

 private:
  LogProbReader() = default;
  std::FILE* f_ = nullptr;
  uint32_t positions_ = 0;
  std::vector<float> row_;
};

class KlWorkload : public Workload {
 public:
  explicit KlWorkload(const WorkloadContext& c) : c_(c) {
    dir_ = fs::temp_directory_path() / ("pipette-kl-" + NewUuidV7());
  }
  ~KlWorkload() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  bool Gated() const override { return false; }
  int WarmupRuns(const HarnessPolicy&) const override { return 0; }

  // The reference first, in its own session that ends before the model loads: two models are
  // never resident at once.
  Status BeforeStart(json& record) override {
    fs::create_directories(dir_);
    c_.progress("evaluating the reference " + c_.spec.reference_model_path);
    const std::string ref_log = ReferenceLogPath();
    if (!c_.spec.log_path.empty()) record["logs"]["reference_runtime_log_path"] = ref_log;
    auto ref = c_.start_session(c_.spec.reference_model_path, ref_log);
    if (!ref) return ref.error().Wrap("reference model");
    Tokenizer tokenize = [&ref](const std::string& text) { return (*ref)->Tokenize(text); };
    auto prompt = BuildTokenPrompt(tokenize, c_.spec.benchmark.prefill_tokens);
    if (!prompt) return prompt.error().Wrap("reference model");
    ref_prompt_sha256_ = prompt->sha256;
    if (auto s = (*ref)->WriteLogProbs(prompt->tokens, RefFile()); !s) {
      return s.error().Wrap("reference model");
    }
    (*ref)->Stop();
    c_.progress("evaluating " + c_.spec.model_path);
    return Status::Ok();
  }

  Status Prepare(RuntimeSession& session, json& record) override {
    Tokenizer tokenize = [&session](const std::string& text) { return session.Tokenize(text); };
    auto prompt = BuildTokenPrompt(tokenize, c_.spec.benchmark.prefill_tokens);
    if (!prompt) return prompt.error();
    if (prompt->sha256 != ref_prompt_sha256_) {
      return MakeError("the model and its reference tokenize the text differently; they must "
                       "share one tokenizer", "input");
    }
    tokens_ = prompt->tokens;
    record["input"]["prompt_tokens"] = prompt->tokens.size();
    record["input"]["prompt_sha256"] = prompt->sha256;
    record["input"]["text_sha256"] = prompt->text_sha256;
    return Status::Ok();
  }

  Result<Rep> Once(RuntimeSession& session) override {
    if (auto s = session.WriteLogProbs(tokens_, ModelFile()); !s) return s.error();
    auto acc = Compare();
    if (!acc) return acc.error();
    acc_ = std::move(*acc);
    Rep rep;
    rep.started_at = NowRfc3339();
    rep.tokens_in = static_cast<int>(tokens_.size());
    kl_ = Summarize(acc_.kl, true);
    rep.values = {{"kl_divergence", kl_.mean},
                  {"top1_agreement", acc_.Top1Agreement()},
                  {"perplexity", acc_.Perplexity()},
                  {"reference_perplexity", acc_.RefPerplexity()}};
    return rep;
  }

  bool Done(const std::vector<Rep>& reps, const HarnessPolicy&, bool*) override {
    return !reps.empty();
  }
  std::string RepLine(const std::vector<Rep>&) const override { return ""; }

  void Finish(const std::vector<Rep>&, json& record, json& metrics) override {
    metrics.erase("kl_divergence");
    metrics["kl_divergence"] = ToJson(kl_, "nats");
    // Top-1 agreement is a proportion over the positions: n is their count and the interval the
    // Wilson score interval, so a quality limit is judged with its uncertainty like any other.
    const auto positions = static_cast<int64_t>(acc_.kl.size());
    const Interval agree = WilsonInterval(acc_.top1_agree, positions);
    metrics["top1_agreement"]["n"] = positions;
    metrics["top1_agreement"]["ci95_low"] = agree.low;
    metrics["top1_agreement"]["ci95_high"] = agree.high;
    // The median KL over the text's positions has an interval like any median, judged against
    // the target as recorded fact; the result is never flagged noisy for it (deterministic: a
    // rerun gives the same numbers; analysis/noise.h).
    record["harness"]["ci_reached"] = CiWithinTarget(kl_, c_.spec.policy.ci_target);
  }

 private:
  std::string RefFile() const { return (dir_ / "reference.lp").string(); }
  std::string ModelFile() const { return (dir_ / "model.lp").string(); }
  // The reference's runtime log: a sibling "<stem>.reference.log" of the cell's log, or a
  // temporary file when no log was asked for.
  std::string ReferenceLogPath() const {
    if (c_.spec.log_path.empty()) return (dir_ / "reference.log").string();
    const fs::path p(c_.spec.log_path);
    return (p.parent_path() / (p.stem().string() + ".reference.log")).string();
  }

  Result<KlAccumulator> Compare() {
    auto ref = LogProbReader::Open(RefFile());
    if (!ref) return ref.error();
    auto q = LogProbReader::Open(ModelFile());
    if (!q) return q.error();
    if ((*ref)->positions() != tokens_.size() || (*q)->positions() != tokens_.size() ||
        (*ref)->vocab() != (*q)->vocab()) {
      return MakeError("the two models' log-probabilities have different shapes", "kl_divergence");
    }
    KlAccumulator acc;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const std::vector<float>* p = (*ref)->Next();
      const std::vector<float>* lq = (*q)->Next();
      if (!p || !lq) return MakeError("log-probability file ended early", "kl_divergence");
      acc.Add(*p, *lq, i + 1 < tokens_.size() ? tokens_[i + 1] : -1);
    }
    return acc;
  }

  const WorkloadContext& c_;
  fs::path dir_;
  std::string ref_prompt_sha256_;
  std::vector<int32_t> tokens_;
  KlAccumulator acc_;
  Summary kl_;
};

}  // namespace

std::unique_ptr<Workload> MakeKlWorkload(const WorkloadContext& context) {
  return std::make_unique<KlWorkload>(context);
}

}  // namespace pipette
