// eval_<name>_<version> (DESIGN.md 7, ../shared/docs/evals.md): every selected sample of the data
// set answered `repeats` times through the runtime (the model's chat template, seeded sampling),
// each attempt stopped by end of generation, max_tokens or the doom-loop detector, scored by the
// model-blind scorer and checkpointed as soon as it ends. One attempt is one repetition of the
// cell loop; there is no warm-up and no readiness gate (quality does not depend on the device's
// state; the per-attempt timings are recorded for what they are). An attempt whose runtime dies
// is recorded as failed, never retried, and the loop starts a new session for the next one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/sha256.h"
#include "harness/eval_checkpoint.h"
#include "harness/record.h"
#include "harness/workload.h"
#include "pipette/evals.h"
#include "pipette/stats.h"
#include "platform/interrupt.h"

namespace pipette {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kPublishedVersion = "2026.06.1";
// The half-width of the accuracy's 95% interval an eval aims for, percentage points: about what
// 400 questions give at 50% accuracy, enough to tell apart quantizations a few points apart.
constexpr double kAccuracyCiTargetPp = 5.0;

// Invalid UTF-8 (a token boundary inside a character, a model's garbage) as U+FFFD, so that the
// text stored, shown and scored is one and the same.
std::string ValidUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (ok && len == 2) ok = c >= 0xC2;
    if (ok && len == 3) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = c <= 0xF4 && !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

Result<EvalDataset> DatasetOf(const BenchmarkSpec& b) {
  const auto d = EvalDatasetNamed(b.eval_name);
  std::string known;
  for (const EvalDatasetInfo& i : EvalDatasets()) known += (known.empty() ? "" : ", ") + i.benchmark_id;
  if (!d || b.eval_version != kPublishedVersion) {
    return MakeError("unknown eval " + b.id + "; the evals: " + known);
  }
  return *d;
}

json Proportion(int64_t hits, int64_t n) {
  const double p = n > 0 ? static_cast<double>(hits) / static_cast<double>(n) : 0.0;
  const Interval ci = WilsonInterval(hits, std::max<int64_t>(n, 1));
  return {{"unit", "ratio"}, {"n", n}, {"count", hits}, {"median", p}, {"mean", p},
          {"ci95_low", ci.low}, {"ci95_high", ci.high}};
}

class EvalWorkload : public Workload {
 public:
  explicit EvalWorkload(const WorkloadContext& c) : c_(c), o_(c.spec.eval) {}

  bool Gated() const override { return false; }
  int WarmupRuns(const HarnessPolicy&) const override { return 0; }

