// `pipette models ...`: inspect, synth, quantize, import-llama2c (see cmd_models.h).
#include "cli/number_range.h"
#include "cli/cmd_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/sha256.h"
#include "models/human_bytes.h"
#include "models/llama_tools.h"
#include "pipette/gguf.h"
#include "pipette/synth.h"
#include "platform/output_path.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

// Bad input has no stage; a failed tool or write has one (llama_tools.h, synth.h).
int ExitCodeOf(const Error& error) { return error.stage.empty() ? kExitBadInput : kExitFailure; }

// 1234 -> "1.2K", 134105856 -> "134.1M", 1100048384 -> "1.10B".
std::string HumanCount(uint64_t n) {
  if (n < 1000) return std::to_string(n);
  if (n < 1000000) return fmt::format("{:.1f}K", n / 1e3);
  if (n < 1000000000) return fmt::format("{:.1f}M", n / 1e6);
  return fmt::format("{:.2f}B", n / 1e9);
}

std::string SynthNotice(const GgufInfo& info) {
  const std::string shape = info.synth.is_object() && info.synth.contains("shape_of") &&
                                    info.synth["shape_of"].is_string()
                                ? info.synth["shape_of"].get<std::string>()
                                : "a real model";
  return "NOTE: synthetic model: random weights in the shape of " + shape +
         "; its performance stands for that shape, not for any model's quality.";
}

// "f16 x16, f32 x5": most frequent first.
std::string TypeHistogram(const GgufInfo& info) {
  std::vector<std::pair<std::string, uint64_t>> types(info.tensor_types.begin(),
                                                      info.tensor_types.end());
  std::stable_sort(types.begin(), types.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [type, count] : types) {
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", type, count);
  }
  return out.empty() ? "(no tensors)" : out;
}

void PrintModelTable(const GgufInfo& info, const std::string& sha256) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"file", info.path},
      {"architecture", info.architecture.empty() ? "(none)" : info.architecture},
      {"name", info.name.empty() ? "(none)" : info.name},
      {"parameters", fmt::format("{} ({})", HumanCount(info.params), info.params)},
      {"quant", info.quant + (info.quant_inferred ? " (inferred from tensor types)" : "")},
      {"file type", info.file_type < 0 ? "(absent)" : std::to_string(info.file_type)},
      {"tensor types", TypeHistogram(info)},
      {"weights", fmt::format("{} ({} bytes)", HumanBytes(info.tensor_bytes), info.tensor_bytes)},
      {"context", fmt::format("{} tokens (training)", info.n_ctx_train)},
      {"vocabulary", fmt::format("{} tokens", info.vocab_size)},
      {"shape", fmt::format("n_embd {}, layers {}, heads {} (kv {}), ff {}", info.n_embd,
                            info.n_layer, info.n_head, info.n_head_kv, info.n_ff)},
      {"size", fmt::format("{} ({} bytes), GGUF v{}", HumanBytes(info.size_bytes), info.size_bytes,
                           info.version)},
      {"sha256", sha256},
  };
  if (info.synthetic) {
    rows.push_back({"synthetic", fmt::format("preset {}, seed {}", info.synth.value("preset", "?"),
                                             info.synth.value("seed", json()).dump())});
  }
  for (const auto& [key, value] : rows) std::cout << fmt::format("{:<14}{}\n", key, value);
  if (info.synthetic) std::cout << SynthNotice(info) << "\n";
}

int Inspect(const std::string& path, CliContext& ctx) {
  Result<GgufInfo> info = ReadGgufInfo(path);
  if (!info.ok()) return ReportError(ctx, info.error());
  Result<std::string> sha = Sha256OfFile(path);
  if (!sha.ok()) return ReportError(ctx, sha.error(), kExitFailure);
  if (ctx.json) {
    json j = ToJson(*info);
    j["sha256"] = *sha;
    std::cout << j.dump(2) << "\n";
  } else {
    PrintModelTable(*info, *sha);
  }
  return kExitOk;
}

// Prints one line about a model file just written (or its JSON block).
int ReportWritten(const std::string& path, CliContext& ctx) {
  Result<GgufInfo> info = ReadGgufInfo(path);
  if (!info.ok()) return ReportError(ctx, info.error(), kExitFailure);
  if (const std::string w = QuantFallbackWarning(*info); !w.empty()) {
    std::cerr << "pipette: warning: " << w << "\n";
  }
  if (ctx.json) {
    std::cout << ToJson(*info).dump(2) << "\n";
    return kExitOk;
  }
  const std::string kind = (info->synthetic ? "synthetic " : "") + info->architecture;
  std::cout << fmt::format("wrote {}: {}, {} params, {}, context {}, vocab {}, {}\n", path, kind,
                           HumanCount(info->params), info->quant, info->n_ctx_train,
                           info->vocab_size, HumanBytes(info->size_bytes));
  if (info->synthetic) std::cout << SynthNotice(*info) << "\n";
  return kExitOk;
}

