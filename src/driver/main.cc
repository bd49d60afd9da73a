// pipette-llamacpp-driver: executes measurement commands on libllama for the harness.
// Protocol: one JSON object per line on stdin, one reply per line on stdout (docs/driver-protocol.md).
// Every failure is a reply {"ok": false, "error": ..., "stage": ...}; stdout carries nothing else
// (llama.cpp's log goes to stderr, which the harness keeps as the runtime log).
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "driver/cpu_level.h"
#include "driver/engine.h"
#include "platform/cpu_affinity.h"
#include "platform/probe.h"
#include "platform/proc_memory.h"
#include "ggml-backend.h"
#include "llama.h"

namespace pipette::driver {
namespace {

using nlohmann::json;

std::mutex g_log_mutex;
std::vector<std::string> g_warnings;  // llama.cpp WARN/ERROR lines, for logs.warnings
std::string g_last_error;             // the last ERROR line: the reason a load failed
std::string g_flash_attn;             // "on"/"off" as llama.cpp resolved flash_attn = auto

void LogToStderr(ggml_log_level level, const char* text, void*) {
  std::fputs(text, stderr);
  std::string line(text);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  std::lock_guard<std::mutex> lock(g_log_mutex);
  // llama.cpp logs how it resolved flash_attn = auto (llama-context.cpp, resolve_fused_ops).
  if (line.find("Flash Attention enabled") != std::string::npos) g_flash_attn = "on";
  if (line.find("Flash Attention disabled") != std::string::npos) g_flash_attn = "off";
  if ((level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) && !line.empty()) {
    if (g_warnings.size() < 200) g_warnings.push_back(line);
    if (level == GGML_LOG_LEVEL_ERROR) g_last_error = line;
  }
}

json TakeWarnings() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  json w = g_warnings;
  g_warnings.clear();
  return w;
}

json Fail(const Error& e, const std::string& default_stage) {
  return {{"ok", false}, {"error", e.message}, {"stage", e.stage.empty() ? default_stage : e.stage}};
}

json Backends() {
  json out = json::array();
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    const char* type = "other";
    switch (ggml_backend_dev_type(dev)) {
      case GGML_BACKEND_DEVICE_TYPE_CPU: type = "cpu"; break;
      case GGML_BACKEND_DEVICE_TYPE_GPU: type = "gpu"; break;
      case GGML_BACKEND_DEVICE_TYPE_IGPU: type = "igpu"; break;
      case GGML_BACKEND_DEVICE_TYPE_ACCEL: type = "accel"; break;
      default: break;
    }
    out.push_back({{"name", ggml_backend_dev_name(dev)},
                   {"description", ggml_backend_dev_description(dev)},
                   {"type", type}});
  }
  return out;
}

// What llama.cpp actually uses, which can differ from what was asked: it pads the context, caps
// n_ubatch at n_batch, and resolves flash_attn = auto per backend.
json Effective(const Engine& engine) {
  const EngineCounts c = engine.Counts();
  std::lock_guard<std::mutex> lock(g_log_mutex);
  json e = {{"n_ctx", c.n_ctx}, {"n_batch", c.n_batch}, {"n_ubatch", c.n_ubatch},
            {"cpus", FormatCpuList(AllowedCpus())}};
  // Several sequences: n_ctx above is each one's; the context holds them all.
  if (c.n_seq > 1) {
    e["n_seq"] = c.n_seq;
    e["n_ctx_total"] = c.n_ctx_total;
  }
  if (!g_flash_attn.empty()) e["flash_attn"] = g_flash_attn;
  return e;
}

// Samples this process's own memory when the harness cannot (the driver runs on another device):
// the peak of max(VmHWM, VmRSS + VmSwap), as platform/proc_memory.h defines it.
std::unique_ptr<MemorySampler> g_sampler;

json HandleMemory() {
  const auto now = ReadProcMemory(getpid());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  json reply = {{"ok", true},
                {"now", now ? ProcMemoryToJson(*now) : json(nullptr)},
                {"ru_maxrss_bytes", static_cast<uint64_t>(ru.ru_maxrss) * 1024}};
  if (g_sampler) {
    g_sampler->Sample();
    reply["peak_bytes"] = g_sampler->PeakBytes();
    reply["peak_swap_bytes"] = g_sampler->PeakSwapBytes();
    reply["readings"] = g_sampler->Readings();
    if (const auto at = g_sampler->AtPeak()) reply["at_peak"] = ProcMemoryToJson(*at);
  } else if (now) {
    reply["peak_bytes"] = std::max(now->vm_hwm, now->Resident());
    reply["peak_swap_bytes"] = now->vm_swap;
  }
  return reply;
}

