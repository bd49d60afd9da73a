#include "runtimes/llamacpp_stock/llama_bench.h"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "platform/cpu_affinity.h"
#include "platform/interrupt.h"
#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

Error StartError(std::string message) { return MakeError(std::move(message), "start"); }

bool IsGgmlTypeName(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The settings' ranges (before any syntax question).
Status CheckTest(const LlamaBenchTest& t) {
  const auto below = [](const char* name, int value, int min) {
    return StartError(
        fmt::format("llama-bench setting {} must be at least {}, not {}", name, min, value));
  };
  if (t.n_prompt < 0) return below("n_prompt", t.n_prompt, 0);
  if (t.n_gen < 0) return below("n_gen", t.n_gen, 0);
  if (t.n_depth < 0) return below("n_depth", t.n_depth, 0);
  if (static_cast<int64_t>(t.n_prompt) + t.n_gen < 1) {
    return StartError("a llama-bench test needs n_prompt or n_gen above 0 (both are 0)");
  }
  if (t.threads < 0) return below("threads", t.threads, 0);
  if (t.n_batch < 1) return below("n_batch", t.n_batch, 1);
  if (t.n_ubatch < 1) return below("n_ubatch", t.n_ubatch, 1);
  if (t.n_gpu_layers < -1) return below("n_gpu_layers", t.n_gpu_layers, -1);
  if (t.repetitions < 1) return below("repetitions", t.repetitions, 1);
  if (t.poll < 0 || t.poll > 100) {
    return StartError(fmt::format("llama-bench setting poll must be 0..100, not {}", t.poll));
  }
  if (t.flash_attn != "auto" && t.flash_attn != "on" && t.flash_attn != "off") {
    return StartError(fmt::format(
        "llama-bench setting flash_attn must be auto, on or off, not \"{}\"", t.flash_attn));
  }
  for (const auto& [name, value] : {std::pair{"type_k", &t.type_k}, {"type_v", &t.type_v}}) {
    if (!IsGgmlTypeName(*value)) {
      return StartError(fmt::format(
          "llama-bench setting {} must be a ggml type name (f16, q8_0, ...), not \"{}\"", name,
          *value));
    }
  }
  return Status::Ok();
}

// An Error for a setting this build's llama-bench has no option for.
Error Unsupported(const StockBinaries& b, const std::string& what, const std::string& option) {
  return StartError(
      fmt::format("{} cannot {} (its llama-bench has no {} option); use a newer "
                  "llama.cpp build or leave the setting at its default",
                  b.bin_dir, what, option));
}

// The last non-empty line of the file at `path` (at most 300 characters), or "".
std::string LastLineOf(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) last = line;
  }
  if (last.size() > 300) last = last.substr(0, 297) + "...";
  return last;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  if (d.count() >= 1000 && d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{} ms", d.count());
}

// The setting a llama-bench option stands for, for its "invalid parameter" error.
std::string SettingOfOption(const std::string& option) {
  static const std::map<std::string, std::string> kSettings = {
      {"-p", "n_prompt"},       {"-n", "n_gen"},          {"-pg", "n_prompt and n_gen"},
      {"-d", "n_depth"},        {"-t", "threads"},        {"-b", "n_batch"},
      {"-ub", "n_ubatch"},      {"-ctk", "type_k"},       {"-ctv", "type_v"},
      {"-fa", "flash_attn"},    {"-ngl", "n_gpu_layers"}, {"-lm", "mmap"},
      {"-mmp", "mmap"},         {"--poll", "poll"},       {"-r", "repetitions"},
      {"--no-warmup", "warmup"}};
  const auto it = kSettings.find(option);
  return it == kSettings.end() ? "" : it->second;
}

// Removes a temporary log when the run is over.
struct TempLog {
  std::string path;
  bool owned = false;
  ~TempLog() {
    if (owned) unlink(path.c_str());
  }
};

// The error for a llama-bench that ended without success. `log_hint` is "; see LOG" or "".
Error ExitError(const ExitInfo& exit, const std::string& last_line, const std::string& model_path,
                const std::vector<std::string>& argv, const std::string& stage,
                const std::string& log_hint) {
  const std::string said = last_line.empty() ? "" : ": " + last_line;
  if (exit.signaled) {
    if (Interrupted()) return MakeError("interrupted by the user", stage);
    return MakeError(
        fmt::format("llama-bench was {} during the {} test{}{}", exit.Describe(), stage,
                    last_line.empty() ? "" : "; its last words: " + last_line, log_hint),
        stage);
  }
  if (last_line.find("failed to load model") != std::string::npos) {
    return MakeError(fmt::format("llama-bench could not load the model {} ({}{}); check that it "
                                 "is a GGUF model this llama.cpp build supports{}",
                                 model_path, exit.Describe(), said, log_hint),
                     "load");
  }
  if (last_line.find("failed to create context") != std::string::npos) {
    return MakeError(fmt::format("llama-bench could not create a context for {} ({}{}); check "
                                 "that this llama.cpp build supports the settings type_k, type_v, "
                                 "flash_attn, n_batch and n_ubatch as given{}",
                                 model_path, exit.Describe(), said, log_hint),
                     "load");
  }
  const std::string invalid = "invalid parameter for argument: ";
  if (const size_t at = last_line.find(invalid); at != std::string::npos) {
    const std::string option = last_line.substr(at + invalid.size());
    const std::string setting = SettingOfOption(option);
    const auto it = std::find(argv.begin(), argv.end(), option);
    const std::string value = it != argv.end() && it + 1 != argv.end() ? " = " + *(it + 1) : "";
    return StartError(
        fmt::format("llama-bench refused {}{} ({}{}); use a value this llama.cpp build supports{}",
                    setting.empty() ? "its option " + option : "the setting " + setting, value,
                    exit.Describe(), said, log_hint));
  }
  return MakeError(fmt::format("llama-bench failed during the {} test ({}{}){}", stage,
                               exit.Describe(), said, log_hint),
                   stage);
}

}  // namespace