  Status BeforeStart(json& record) override {
    auto dataset = DatasetOf(c_.spec.benchmark);
    if (!dataset) return dataset.error();
    dataset_ = *dataset;
    auto data = LoadEvalDataSet(dataset_, o_.data_dir);
    if (!data) return data.error();
    data_ = std::move(*data);
    for (const std::string& w : data_.warnings) AddWarning(record, w);
    auto scorer = EvalScorer::Load(dataset_, o_.data_dir);
    if (!scorer) return scorer.error();
    scorer_.emplace(std::move(*scorer));
    const EvalDatasetInfo& info = InfoOf(dataset_);
    json ids = json::array();
    for (const EvalSample* s : SelectEvalSamples(data_, o_.limit, o_.seed)) {
      ids.push_back(s->id);
      for (int k = 0; k < o_.repeats; ++k) {
        attempts_.push_back({s, k, s->id + "#" + std::to_string(k), AttemptSeed(o_.seed, s->id, k)});
      }
    }
    // Where llama.cpp's CPU arithmetic for a batch of sequences is known to differ from a lone
    // sequence's (docs/driver-protocol.md), an attempt may differ from its text at parallel 1 at
    // a near tie between two tokens: the record says so. Float weights: several rows go through
    // llamafile's tinyBLAS, which sums a row in another order than the one-row dot product.
    // Flash attention with several threads: a lone sequence's attention over 512 cells or more
    // is split across the threads and the parts summed after, a batch's is not.
    if (o_.parallel > 1) {
      const std::string quant = record["model"].value("quant", "");
      if (quant == "F32" || quant == "F16" || quant == "BF16") {
        AddWarning(record, fmt::format("eval parallel {} with {} weights: llama.cpp rounds batched "
                                       "float products differently from single ones, so an "
                                       "attempt may differ from its text at parallel 1 where two "
                                       "tokens nearly tie",
                                       o_.parallel, quant));
      }
      const json& settings = record["runtime"]["settings"];
      if (settings.value("threads", 1) > 1 && settings.value("flash_attn", "off") != "off") {
        AddWarning(record, fmt::format("eval parallel {} with {} threads and flash_attn {}: "
                                       "llama.cpp splits a lone sequence's attention across "
                                       "threads but not a batch's, so an attempt may differ from "
                                       "its text at parallel 1 where two tokens nearly tie; "
                                       "flash_attn off (or threads 1) keeps them equal",
                                       o_.parallel, settings.value("threads", 1),
                                       settings.value("flash_attn", "")));
      }
    }
    // No warm-up, no readiness gate and no interval target: each attempt runs once.
    record["harness"]["warmup_runs"] = 0;
    record["harness"].erase("min_reps");
    record["harness"].erase("max_reps");
    json& e = record["eval"];
    e = {{"dataset", info.name},
         {"title", info.title},
         {"file", data_.path},
         {"fingerprint", data_.fingerprint},
         {"published_fingerprint", info.published_fingerprint},
         {"samples_in_dataset", data_.samples.size()},
         {"limit", o_.limit},
         {"selection", o_.limit > 0 ? "the samples whose SHA-256(\"<seed>:<id>\") sort first"
                                    : "every sample"},
         {"sample_ids", ids},
         {"repeats", o_.repeats},
         {"temperature", o_.temperature},
         {"seed", o_.seed},
         {"attempt_seed", "first 4 bytes of SHA-256(\"<seed>:<id>#<attempt>\")"},
         {"max_tokens", o_.max_tokens},
         {"parallel", o_.parallel},
         {"doom_loop", ToJson(o_.doom_loop)},
         {"scorer", scorer_->RuleSet()}};
    if (const auto m = data_.MatchesPublished()) e["fingerprint_matches_published"] = *m;
    // The checkpoint belongs to this configuration and these options: any change starts afresh.
    json key = {{"config_id", record["config_id"]}, {"eval", e}};
    if (!o_.store.empty()) key["store"] = o_.store;
    auto checkpoint = EvalCheckpoint::Open(o_.checkpoint_dir, Sha256Hex(key.dump()));
    if (!checkpoint) return checkpoint.error();
    checkpoint_ = std::move(*checkpoint);
    e["checkpoint"] = checkpoint_->path();
    for (const Attempt& a : attempts_) {
      if (checkpoint_->done().count(a.key)) ++resumed_;
    }
    e["resumed_attempts"] = resumed_;
    if (checkpoint_->torn_lines() > 0) {
      AddWarning(record, "the checkpoint's last line was cut short (a crash while writing it); "
                         "that attempt runs again");
    }
    if (resumed_ > 0) {
      c_.progress(fmt::format("resuming: {} of {} attempts done ({})", resumed_, attempts_.size(),
                              checkpoint_->path()));
    }
    Skip();
    return Status::Ok();
  }

  Status Prepare(RuntimeSession&, json&) override { return Status::Ok(); }