json HandleLoad(Engine& engine, const json& req) {
  if (const int ms = req.value("sample_memory_ms", 0); ms > 0 && !g_sampler) {
    g_sampler = std::make_unique<MemorySampler>(getpid(), ms);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (auto s = engine.Load(req.at("model").get<std::string>(),
                           req.value("settings", json::object()).get<EngineSettings>());
      !s) {
    Error e = s.error();
    {
      std::lock_guard<std::mutex> lock(g_log_mutex);
      if (!g_last_error.empty()) e.message += ": " + g_last_error;
    }
    json r = Fail(e, "load");
    r["warnings"] = TakeWarnings();
    return r;
  }
  const auto load_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - t0).count();
  const ModelFacts& f = engine.facts();
  return {{"ok", true},
          {"load_ns", load_ns},
          {"model", {{"desc", f.desc}, {"n_params", f.n_params}, {"size_bytes", f.size_bytes},
                     {"n_vocab", f.n_vocab}, {"n_ctx_train", f.n_ctx_train}, {"add_bos", f.add_bos}}},
          {"runtime", {{"name", "llamacpp"}, {"commit", PIPETTE_LLAMA_COMMIT},
                       {"system_info", llama_print_system_info()}, {"backends", Backends()},
                       {"supports_gpu_offload", llama_supports_gpu_offload()}}},
          {"settings", json(engine.settings())},
          {"effective", Effective(engine)},
          {"warnings", TakeWarnings()}};
}

CompletionParams ParamsOf(const protocol::CompleteRequest& r) {
  CompletionParams p;
  p.message = r.message;
  p.use_chat_template = r.chat_template;
  p.max_tokens = r.max_tokens;
  p.temperature = static_cast<float>(r.temperature);
  p.seed = r.seed;
  p.top_k = r.top_k;
  p.top_p = static_cast<float>(r.top_p);
  p.min_p = static_cast<float>(r.min_p);
  return p;
}

protocol::SeqChunk SeqChunkOf(int slot, const CompletionChunk& c) {
  return {slot, c.text, c.tokens, c.done, c.stop, c.first_token_ns, c.decode_ns, c.checks};
}

// A successful reply: the reply struct's fields plus "ok": true.
template <typename Reply>
json Ok(const Reply& reply) {
  json j = reply;
  j["ok"] = true;
  return j;
}

json Handle(Engine& engine, const json& req) {
  const std::string cmd = req.at("cmd").get<std::string>();
  if (cmd == protocol::kLoad) return HandleLoad(engine, req);
  if (cmd == protocol::kTokenize) {
    auto t = engine.Tokenize(req.at("text").get<std::string>(), req.value("add_special", true));
    if (!t) return Fail(t.error(), "tokenize");
    return {{"ok", true}, {"tokens", *t}};
  }
  if (cmd == protocol::kPrefill) {
    auto ns = engine.Prefill(req.at("tokens").get<std::vector<int32_t>>());
    if (!ns) return Fail(ns.error(), "prefill");
    return Ok(protocol::PrefillReply{*ns});
  }
  if (cmd == protocol::kDecode) {
    auto d = engine.Decode(req.at("context").get<std::vector<int32_t>>(), req.at("n").get<int>());
    if (!d) return Fail(d.error(), "decode");
    return Ok(protocol::DecodeReply{d->step_ns, d->tokens});
  }
  if (cmd == protocol::kGenerate) {
    auto g = engine.Generate(req.at("text").get<std::string>(), req.at("n").get<int>(),
                             req.value("add_special", true));
    if (!g) return Fail(g.error(), "generate");
    return Ok(protocol::GenerateReply{g->tokenize_ns, g->prefill_ns, g->token_ns,
                                      g->n_prompt_tokens, g->prompt_tokens, g->text});
  }
  if (cmd == protocol::kComplete || cmd == protocol::kContinue) {
    Result<CompletionChunk> c = MakeError("", "generate");
    if (cmd == protocol::kComplete) {
      const auto r = req.get<protocol::CompleteRequest>();
      c = engine.Complete(ParamsOf(r), r.n);
    } else {
      c = engine.Continue(req.at("n").get<int>());
    }
    if (!c) return Fail(c.error(), "generate");
    return Ok(protocol::CompletionReply{c->text, c->tokens, c->done, c->stop, c->prompt_tokens,
                                        c->prompt_format, c->chat_template, c->first_token_ns,
                                        c->prefill_ns, c->decode_ns, c->template_engine});
  }
  if (cmd == protocol::kSeqStart) {
    const int slot = req.at("slot").get<int>();
    auto c = engine.StartSeq(slot, ParamsOf(req.get<protocol::CompleteRequest>()),
                             req.value("check_every", 0));
    if (!c) return Fail(c.error(), "generate");
    return Ok(protocol::SeqStartReply{c->prompt_tokens, c->prompt_format, c->chat_template,
                                      c->template_engine, c->prefill_ns, SeqChunkOf(slot, *c)});
  }
  if (cmd == protocol::kSeqStep) {
    auto step = engine.StepSeqs(req.at("n").get<int>());
    if (!step) return Fail(step.error(), "generate");
    protocol::SeqStepReply reply;
    for (const auto& [slot, chunk] : *step) reply.slots.push_back(SeqChunkOf(slot, chunk));
    return Ok(reply);
  }
  if (cmd == protocol::kSeqStop) {
    if (auto s = engine.StopSeq(req.at("slot").get<int>()); !s) return Fail(s.error(), "generate");
    return {{"ok", true}};
  }
  if (cmd == protocol::kLogProbs) {
    if (auto s = engine.WriteLogProbs(req.at("tokens").get<std::vector<int32_t>>(),
                                      req.at("path").get<std::string>());
        !s) {
      return Fail(s.error(), "logprobs");
    }
    return {{"ok", true}, {"n_vocab", engine.facts().n_vocab}};
  }
  if (cmd == protocol::kClear) {
    engine.ClearKvCache();
    return {{"ok", true}};
  }
  if (cmd == protocol::kWarnings) return {{"ok", true}, {"warnings", TakeWarnings()}};
  if (cmd == protocol::kMemory) return HandleMemory();
  if (cmd == protocol::kProbe) return AnswerProbe(req);
  return Fail(MakeError("unknown command '" + cmd + "'"), "protocol");
}

