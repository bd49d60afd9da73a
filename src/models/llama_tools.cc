// Running llama.cpp's model tools (llama_tools.h).
#include "models/llama_tools.h"

#include "platform/output_path.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "models/gguf_patch.h"
#include "pipette/gguf.h"
#include "platform/process.h"

#ifndef PIPETTE_MODELS_LLAMA_BIN_DIR
#define PIPETTE_MODELS_LLAMA_BIN_DIR ""
#endif

namespace pipette {
namespace {

namespace fs = std::filesystem;

// The last non-blank line of a tool's output, trimmed; "(no output)" when there is none.
std::string LastLine(const std::string& output) {
  size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "(no output)";
  const size_t start = output.find_last_of('\n', end);
  const size_t from = start == std::string::npos ? 0 : start + 1;
  const size_t first = output.find_first_not_of(" \t", from);
  return output.substr(first, end + 1 - first);
}

Result<std::string> ToolPath(const std::string& name) {
  const std::string dir = LlamaToolsDir();
  const std::string path = (fs::path(dir) / name).string();
  if (dir.empty() || ::access(path.c_str(), X_OK) != 0) {
    return MakeError(fmt::format("llama.cpp tool {} not found in '{}'; build llama.cpp with "
                                 "scripts/llama.sh or set PIPETTE_LLAMA_BIN_DIR",
                                 name, dir),
                     kPrepareStage);
  }
  return path;
}

Status CheckInputFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return MakeError(fmt::format("{}: no such file ({})", path, what));
  if (!fs::is_regular_file(st)) {
    return MakeError(fmt::format("{}: not a regular file ({})", path, what));
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return MakeError(fmt::format("{}: not readable ({})", path, what));
  }
  return Status::Ok();
}

// The header of a llama2.c checkpoint (Karpathy's run.c `Config`: seven int32 values).
struct Llama2cConfig {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

// Reads and checks the checkpoint header, including that the file holds every weight the header
// implies (a negative vocab_size means a separate classifier matrix follows).
Result<Llama2cConfig> ReadLlama2cConfig(const std::string& path) {
  Llama2cConfig c{};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return MakeError(fmt::format("{}: cannot open", path));
  const bool read = std::fread(&c, sizeof(c), 1, f) == 1;
  std::fclose(f);
  const bool sane = read && c.dim > 0 && c.hidden_dim > 0 && c.n_layers > 0 && c.n_heads > 0 &&
                    c.n_kv_heads > 0 && c.n_kv_heads <= c.n_heads && c.dim % c.n_heads == 0 &&
                    c.vocab_size != 0 && c.seq_len > 0;
  if (!sane) {
    return MakeError(
        fmt::format("{}: not a llama2.c checkpoint (its 28-byte header does not "
                    "describe a model); give a llama2.c .bin such as stories260K.bin",
                    path));
  }
  const uint64_t dim = c.dim, hidden = c.hidden_dim, head = c.dim / c.n_heads;
  const uint64_t vocab = static_cast<uint64_t>(std::abs(static_cast<int64_t>(c.vocab_size)));
  const uint64_t per_layer = 2 * dim + 2 * dim * dim +
                             2 * dim * head * static_cast<uint64_t>(c.n_kv_heads) +
                             3 * dim * hidden;
  const uint64_t floats = vocab * dim * (c.vocab_size < 0 ? 2 : 1) +
                          static_cast<uint64_t>(c.n_layers) * per_layer + dim +
                          static_cast<uint64_t>(c.seq_len) * head;
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (!ec && size < sizeof(c) + 4 * floats) {
    return MakeError(
        fmt::format("{}: llama2.c checkpoint is truncated ({} of {} bytes); the "
                    "download or copy is incomplete",
                    path, size, sizeof(c) + 4 * floats));
  }
  return c;
}

// Runs `argv` whose output file is `tmp`, validates `tmp`, applies `fixup` to it (if any) and
// renames it to `out_path`. Removes `tmp` on any failure.
Status RunToOutput(const std::vector<std::string>& argv, const std::string& tool,
                   const std::string& tmp, const std::string& out_path,
                   const std::function<Status(const std::string&)>& fixup = nullptr) {
  std::string output;
  Result<ExitInfo> exit = RunTool(argv, &output);
  Status status;
  if (!exit.ok()) {
    status = Error{exit.error().message, kPrepareStage};
  } else if (!exit->exited || exit->code != 0) {
    status = MakeError(fmt::format("{} failed ({}): {}", tool, exit->Describe(), LastLine(output)),
                       kPrepareStage);
  } else if (Result<GgufInfo> info = ReadGgufInfo(tmp); !info.ok()) {
    status = MakeError(fmt::format("{} did not write a valid model: {} (tool said: {})", tool,
                                   info.error().message, LastLine(output)),
                       kPrepareStage);
  } else if (Status fixed = fixup ? fixup(tmp) : Status::Ok(); !fixed.ok()) {
    status = Error{fixed.error().message, kPrepareStage};
  } else if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    status = MakeError(fmt::format("{}: cannot rename the finished file into place", out_path),
                       kPrepareStage);
  }
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

std::string TempPath(const std::string& out_path) {
  return fmt::format("{}.tmp-{}", out_path, ::getpid());
}

}  // namespace

std::string LlamaToolsDir() {
  const char* env = std::getenv("PIPETTE_LLAMA_BIN_DIR");
  if (env != nullptr && *env != '\0') return env;
  return PIPETTE_MODELS_LLAMA_BIN_DIR;
}

Status QuantizeModel(const std::string& in_path, const std::string& type_name,
                     const std::string& out_path) {
  const std::string type = CanonicalQuantizeType(type_name);
  if (type.empty()) {
    std::string valid;
    for (const std::string& name : QuantizeTypeNames()) valid += (valid.empty() ? "" : " ") + name;
    return MakeError(
        fmt::format("unknown quantization type '{}'; valid types: {}", type_name, valid));
  }
  Result<GgufInfo> in = ReadGgufInfo(in_path);
  if (!in.ok()) return in.error();
  if (Status s = CheckOutputPath(out_path, {in_path}); !s.ok()) return s;
  Result<std::string> tool = ToolPath("llama-quantize");
  if (!tool.ok()) return tool.error();
  const std::string tmp = TempPath(out_path);
  return RunToOutput({*tool, in_path, tmp, type}, "llama-quantize", tmp, out_path);
}

Status ImportLlama2c(const std::string& model_bin, const std::string& tokenizer_bin,
                     const std::string& out_path) {
  if (Status s = CheckInputFile(model_bin, "the llama2.c checkpoint"); !s.ok()) return s;
  if (Status s = CheckInputFile(tokenizer_bin, "the llama2.c tokenizer"); !s.ok()) return s;
  Result<Llama2cConfig> config = ReadLlama2cConfig(model_bin);
  if (!config.ok()) return config.error();
  if (Status s = CheckOutputPath(out_path, {model_bin, tokenizer_bin}); !s.ok()) return s;
  Result<std::string> tool = ToolPath("llama-convert-llama2c-to-ggml");
  if (!tool.ok()) return tool.error();
  const std::string tmp = TempPath(out_path);
  // The converter always writes a context length of 128; the checkpoint's seq_len is the truth.
  // It also writes -1 for the separator and padding tokens a llama2.c model does not have, which
  // the loader would call a bad special token on every load: those keys are left out.
  const auto seq_len = static_cast<uint32_t>(config->seq_len);
  const auto fixup = [seq_len](const std::string& file) -> Status {
    if (Status s = PatchGgufU32(file, "llama.context_length", seq_len); !s.ok()) return s;
    if (auto dropped = DropInvalidTokenIds(file); !dropped.ok()) return dropped.error();
    return Status::Ok();
  };
  return RunToOutput({*tool, "--copy-vocab-from-model", tokenizer_bin, "--llama2c-model", model_bin,
                      "--llama2c-output-model", tmp},
                     "llama-convert-llama2c-to-ggml", tmp, out_path, fixup);
}

}  // namespace pipette