Result<std::vector<std::string>> LlamaBenchCommand(const StockBinaries& binaries,
                                                   const std::string& model_path,
                                                   const LlamaBenchTest& test,
                                                   const std::string& taskset_path) {
  if (Status s = CheckTest(test); !s.ok()) return s.error();
  if (model_path.empty()) return StartError("no model file given to llama-bench");
  if (model_path.find(',') != std::string::npos) {
    return StartError(
        fmt::format("llama-bench splits its model option at commas and the model "
                    "path {} has one; rename the file or link it without a comma",
                    model_path));
  }
  const LlamaBenchSyntax& syntax = binaries.bench_syntax;
  const bool combined = test.n_prompt > 0 && test.n_gen > 0;
  if (combined && !syntax.prompt_gen) {
    return Unsupported(binaries, "time n_prompt and n_gen in one test", "-pg");
  }
  if (test.n_depth > 0 && !syntax.depth) return Unsupported(binaries, "run at a depth", "-d");
  if (!test.warmup && !syntax.no_warmup) {
    return Unsupported(binaries, "skip its warm-up", "--no-warmup");
  }
  if (test.poll != 50 && !syntax.poll) return Unsupported(binaries, "set poll", "--poll");
  if (test.flash_attn != "auto" && !syntax.flash_attn) {
    return Unsupported(binaries, "set flash_attn", "-fa");
  }
  if (!test.mmap && !syntax.load_mode && !syntax.mmap) {
    return Unsupported(binaries, "load the model without mmap", "-lm or -mmp");
  }

  std::vector<std::string> argv;
  if (!test.cpus.empty()) {
    auto cpus = ParseCpuList(test.cpus);
    if (!cpus.ok()) return StartError("llama-bench setting cpus: " + cpus.error().message);
    if (Status s = CheckCpusAvailable(*cpus); !s.ok()) {
      return StartError("llama-bench setting cpus: " + s.error().message);
    }
    argv = {taskset_path, "-c", FormatCpuList(*cpus)};
  }
  const auto add = [&argv](std::string option, auto value) {
    argv.push_back(std::move(option));
    if constexpr (std::is_same_v<decltype(value), std::string>) {
      argv.push_back(std::move(value));
    } else {
      argv.push_back(std::to_string(value));
    }
  };
  argv.push_back(binaries.llama_bench);
  add("-m", model_path);
  add("-p", combined ? 0 : test.n_prompt);
  add("-n", combined ? 0 : test.n_gen);
  if (combined) add("-pg", fmt::format("{},{}", test.n_prompt, test.n_gen));
  if (test.n_depth > 0) add("-d", test.n_depth);
  if (test.threads > 0) add("-t", test.threads);
  add("-b", test.n_batch);
  add("-ub", test.n_ubatch);
  add("-ctk", test.type_k);
  add("-ctv", test.type_v);
  if (test.flash_attn != "auto") {
    const bool on = test.flash_attn == "on";
    add("-fa", std::string(syntax.flash_attn_auto ? (on ? "on" : "off") : (on ? "1" : "0")));
  }
  if (test.n_gpu_layers >= 0) add("-ngl", test.n_gpu_layers);
  if (syntax.load_mode) {
    add("-lm", std::string(test.mmap ? "mmap" : "none"));
  } else if (syntax.mmap) {
    add("-mmp", test.mmap ? 1 : 0);
  }
  if (syntax.poll) add("--poll", test.poll);
  add("-r", test.repetitions);
  if (!test.warmup) argv.push_back("--no-warmup");
  add("-o", std::string("json"));
  return argv;
}