// Lines from stdin, read by their own thread so that a lost link is noticed while a command
// runs: at the end of input with stdout gone too (the harness, or the ssh/adb link to it, went
// away), the driver ends at once instead of computing for nobody, so no driver is left running on
// a device after a dropped connection. Input merely closed early (a pipe in a test) ends the
// driver only after the commands already read.
class Input {
 public:
  void Start() {
    std::thread([this] { ReadAll(); }).detach();
  }
  // The next line; false at the end of input.
  bool Next(std::string* line) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !lines_.empty() || eof_; });
    if (lines_.empty()) return false;
    *line = std::move(lines_.front());
    lines_.pop_front();
    busy_ = true;
    return true;
  }
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
  }

 private:
  void ReadAll() {
    std::string line;
    while (std::getline(std::cin, line)) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(std::move(line));
      cv_.notify_one();
    }
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!busy_) {
          eof_ = true;
          cv_.notify_one();
          return;
        }
      }
      pollfd out{STDOUT_FILENO, 0, 0};
      if (poll(&out, 1, 100) > 0 && (out.revents & (POLLERR | POLLHUP))) _exit(0);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;
  bool eof_ = false;
  bool busy_ = false;
};

}  // namespace
}  // namespace pipette::driver

// Usage: pipette-llamacpp-driver                 the protocol on stdin/stdout
//        pipette-llamacpp-driver --probe JSON    one device probe (platform/probe.h), then exit
//        pipette-llamacpp-driver --build-info    {"target", "cpu_level", "commit"}, then exit
int main(int argc, char** argv) {
  using nlohmann::json;
  namespace d = pipette::driver;
  const json build = {{"target", d::Target()}, {"cpu_level", d::CpuLevel()},
                      {"commit", PIPETTE_LLAMA_COMMIT}};
  if (argc == 2 && std::strcmp(argv[1], "--build-info") == 0) {
    std::cout << build.dump() << std::endl;
    return 0;
  }
  if (const std::string refusal = d::CpuLevelRefusal(); !refusal.empty()) {
    std::cerr << refusal << std::endl;
    return 3;
  }
  if (argc == 3 && std::strcmp(argv[1], "--probe") == 0) {
    const json request = json::parse(argv[2], nullptr, false);
    std::cout << pipette::AnswerProbe(request).dump(-1, ' ', false, json::error_handler_t::replace)
              << std::endl;
    return 0;
  }
  if (argc != 1) {
    std::cerr << "usage: pipette-llamacpp-driver [--probe JSON | --build-info]" << std::endl;
    return 2;
  }
  // Its own process group, whose id is the pid it announces: the harness ends the group on the
  // device (Transport::KillGroup), whatever the link did.
  setpgid(0, 0);
  llama_log_set(d::LogToStderr, nullptr);
  d::Engine engine;
  std::cout << json{{"ok", true}, {"ready", true}, {"protocol", pipette::protocol::kProtocol},
                    {"pid", static_cast<int>(getpid())}, {"build", build}}
                   .dump()
            << std::endl;
  d::Input input;
  input.Start();
  std::string line;
  while (input.Next(&line)) {
    if (line.empty()) {
      input.Done();
      continue;
    }
    json reply;
    try {
      const json req = json::parse(line);
      if (req.value("cmd", "") == pipette::protocol::kQuit) {
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        std::cout << json{{"ok", true}, {"ru_maxrss_bytes", static_cast<uint64_t>(ru.ru_maxrss) * 1024}}.dump()
                  << std::endl;
        break;
      }
      reply = d::Handle(engine, req);
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}, {"stage", "protocol"}};
    }
    std::cout << reply.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
    input.Done();
  }
  return 0;
}