struct SynthArgs {
  SynthOptions options;
  bool list = false;
  bool miniature = false;
  std::string arch;  // --list: only presets of this architecture
};

int ListPresets(const SynthArgs& args, CliContext& ctx) {
  if (!args.arch.empty()) {
    if (std::string unknown = UnknownSynthArchitecture(args.arch); !unknown.empty()) {
      return ReportError(ctx, MakeError(unknown));
    }
  }
  json presets = json::array();
  for (const SynthPreset& p : SynthPresets()) {
    if (!args.arch.empty() && p.arch != args.arch) continue;
    uint64_t n_vocab = p.n_vocab;
    if (n_vocab == 0) {
      Result<GgufInfo> vocab = ReadGgufInfo(SynthVocabPath(p, args.options.vocab_dir));
      n_vocab = vocab.ok() ? vocab->vocab_size : 0;
    }
    const SynthParams params = SynthParamCount(p, n_vocab);
    presets.push_back({{"name", p.name},
                       {"arch", p.arch},
                       {"shape_of", p.shape_of},
                       {"source", p.source},
                       {"layers", SynthLayerPattern(p)},
                       {"vocab", p.vocab},
                       {"vocab_size", n_vocab},
                       {"n_embd", p.n_embd},
                       {"n_layer", p.n_layer},
                       {"n_head", p.n_head},
                       {"n_head_kv", p.n_head_kv},
                       {"head_dim", p.HeadDim()},
                       {"n_ff", p.n_ff},
                       {"tied_embeddings", p.tied},
                       {"n_ctx_train", p.n_ctx_train},
                       {"params", n_vocab > 0 ? json(params.total) : json()},
                       {"params_active", n_vocab > 0 ? json(params.active) : json()}});
  }
  if (ctx.json) {
    std::cout << presets.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{:<20}{:<15}{:>9}{:>9}{:>8}{:>7}  {}\n", "preset", "arch", "params",
                           "active", "vocab", "n_embd", "layers");
  for (const json& p : presets) {
    const std::string total = p["params"].is_null() ? "?" : HumanCount(p["params"]);
    const std::string active =
        p["params_active"].is_null() ? "?" : HumanCount(p["params_active"]);
    std::cout << fmt::format("{:<20}{:<15}{:>9}{:>9}{:>8}{:>7}  {}\n",
                             p["name"].get<std::string>(), p["arch"].get<std::string>(), total,
                             active, p["vocab_size"].get<uint64_t>(), p["n_embd"].get<uint32_t>(),
                             p["layers"].get<std::string>());
    std::cout << fmt::format("{:<20}shape of {}; from {}\n", "",
                             p["shape_of"].get<std::string>(), p["source"].get<std::string>());
  }
  std::cout << "Synthetic models have random weights: their performance stands for the shape, "
               "not for any model's quality.\n";
  return kExitOk;
}