Result<LlamaBenchRun> ParseLlamaBenchOutput(const std::string& output, const LlamaBenchTest& test,
                                            const std::string& stage) {
  const auto fail = [&stage](const std::string& what) {
    return MakeError("llama-bench's output " + what, stage);
  };
  const nlohmann::json doc = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    std::string first = output.substr(0, output.find('\n'));
    if (first.size() > 80) first = first.substr(0, 77) + "...";
    return fail(
        fmt::format("is not JSON (it begins \"{}\"); is the runtime directory a llama.cpp "
                    "build?",
                    first));
  }
  if (!doc.is_array() || doc.size() != 1 || !doc[0].is_object()) {
    return fail(
        fmt::format("is not one test object but {}",
                    doc.is_array() ? fmt::format("{} entries", doc.size()) : doc.type_name()));
  }
  const nlohmann::json& t = doc[0];
  const auto expect = [&t](const char* field, int want) -> std::optional<std::string> {
    const auto it = t.find(field);
    if (it == t.end()) return std::nullopt;  // older builds lack n_depth
    if (!it->is_number_integer() || it->get<int64_t>() != want) {
      return fmt::format("is for another test: {} is {}, not {}", field, it->dump(), want);
    }
    return std::nullopt;
  };
  for (const auto& [field, want] :
       {std::pair{"n_prompt", test.n_prompt}, {"n_gen", test.n_gen}, {"n_depth", test.n_depth}}) {
    if (auto wrong = expect(field, want)) return fail(*wrong);
  }
  const auto samples = t.find("samples_ns");
  if (samples == t.end() || !samples->is_array()) return fail("has no samples_ns list");
  if (samples->size() != static_cast<size_t>(test.repetitions)) {
    return fail(
        fmt::format("has {} samples for {} repetitions", samples->size(), test.repetitions));
  }
  LlamaBenchRun run;
  for (const auto& s : *samples) {
    if (!s.is_number() || s.get<double>() <= 0) {
      return fail(fmt::format("has a sample that is not a positive duration: {}", s.dump()));
    }
    run.samples_ns.push_back(s.get<double>());
  }
  run.build.commit = t.value("build_commit", std::string("unknown"));
  if (const auto n = t.find("build_number"); n != t.end() && n->is_number_integer()) {
    run.build.build_number = n->get<int>();
  }
  if (const auto b = t.find("backends"); b != t.end() && b->is_string()) run.backends = *b;
  run.test = t;
  return run;
}

Result<LlamaBenchRun> RunLlamaBench(const StockBinaries& binaries, const std::string& model_path,
                                    const LlamaBenchTest& test, const std::string& stage,
                                    const std::string& log_path, std::chrono::milliseconds timeout,
                                    const std::function<void(int pid)>& on_started) {
  std::string taskset;
  if (!test.cpus.empty()) {
    taskset = FindTaskset();
    if (taskset.empty()) {
      return StartError(fmt::format(
          "cannot run llama-bench on the CPUs {}: taskset (util-linux) is not installed; install "
          "it or leave the setting cpus empty",
          test.cpus));
    }
  }
  auto argv = LlamaBenchCommand(binaries, model_path, test, taskset);
  if (!argv.ok()) return argv.error();
  std::error_code ec;
  if (!fs::is_regular_file(model_path, ec)) {
    return MakeError(fmt::format("the model file {} {}; check the path", model_path,
                                 fs::exists(model_path, ec) ? "is not a file" : "does not exist"),
                     "load");
  }

  TempLog log;
  log.path = log_path;
  if (log.path.empty()) {
    char tmpl[] = "/tmp/pipette-llama-bench-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) {
      return StartError(fmt::format("cannot create a temporary file in /tmp: {}", strerror(errno)));
    }
    close(fd);
    log.path = tmpl;
    log.owned = true;
  }
  const std::string log_hint = log.owned ? "" : "; see " + log.path;

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto child = ChildProcess::Start(*argv, log.path);
  if (!child.ok()) return StartError("cannot start llama-bench: " + child.error().message);
  if (on_started) on_started(child->Pid());
  child->CloseStdin();

  const auto left = [&deadline] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  std::string output;
  bool timed_out = false;
  while (auto line = child->ReadLine(left())) output += *line + "\n";
  if (child->LineTooLong()) {
    child->Kill(SIGKILL);
    child->Wait();
    return MakeError(
        fmt::format("llama-bench printed a line over {} MiB during the {} test; is the "
                    "runtime directory a llama.cpp build?",
                    ChildProcess::kMaxLineBytes >> 20, stage),
        stage);
  }
  timed_out = child->TimedOut();
  std::optional<ExitInfo> exit;
  if (!timed_out) {
    exit = child->Wait(left());
    timed_out = !exit.has_value();
  }
  if (timed_out) {
    child->Kill(SIGKILL);
    child->Wait();
    if (Interrupted()) return MakeError("interrupted by the user", stage);
    return MakeError(
        fmt::format("llama-bench did not finish the {} test within {} (model load, warm-up and {} "
                    "repetition{}); killed it; raise the request timeout or shorten the test{}",
                    stage, FormatDuration(timeout), test.repetitions,
                    test.repetitions == 1 ? "" : "s", log_hint),
        stage);
  }
  if (!exit->exited || exit->code != 0) {
    return ExitError(*exit, LastLineOf(log.path), model_path, *argv, stage, log_hint);
  }
  auto run = ParseLlamaBenchOutput(output, test, stage);
  if (!run.ok()) return run;
  run->argv = *argv;
  return run;
}

}  // namespace pipette
