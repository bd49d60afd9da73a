#include "harness/kl_runner.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/ids.h"
#include "harness/prompt.h"
#include "harness/record.h"
#include "pipette/kl.h"
#include "pipette/stats.h"
#include "runtimes/llamacpp/driver_client.h"

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

class KlRun {
 public:
  KlRun(const CellSpec& spec, const CellHooks& hooks, json record)
      : spec_(spec), hooks_(hooks), record_(std::move(record)) {
    dir_ = fs::temp_directory_path() / ("pipette-kl-" + record_["result_id"].get<std::string>());
  }
  ~KlRun() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  json Run();

 private:
  void Progress(const std::string& line) {
    if (hooks_.progress) hooks_.progress(line);
  }
  // Loads `model` in a fresh runtime, builds the ctx-token prompt with its tokenizer and writes
  // its log-probabilities to `out`. Returns the prompt.
  Result<TokenPrompt> Evaluate(const std::string& model, const std::string& out, bool record_runtime);
  Result<KlAccumulator> Compare(const std::string& ref_file, const std::string& q_file,
                                const std::vector<int32_t>& tokens);
  json Fail(const Error& e);
  // The runtime log of one evaluation: the cell's log (spec.log_path) for the model, a sibling
  // "<stem>.reference.log" for the reference; temporary files in dir_ when no log was asked for.
  std::string LogPath(bool reference) const;
  // logs.runtime_log_path and logs.reference_runtime_log_path, when a log was asked for.
  void RecordLogPaths();

  const CellSpec& spec_;
  const CellHooks& hooks_;
  json record_;
  fs::path dir_;
  double load_ms_ = 0;
};

Result<TokenPrompt> KlRun::Evaluate(const std::string& model, const std::string& out,
                                    bool record_runtime) {
  const std::string driver = spec_.driver_path.empty() ? DefaultDriverPath() : spec_.driver_path;
  const std::string log = LogPath(!record_runtime);
  auto loaded = StartAndLoad(driver, log, std::chrono::seconds(spec_.policy.request_timeout_s),
                             model, record_["runtime"]["settings"], hooks_.on_driver_started);
  if (!loaded) {
    record_["logs"]["runtime_stderr_tail"] = ReadFileTail(log);
    return loaded.error();
  }
  if (record_runtime) {
    RecordRuntime(loaded->load_reply, record_);
    load_ms_ = loaded->load_ms;
  }
  LlamaCppDriver& d = *loaded->driver;
  Tokenizer tokenize = [&d](const std::string& text) { return d.Tokenize(text); };
  auto prompt = BuildTokenPrompt(tokenize, spec_.benchmark.prefill_tokens);
  if (!prompt) return prompt.error();
  auto r = d.Call({{"cmd", "logprobs"}, {"tokens", prompt->tokens}, {"path", out}}, "logprobs");
  if (record_runtime) record_["logs"]["runtime_stderr_tail"] = d.StderrTail();
  if (!r) return r.error();
  d.Quit();
  return prompt;
}

Result<KlAccumulator> KlRun::Compare(const std::string& ref_file, const std::string& q_file,
                                     const std::vector<int32_t>& tokens) {
  auto ref = LogProbReader::Open(ref_file);
  if (!ref) return ref.error();
  auto q = LogProbReader::Open(q_file);
  if (!q) return q.error();
  if ((*ref)->positions() != tokens.size() || (*q)->positions() != tokens.size() ||
      (*ref)->vocab() != (*q)->vocab()) {
    return MakeError("the two models' log-probabilities have different shapes", "kl_divergence");
  }
  KlAccumulator acc;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::vector<float>* p = (*ref)->Next();
    const std::vector<float>* lq = (*q)->Next();
    if (!p || !lq) return MakeError("log-probability file ended early", "kl_divergence");
    acc.Add(*p, *lq, i + 1 < tokens.size() ? tokens[i + 1] : -1);
  }
  return acc;
}