int Synth(const SynthArgs& args, CliContext& ctx) {
  if (args.list) return ListPresets(args, ctx);
  if (args.options.out_path.empty()) {
    return ReportError(ctx, MakeError("models synth needs -o FILE (or --list to see presets)"));
  }
  if (Status s = CheckOutputPath(args.options.out_path); !s.ok()) return ReportError(ctx, s.error());
  const SynthPreset* preset = FindSynthPreset(args.options.preset);
  if (preset == nullptr) {
    return ReportError(ctx, WriteSyntheticModel(args.options).error(), kExitBadInput);
  }
  const SynthPreset shape = args.miniature ? SynthMiniature(*preset) : *preset;
  if (Status s = CheckSyntheticModel(shape, args.options); !s.ok()) {
    return ReportError(ctx, s.error());
  }
  if (!ctx.json) {
    std::cerr << "pipette: writing synthetic " << shape.name << " model (" << args.options.type
              << ") to " << args.options.out_path << "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  Status s = WriteSyntheticModel(shape, args.options);
  if (!s.ok()) return ReportError(ctx, s.error(), ExitCodeOf(s.error()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ctx.json) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(args.options.out_path, ec);
    if (!ec) {
      std::cerr << fmt::format("pipette: wrote {} in {:.1f} s ({:.0f} MB/s)\n", HumanBytes(bytes),
                               seconds, seconds > 0 ? bytes / seconds / 1e6 : 0.0);
    }
  }
  const int written = ReportWritten(args.options.out_path, ctx);
  if (written == kExitOk && !ctx.json && !shape.note.empty()) std::cout << shape.note << "\n";
  return written;
}

void AddInspect(CLI::App& models, CliContext& ctx) {
  auto path = std::make_shared<std::string>();
  CLI::App* sub = models.add_subcommand(
      "inspect", "Show a GGUF model's header: architecture, parameters, quantization, SHA-256");
  sub->add_option("file", *path, "GGUF model file")->required();
  sub->callback([path, &ctx] { Inspect(*path, ctx); });
}

void AddSynth(CLI::App& models, CliContext& ctx) {
  auto args = std::make_shared<SynthArgs>();
  SynthOptions& o = args->options;
  CLI::App* sub = models.add_subcommand(
      "synth",
      "Write a synthetic model: a real architecture's shape with random weights and a real "
      "tokenizer (its performance stands for the shape, not for any model's quality)");
  sub->add_flag("--list", args->list, "list the presets and exit");
  sub->add_option("--arch", args->arch,
                  "with --list: only the presets of this llama.cpp architecture (llama, granite, "
                  "granitehybrid, lfm2, lfm2moe, qwen3, qwen3moe, qwen35, mistral3)");
  sub->add_option("--preset", o.preset, "shape preset (see --list)")->capture_default_str();
  sub->add_flag("--miniature", args->miniature,
                "the preset's architecture and layer pattern at tiny widths (for quick tests)");
  sub->add_option("--ctx", o.n_ctx,
                  "training context length written to the header (tokens; default: the real "
                  "model's, at most that)")
      ->check(NumberIn(1u, 1u << 24));
  sub->add_option("--seed", o.seed, "random seed: same seed, same bytes")->capture_default_str();
  sub->add_option("--type", o.type,
                  "file type: F16, F32, or written directly quantized Q8_0, Q4_0, Q4_K_M "
                  "(llama-quantize's per-tensor types; norms, routers, convolutions stay F32)")
      ->capture_default_str();
  sub->add_option("--vocab-dir", o.vocab_dir,
                  "folder with llama.cpp's ggml-vocab-*.gguf (default: $PIPETTE_VOCAB_DIR or the "
                  "llama.cpp build's share/pipette)");
  sub->add_option("-o,--output", o.out_path, "output GGUF file (replaced if it exists)");
  sub->callback([args, &ctx] { Synth(*args, ctx); });
}

void AddQuantize(CLI::App& models, CliContext& ctx) {
  struct Args {
    std::string in, type, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = models.add_subcommand(
      "quantize", "Quantize a GGUF model with llama.cpp's llama-quantize (Q8_0, Q4_K_M, ...)");
  sub->add_option("input", args->in, "GGUF model to quantize")->required();
  sub->add_option("type", args->type, "quantization type, as llama-quantize names it")->required();
  sub->add_option("-o,--output", args->out, "output GGUF file")->required();
  sub->callback([args, &ctx] {
    Status s = QuantizeModel(args->in, args->type, args->out);
    if (!s.ok()) {
      ReportError(ctx, s.error(), ExitCodeOf(s.error()));
      return;
    }
    ReportWritten(args->out, ctx);
  });
}

void AddImportLlama2c(CLI::App& models, CliContext& ctx) {
  struct Args {
    std::string model, tokenizer, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = models.add_subcommand(
      "import-llama2c",
      "Convert a llama2.c checkpoint to an F32 GGUF model (llama.cpp's converter)");
  sub->add_option("--model", args->model, "llama2.c checkpoint, e.g. stories260K.bin")->required();
  sub->add_option("--tokenizer", args->tokenizer, "llama2.c tokenizer, e.g. tok512.bin")
      ->required();
  sub->add_option("-o,--output", args->out, "output GGUF file")->required();
  sub->callback([args, &ctx] {
    Status s = ImportLlama2c(args->model, args->tokenizer, args->out);
    if (!s.ok()) {
      ReportError(ctx, s.error(), ExitCodeOf(s.error()));
      return;
    }
    ReportWritten(args->out, ctx);
  });
}

}  // namespace

void AddModelsCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* models = app.add_subcommand("models", "Inspect and prepare model files");
  models->require_subcommand(1);
  AddInspect(*models, ctx);
  AddSynth(*models, ctx);
  AddQuantize(*models, ctx);
  AddImportLlama2c(*models, ctx);
}

}  // namespace pipette::cli