  Result<Rep> Once(RuntimeSession& session) override {
    const auto t0 = Clock::now();
    auto rep = o_.parallel > 1 ? OnceParallel(session) : OnceAlone(session);
    run_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  bool Done(const std::vector<Rep>&, const HarnessPolicy&, bool* ci_reached) override {
    *ci_reached = true;  // no interval target: every attempt runs once
    return next_ >= attempts_.size() && ready_.empty() &&
           std::none_of(slots_.begin(), slots_.end(), [](const auto& f) { return f.has_value(); });
  }

  std::string RepLine(const std::vector<Rep>&) const override {
    int done = 0, correct = 0;
    // Attempts that ended together are told one line each: those not yet returned wait.
    std::set<std::string> waiting;
    for (const auto& [key, rep] : ready_) waiting.insert(key);
    for (const Attempt& a : attempts_) {
      const auto it = checkpoint_->done().find(a.key);
      if (it == checkpoint_->done().end() || waiting.count(a.key)) continue;
      ++done;
      correct += it->second.value("correct", false) ? 1 : 0;
    }
    const json& last = checkpoint_->done().at(last_key_);
    const size_t left = attempts_.size() - static_cast<size_t>(done);
    const double eta_s = run_here_ > 0 ? run_s_ / run_here_ * static_cast<double>(left) : 0;
    return fmt::format("attempt {}/{} {}: {}{}, {} | accuracy so far {}/{} ({:.1f}%) | ~{:.0f} s left",
                       done, attempts_.size(), last_key_, last.value("stop", ""),
                       last.contains("output_tokens")
                           ? fmt::format(" after {} tokens", last["output_tokens"].get<int>())
                           : std::string(),
                       last.value("correct", false) ? "correct" : "wrong", correct, done,
                       done > 0 ? 100.0 * correct / done : 0.0, eta_s);
  }

  void Finish(const std::vector<Rep>&, json& record, json& metrics) override {
    json completions = json::array();
    json samples = json::array();
    std::map<std::string, std::pair<int, int>> per_question;  // (correct, attempts)
    std::vector<std::string> order;
    int correct = 0, unparsed = 0, truncated = 0, doom = 0, failed = 0;
    std::vector<double> out_tokens, ttft, tps;
    std::string first_failure;
    for (const Attempt& a : attempts_) {
      const auto it = checkpoint_->done().find(a.key);
      if (it == checkpoint_->done().end()) continue;  // cannot happen after Done
      const json& att = it->second;
      const bool ok = att.value("correct", false);
      const std::string stop = att.value("stop", "");
      if (!per_question.count(a.sample->id)) order.push_back(a.sample->id);
      auto& q = per_question[a.sample->id];
      q.first += ok ? 1 : 0;
      q.second += 1;
      correct += ok ? 1 : 0;
      if (stop != "failure" && !att.value("parsed", false)) ++unparsed;
      truncated += stop == "truncated";
      doom += stop == "doom_loop";
      if (stop == "failure") {
        ++failed;
        if (first_failure.empty()) first_failure = a.key + ": " + att.value("error", "");
      }
      json s = {{"rep", samples.size() + 1}, {"sample", a.key}, {"correct", ok ? 1 : 0},
                {"started_at", att.value("started_at", "")}};
      for (const char* m : {"output_tokens", "prompt_tokens"}) {
        if (att.contains(m)) s[m] = att[m];
      }
      if (att.contains("time_to_first_token_ms")) {
        s["time_to_first_token"] = att["time_to_first_token_ms"];
        ttft.push_back(att["time_to_first_token_ms"]);
      }
      if (att.contains("generation_throughput")) {
        s["generation_throughput"] = att["generation_throughput"];
        tps.push_back(att["generation_throughput"]);
      }
      if (att.contains("output_tokens")) out_tokens.push_back(att["output_tokens"]);
      samples.push_back(std::move(s));
      completions.push_back(att);
    }
    const int64_t n = static_cast<int64_t>(completions.size());
    std::vector<std::pair<int, int>> clusters;
    for (const std::string& id : order) clusters.push_back(per_question[id]);
    json m = json::object();
    // pass@1 over samples x repeats; a failed attempt counts as wrong. The interval resamples
    // questions (their attempts together), as evals.md 4 asks.
    m["accuracy"] = Proportion(correct, n);
    Interval ci = ClusterBootstrapProportionCi(clusters);
    std::string method = "cluster bootstrap over questions";
    // Every attempt right or every one wrong: the bootstrap has nothing to resample and says
    // [0, 0], which no one should read as certainty. The Wilson interval over the questions (as
    // if each were one attempt: the conservative count) says how far 0/N can be from 0.
    if (ci.low == ci.high && !clusters.empty()) {
      const int64_t q = static_cast<int64_t>(clusters.size());
      if (correct == 0 || correct == n) {
        ci = WilsonInterval(correct == 0 ? 0 : q, q);
        method = std::string("Wilson over questions (every attempt ") +
                 (correct == 0 ? "wrong)" : "right)");
      } else {  // one question: its attempts are all there is to go on
        ci = WilsonInterval(correct, n);
        method = "Wilson over the attempts of one question";
      }
    }
    m["accuracy"]["ci95_low"] = ci.low;
    m["accuracy"]["ci95_high"] = ci.high;
    m["accuracy"]["questions"] = clusters.size();
    m["accuracy"]["interval"] = method;
    // An accuracy is as honest as a speed: wider than its target, the result is noisy (the
    // advice says how many more questions or repeats would narrow it, analysis/noise.h).
    record["eval"]["accuracy_ci_target_pp"] = kAccuracyCiTargetPp;
    record["harness"]["ci_reached"] = 100 * (ci.high - ci.low) / 2 <= kAccuracyCiTargetPp;
    m["unparsed_rate"] = Proportion(unparsed, n);
    m["truncated_rate"] = Proportion(truncated, n);
    m["doom_loop_rate"] = Proportion(doom, n);
    m["failure_rate"] = Proportion(failed, n);
    if (!out_tokens.empty()) m["output_tokens"] = ToJson(Summarize(out_tokens), "tokens");
    if (!ttft.empty()) m["time_to_first_token"] = ToJson(Summarize(ttft), "ms");
    if (!tps.empty()) m["generation_throughput"] = ToJson(Summarize(tps), "tokens/s");
    if (metrics.contains("load_time")) m["load_time"] = metrics["load_time"];
    metrics = m;
    record["samples"] = samples;
    record["completions"] = completions;
    record["eval"]["attempts"] = n;
    record["eval"]["attempts_run_here"] = run_here_;
    if (!sampling_.is_null()) record["eval"]["sampling"] = sampling_;
    for (const json& att : completions) {
      if (att.contains("prompt_format")) {
        record["eval"]["prompt_format"] = att["prompt_format"];
        if (att.contains("chat_template_sha256")) {
          record["eval"]["chat_template_sha256"] = att["chat_template_sha256"];
        }
        if (att.contains("template_engine")) {
          record["eval"]["template_engine"] = att["template_engine"];
        }
        break;
      }
    }
    if (failed > 0) {
      AddWarning(record, fmt::format("{} of {} attempts failed (counted as wrong); the first: {}",
                                     failed, n, first_failure));
    }
  }

 private:
  struct Attempt {
    const EvalSample* sample;
    int attempt;
    std::string key;
    uint32_t seed;
  };
  // An attempt running in a slot of the session (parallel > 1).
  struct InFlight {
    size_t attempt;  // index into attempts_
    json att;        // its record so far (key, id, seed, started_at)
    std::optional<std::string> detector;  // the doom-loop detector that stopped it
  };

  // Moves next_ past attempts the checkpoint holds.
  void Skip() {
    while (next_ < attempts_.size() && checkpoint_->done().count(attempts_[next_].key)) ++next_;
  }

  CompletionRequest RequestOf(const Attempt& a) const {
    return {a.sample->prompt, o_.max_tokens, o_.temperature, a.seed};
  }
  static json Started(const Attempt& a) {
    return {{"key", a.key}, {"id", a.sample->id}, {"attempt", a.attempt}, {"seed", a.seed},
            {"started_at", NowRfc3339()}};
  }

  // One attempt at a time: Complete.
  Result<Rep> OnceAlone(RuntimeSession& session) {
    const Attempt& a = attempts_[next_];
    std::optional<std::string> detector;
    const auto keep_going = [&](const std::string& text) {
      detector = DetectDoomLoop(text, o_.doom_loop);
      return !detector.has_value();
    };
    json att = Started(a);
    auto c = session.Complete(RequestOf(a), keep_going);
    // Not checkpointed: it runs again on resume. The stage is the cell's, as for any interrupted
    // cell, not the engine call's the signal happened to cut ("continue").
    if (!c && Interrupted()) return MakeError("interrupted by the user", "eval");
    // A template the engine cannot apply fails every attempt alike: the cell fails, saying so.
    if (!c && c.error().stage == "template") return c.error();
    auto rep = Conclude(a, std::move(att), c, detector);
    if (!rep) return rep.error();
    ++next_;
    Skip();
    last_key_ = a.key;
    return rep;
  }

  // parallel > 1: the attempts in order fill the session's slots, which decode together; an
  // attempt is scored and checkpointed the moment it ends, and each call returns one of them
  // (several may end in one step: the others wait in ready_, already checkpointed). A slot
  // freed is refilled before the next step. Each attempt's text is the one OnceAlone gets
  // (RuntimeSession::StartCompletion); only its timings say it shared the batch.
  Result<Rep> OnceParallel(RuntimeSession& session) {
    if (slots_.empty()) slots_.resize(static_cast<size_t>(o_.parallel));
    while (ready_.empty()) {
      for (size_t k = 0; k < slots_.size() && next_ < attempts_.size();) {
        if (slots_[k]) {
          ++k;
          continue;
        }
        const size_t i = next_++;
        Skip();
        const Attempt& a = attempts_[i];
        json att = Started(a);
        auto st = session.StartCompletion(static_cast<int>(k), RequestOf(a));
        if (st) {
          slots_[k] = InFlight{i, std::move(att), std::nullopt};
          ++k;
          continue;
        }
        if (Interrupted()) return MakeError("interrupted by the user", "eval");
        if (st.error().stage == "template") return st.error();
        // A prompt too long for the context fails alone, and the slot takes the next attempt.
        const Result<Completion> failed = st.error();
        auto rep = Conclude(a, std::move(att), failed, std::nullopt);
        if (!rep) return rep.error();
        ready_.emplace_back(a.key, std::move(*rep));
        if (st.error().stage != "context") {
          if (auto s = LoseInFlight(st.error(), ready_.size() - 1); !s) return s.error();
          break;
        }
      }
      if (!ready_.empty()) break;
      if (std::none_of(slots_.begin(), slots_.end(), [](const auto& f) { return f.has_value(); })) {
        return MakeError("no eval attempt is left to run", "eval");  // Done() said otherwise
      }
      const auto keep_going = [&](int slot, const std::string& text) {
        if (slot < 0 || static_cast<size_t>(slot) >= slots_.size() || !slots_[slot]) return true;
        auto detector = DetectDoomLoop(text, o_.doom_loop);
        if (!detector) return true;
        slots_[slot]->detector = std::move(detector);
        return false;
      };
      auto ended = session.AdvanceCompletions(keep_going);
      if (!ended) {
        if (Interrupted()) return MakeError("interrupted by the user", "eval");
        if (auto s = LoseInFlight(ended.error(), ready_.size()); !s) return s.error();
        break;
      }
      for (SlotCompletion& e : *ended) {
        if (e.slot < 0 || static_cast<size_t>(e.slot) >= slots_.size() || !slots_[e.slot]) {
          return MakeError(fmt::format("the runtime ended a completion in slot {}, which ran none",
                                       e.slot),
                           "eval");
        }
        InFlight f = std::move(*slots_[e.slot]);
        slots_[e.slot].reset();
        const Attempt& a = attempts_[f.attempt];
        auto rep = Conclude(a, std::move(f.att), std::move(e.completion), f.detector);
        if (!rep) return rep.error();
        ready_.emplace_back(a.key, std::move(*rep));
      }
    }
    auto [key, rep] = std::move(ready_.front());
    ready_.pop_front();
    last_key_ = key;
    return rep;
  }

  // The engine failed while attempts ran together: each of them is lost and recorded as failed
  // with the engine's error (as one attempt is when it runs alone; which of them brought the
  // engine down cannot be told). Of this failure's attempts, from ready_[first] on, the first
  // one returned restarts the session, the others do not.
  Status LoseInFlight(const Error& error, size_t first) {
    for (auto& f : slots_) {
      if (!f) continue;
      const Attempt& a = attempts_[f->attempt];
      json att = std::move(f->att);
      f.reset();
      auto rep = Conclude(a, std::move(att), Result<Completion>(error), std::nullopt);
      if (!rep) return rep.error();
      ready_.emplace_back(a.key, std::move(*rep));
    }
    for (size_t i = first; i < ready_.size(); ++i) ready_[i].second.restart_session = i == first;
    return Status::Ok();
  }

  // Records attempt `a` from the runtime's answer `c`: scored, checkpointed, counted. A failure
  // is recorded as one (stop "failure"); restart_session unless the prompt merely did not fit.
  Result<Rep> Conclude(const Attempt& a, json att, const Result<Completion>& c,
                       const std::optional<std::string>& detector) {
    Rep rep;
    rep.started_at = att["started_at"];
    std::string text;
    if (!c) {
      att["stop"] = "failure";
      att["error"] = c.error().message;
      att["error_stage"] = c.error().stage;
      rep.restart_session = c.error().stage != "context";
    } else {
      text = ValidUtf8(c->text);
      att["stop"] = c->stop == "stopped" ? "doom_loop" : c->stop;
      if (detector) att["doom_loop_detector"] = *detector;
      att["prompt_tokens"] = c->prompt_tokens;
      att["output_tokens"] = c->output_tokens;
      att["time_to_first_token_ms"] = c->time_to_first_token_ms;
      att["total_ms"] = c->total_ms;
      if (c->output_tokens >= 2 && c->decode_ms > 0) {
        att["generation_throughput"] = (c->output_tokens - 1) / (c->decode_ms / 1000.0);
      }
      att["prompt_format"] = c->prompt_format;
      if (!c->chat_template.empty()) att["chat_template_sha256"] = Sha256Hex(c->chat_template);
      if (!c->template_engine.empty()) att["template_engine"] = c->template_engine;
      if (sampling_.is_null()) {
        sampling_ = c->sampling;
        sampling_.erase("seed");
      }
      rep.tokens_in = c->prompt_tokens;
      rep.tokens_out = c->output_tokens;
      if (c->output_tokens > 0) rep.values["output_tokens"] = c->output_tokens;
      if (c->time_to_first_token_ms > 0) rep.values["time_to_first_token"] = c->time_to_first_token_ms;
      if (att.contains("generation_throughput")) {
        rep.values["generation_throughput"] = att["generation_throughput"];
      }
    }
    att["completion"] = text;
    auto verdict = scorer_->Score(a.sample->gold, text);
    if (!verdict) return verdict.error();
    if (!verdict->loose.empty()) {
      att["strict"] = verdict->strict;
      att["loose"] = verdict->loose;
    }
    att["extracted"] = ValidUtf8(verdict->extracted);
    att["method"] = verdict->method;
    att["parsed"] = verdict->parsed;
    att["correct"] = verdict->correct;
    if (auto s = checkpoint_->Append(att); !s) return s.error();
    ++run_here_;
    return rep;
  }

  const WorkloadContext& c_;
  const EvalOptions& o_;
  EvalDataset dataset_ = EvalDataset::kMath500;
  EvalDataSet data_;
  std::optional<EvalScorer> scorer_;
  std::vector<Attempt> attempts_;
  std::unique_ptr<EvalCheckpoint> checkpoint_;
  size_t next_ = 0;  // the next attempt to start
  // parallel > 1: what runs in each slot of the session, and the attempts that ended (scored
  // and checkpointed) but are not yet returned by Once, with their keys.
  std::vector<std::optional<InFlight>> slots_;
  std::deque<std::pair<std::string, Rep>> ready_;
  int resumed_ = 0;
  int run_here_ = 0;
  double run_s_ = 0;
  std::string last_key_;
  json sampling_;
};

}  // namespace

std::unique_ptr<Workload> MakeEvalWorkload(const WorkloadContext& context) {
  return std::make_unique<EvalWorkload>(context);
}

Status CheckEvalCell(const CellSpec& spec) {
  auto dataset = DatasetOf(spec.benchmark);
  if (!dataset) return dataset.error();
  const EvalOptions& o = spec.eval;
  if (o.data_dir.empty()) {
    return MakeError(spec.benchmark.id + " reads its data set from the eval data directory: "
                     "give it, or set PIPETTE_EVALS_DIR (e.g. ../shared/data/evals)");
  }
  if (o.repeats < 1) return MakeError("eval repeats must be at least 1");
  if (o.max_tokens < 1) return MakeError("eval max_tokens must be at least 1");
  if (o.limit < 0) return MakeError("eval limit must be 0 (every sample) or more");
  if (o.parallel < 1 || o.parallel > kMaxEvalParallel) {
    return MakeError(fmt::format("eval parallel must be from 1 to {}, not {}", kMaxEvalParallel,
                                 o.parallel));
  }
  if (spec.runtime && o.parallel > 1) {
    const int most = spec.runtime->Capabilities().parallel_completions;
    if (o.parallel > most) {
      const std::string& name = spec.runtime->Identity().name;
      if (most <= 1) {
        return MakeError(fmt::format("runtime {} generates eval attempts one at a time, not {} in "
                                     "parallel: use parallel 1, or the llamacpp runtime",
                                     name, o.parallel));
      }
      return MakeError(fmt::format("runtime {} generates at most {} eval attempts in parallel, "
                                   "not {}",
                                   name, most, o.parallel));
    }
  }
  if (!(o.temperature >= 0 && o.temperature <= 10)) {
    return MakeError("eval temperature must be in [0, 10]");
  }
  if (o.checkpoint_dir.empty()) return MakeError("an eval cell needs a checkpoint folder");
  auto data = LoadEvalDataSet(*dataset, o.data_dir);
  if (!data) return data.error();
  // IFBench's model data is checked before any device time is spent.
  if (*dataset == EvalDataset::kIfBench) {
    auto scorer = EvalScorer::Load(*dataset, o.data_dir);
    if (!scorer) return scorer.error();
  }
  return Status::Ok();
}

}  // namespace pipette