std::string KlRun::LogPath(bool reference) const {
  if (spec_.log_path.empty()) return (dir_ / (reference ? "reference.log" : "model.log")).string();
  if (!reference) return spec_.log_path;
  const fs::path p(spec_.log_path);
  return (p.parent_path() / (p.stem().string() + ".reference.log")).string();
}

void KlRun::RecordLogPaths() {
  if (spec_.log_path.empty()) return;
  record_["logs"]["runtime_log_path"] = LogPath(false);
  record_["logs"]["reference_runtime_log_path"] = LogPath(true);
}

json KlRun::Fail(const Error& e) {
  RecordLogPaths();
  MarkFailed(record_, e, "kl_divergence");
  return record_;
}

json KlRun::Run() {
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(dir_);
  const std::string ref_file = (dir_ / "reference.lp").string();
  const std::string q_file = (dir_ / "model.lp").string();
  Progress("evaluating the reference " + spec_.reference_model_path);
  auto ref_prompt = Evaluate(spec_.reference_model_path, ref_file, false);
  if (!ref_prompt) return Fail(ref_prompt.error().Wrap("reference model"));
  Progress("evaluating " + spec_.model_path);
  auto prompt = Evaluate(spec_.model_path, q_file, true);
  if (!prompt) return Fail(prompt.error());
  if (prompt->sha256 != ref_prompt->sha256) {
    return Fail(MakeError("the model and --reference tokenize the text differently; they must "
                          "share one tokenizer", "input"));
  }
  record_["input"]["prompt_tokens"] = prompt->tokens.size();
  record_["input"]["prompt_sha256"] = prompt->sha256;
  record_["input"]["text_sha256"] = prompt->text_sha256;
  auto acc = Compare(ref_file, q_file, prompt->tokens);
  if (!acc) return Fail(acc.error());

  const Summary kl = Summarize(acc->kl, true);
  json metrics = {{"kl_divergence", ToJson(kl, "nats")}};
  const std::map<std::string, double> single = {{"top1_agreement", acc->Top1Agreement()},
                                                {"perplexity", acc->Perplexity()},
                                                {"reference_perplexity", acc->RefPerplexity()}};
  json sample = {{"rep", 1}, {"started_at", record_["started_at"]},
                 {"tokens_in", prompt->tokens.size()}, {"tokens_out", 0},
                 {"kl_divergence", kl.mean}, {"thermal_before", json::array()},
                 {"thermal_after", json::array()}};
  for (const auto& [name, v] : single) {
    metrics[name] = ToJson(Summarize(std::vector<double>{v}), MetricUnit(name));
    sample[name] = v;
  }
  // Top-1 agreement is a proportion over the positions: n is their count and the interval the
  // Wilson score interval, so a quality limit is judged with its uncertainty like any other.
  const auto positions = static_cast<int64_t>(acc->kl.size());
  const Interval agree = WilsonInterval(acc->top1_agree, positions);
  metrics["top1_agreement"]["n"] = positions;
  metrics["top1_agreement"]["ci95_low"] = agree.low;
  metrics["top1_agreement"]["ci95_high"] = agree.high;
  metrics["load_time"] = ToJson(Summarize(std::vector<double>{load_ms_}), "ms");
  record_["metrics"] = metrics;
  record_["samples"] = json::array({sample});
  record_["status"] = "ok";
  record_["harness"]["reps"] = 1;
  // One evaluation is exact (a rerun gives the same numbers), but the median KL over the
  // text's positions has an interval like any median: too wide a one flags the result noisy, so
  // that a longer context is tried (analysis/noise.h).
  record_["harness"]["ci_reached"] = CiWithinTarget(kl, spec_.policy.ci_target);
  record_["harness"]["timing"] = {
      {"cell_wall_ms",
       std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()}};
  record_["finished_at"] = NowRfc3339();
  record_["config_id"] = ConfigId(record_);
  RecordLogPaths();
  return record_;
}

}  // namespace

json RunKlDivergence(const CellSpec& spec, const CellHooks& hooks, json record) {
  KlRun run(spec, hooks, std::move(record));
  return run.Run();
}

}  // namespace pipette
