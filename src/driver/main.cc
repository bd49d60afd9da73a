// pipette-llamacpp-driver: executes measurement commands on libllama for the harness.
// Protocol: one JSON object per line on stdin, one reply per line on stdout (docs/driver-protocol.md).
// Every failure is a reply {"ok": false, "error": ..., "stage": ...}; stdout carries nothing else
// (llama.cpp's log goes to stderr, which the harness keeps as the runtime log).
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "driver/engine.h"
#include "platform/cpu_affinity.h"
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
  if (!g_flash_attn.empty()) e["flash_attn"] = g_flash_attn;
  return e;
}

json HandleLoad(Engine& engine, const json& req) {
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
      CompletionParams p;
      p.message = r.message;
      p.use_chat_template = r.chat_template;
      p.max_tokens = r.max_tokens;
      p.temperature = static_cast<float>(r.temperature);
      p.seed = r.seed;
      p.top_k = r.top_k;
      p.top_p = static_cast<float>(r.top_p);
      p.min_p = static_cast<float>(r.min_p);
      c = engine.Complete(p, r.n);
    } else {
      c = engine.Continue(req.at("n").get<int>());
    }
    if (!c) return Fail(c.error(), "generate");
    return Ok(protocol::CompletionReply{c->text, c->tokens, c->done, c->stop, c->prompt_tokens,
                                        c->prompt_format, c->chat_template, c->first_token_ns,
                                        c->prefill_ns, c->decode_ns});
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
  return Fail(MakeError("unknown command '" + cmd + "'"), "protocol");
}

}  // namespace
}  // namespace pipette::driver

int main() {
  using nlohmann::json;
  llama_log_set(pipette::driver::LogToStderr, nullptr);
  pipette::driver::Engine engine;
  std::cout << json{{"ok", true}, {"ready", true}, {"protocol", pipette::protocol::kProtocol}}.dump()
            << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json reply;
    try {
      const json req = json::parse(line);
      if (req.value("cmd", "") == pipette::protocol::kQuit) {
        std::cout << json{{"ok", true}}.dump() << std::endl;
        break;
      }
      reply = pipette::driver::Handle(engine, req);
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}, {"stage", "protocol"}};
    }
    std::cout << reply.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
  }
  return 0;
}
