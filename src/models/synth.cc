// Synthetic llama-shaped GGUF models (pipette/synth.h). The header is built with ggml's gguf API
// (tokenizer keys copied from a vocabulary-only GGUF file); tensor data is generated and written
// one chunk at a time after it, with GGUF's alignment padding.
#include "pipette/synth.h"
#include "platform/output_path.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ggml.h"
#include "gguf.h"
#include "pipette/gguf.h"

#ifndef PIPETTE_MODELS_VOCAB_DIR
#define PIPETTE_MODELS_VOCAB_DIR ""
#endif

namespace pipette {
namespace {

constexpr float kWeightRange = 0.0346410162f;  // 0.02 * sqrt(3): uniform with stddev 0.02
constexpr size_t kChunkElements = size_t{1} << 20;

// One tensor of the model: name, shape (ggml order: ne0 is the row length) and whether it is a
// norm (1-D, always F32, all ones).
struct TensorSpec {
  std::string name;
  int64_t ne0 = 0;
  int64_t ne1 = 1;
  bool norm = false;
};

std::vector<TensorSpec> LlamaTensors(const SynthPreset& p, int64_t n_vocab) {
  const int64_t embd = p.n_embd;
  const int64_t embd_kv = static_cast<int64_t>(p.n_embd / p.n_head) * p.n_head_kv;
  std::vector<TensorSpec> t = {{"token_embd.weight", embd, n_vocab}};
  for (uint32_t i = 0; i < p.n_layer; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    t.push_back({b + "attn_norm.weight", embd, 1, true});
    t.push_back({b + "attn_q.weight", embd, embd});
    t.push_back({b + "attn_k.weight", embd, embd_kv});
    t.push_back({b + "attn_v.weight", embd, embd_kv});
    t.push_back({b + "attn_output.weight", embd, embd});
    t.push_back({b + "ffn_norm.weight", embd, 1, true});
    t.push_back({b + "ffn_gate.weight", embd, p.n_ff});
    t.push_back({b + "ffn_up.weight", embd, p.n_ff});
    t.push_back({b + "ffn_down.weight", p.n_ff, embd});
  }
  t.push_back({"output_norm.weight", embd, 1, true});
  t.push_back({"output.weight", embd, n_vocab});
  return t;
}

// splitmix64 (Steele, Lea, Flood 2014): fast, seedable, and the same on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-range, range).
  float Uniform(float range) {
    const float unit = static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    return (2.0f * unit - 1.0f) * range;
  }

 private:
  uint64_t state_;
};

struct GgufDeleter {
  void operator()(gguf_context* ctx) const { gguf_free(ctx); }
};
struct GgmlDeleter {
  void operator()(ggml_context* ctx) const { ggml_free(ctx); }
};
using GgufPtr = std::unique_ptr<gguf_context, GgufDeleter>;
using GgmlPtr = std::unique_ptr<ggml_context, GgmlDeleter>;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

constexpr char kPrepareStage[] = "prepare";  // Error::stage of output failures

std::string VocabDir(const std::string& vocab_dir) {
  if (!vocab_dir.empty()) return vocab_dir;
  const char* env = std::getenv("PIPETTE_VOCAB_DIR");
  if (env != nullptr && *env != '\0') return env;
  return PIPETTE_MODELS_VOCAB_DIR;
}

// Loads the tokenizer.* keys of a vocabulary-only GGUF file into a fresh gguf context.
Result<GgufPtr> LoadTokenizerKeys(const std::string& vocab_path) {
  // Our reader first: it explains a missing or broken file in one line; ggml would only log.
  Result<GgufInfo> info = ReadGgufInfo(vocab_path);
  if (!info.ok()) {
    Error e = info.error().Wrap("vocabulary for the synthetic model");
    e.message += "; set the vocabulary folder (vocab_dir) or PIPETTE_VOCAB_DIR to a folder with "
                 "ggml-vocab-*.gguf";
    return e;
  }
  if (info->vocab_size == 0) {
    return MakeError(vocab_path + ": has no tokenizer.ggml.tokens; not a vocabulary file");
  }
  gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
  GgufPtr vocab(gguf_init_from_file(vocab_path.c_str(), params));
  if (!vocab) return MakeError(vocab_path + ": ggml could not read this GGUF file");
  GgufPtr keys(gguf_init_empty());
  gguf_set_kv(keys.get(), vocab.get());
  std::vector<std::string> drop;
  for (int64_t i = 0; i < gguf_get_n_kv(keys.get()); ++i) {
    const std::string key = gguf_get_key(keys.get(), i);
    if (key.rfind("tokenizer.", 0) != 0) drop.push_back(key);
  }
  for (const std::string& key : drop) gguf_remove_key(keys.get(), key.c_str());
  return keys;
}

void SetModelKeys(gguf_context* g, const SynthPreset& p, const SynthOptions& o, bool f16,
                  uint32_t n_vocab) {
  gguf_set_val_str(g, "general.architecture", "llama");
  gguf_set_val_str(g, "general.name", ("synthetic-" + p.name).c_str());
  gguf_set_val_str(g, "general.description",
                   "pipette synthetic model: random weights of a real model's shape; its "
                   "performance stands for the shape, not for any model's quality");
  gguf_set_val_u32(g, "general.file_type", f16 ? 1 : 0);  // LLAMA_FTYPE_MOSTLY_F16 / ALL_F32
  gguf_set_val_u32(g, "llama.context_length", o.n_ctx);
  gguf_set_val_u32(g, "llama.embedding_length", p.n_embd);
  gguf_set_val_u32(g, "llama.block_count", p.n_layer);
  gguf_set_val_u32(g, "llama.feed_forward_length", p.n_ff);
  gguf_set_val_u32(g, "llama.attention.head_count", p.n_head);
  gguf_set_val_u32(g, "llama.attention.head_count_kv", p.n_head_kv);
  gguf_set_val_u32(g, "llama.rope.dimension_count", p.n_embd / p.n_head);
  gguf_set_val_f32(g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  gguf_set_val_f32(g, "llama.rope.freq_base", 10000.0f);
  gguf_set_val_u32(g, "llama.vocab_size", n_vocab);
  gguf_set_val_bool(g, "pipette.synthetic", true);
  gguf_set_val_str(g, "pipette.synth.preset", p.name.c_str());
  gguf_set_val_u64(g, "pipette.synth.seed", o.seed);
  gguf_set_val_str(g, "pipette.synth.shape_of", p.shape_of.c_str());
}

// Writes bytes to a FILE, remembering the first error (errno text) and the count written.
class DataWriter {
 public:
  explicit DataWriter(FILE* f) : f_(f) {}
  bool Write(const void* data, size_t n) {
    if (!ok_) return false;
    if (std::fwrite(data, 1, n, f_) != n) {
      ok_ = false;
      error_ = std::strerror(errno);
    }
    written_ += n;
    return ok_;
  }
  bool PadTo(size_t alignment) {
    static const char kZeros[64] = {};
    while (ok_ && written_ % alignment != 0) {
      Write(kZeros, std::min<size_t>(sizeof(kZeros), alignment - written_ % alignment));
    }
    return ok_;
  }
  size_t written() const { return written_; }
  const std::string& error() const { return error_; }

 private:
  FILE* f_;
  size_t written_ = 0;
  bool ok_ = true;
  std::string error_;
};

// Generates the data of tensor number `index` chunk by chunk and writes it.
bool WriteTensorData(DataWriter& out, const TensorSpec& t, bool f16, uint64_t seed, size_t index) {
  const size_t total = static_cast<size_t>(t.ne0 * t.ne1);
  if (t.norm) {
    const std::vector<float> ones(total, 1.0f);
    return out.Write(ones.data(), total * sizeof(float));
  }
  SplitMix64 rng(seed * 0xD1342543DE82EF95ull + (index + 1) * 0x9E3779B97F4A7C15ull);
  std::vector<float> values(std::min(total, kChunkElements));
  std::vector<ggml_fp16_t> halves(f16 ? values.size() : 0);
  for (size_t done = 0; done < total;) {
    const size_t n = std::min(values.size(), total - done);
    for (size_t i = 0; i < n; ++i) values[i] = rng.Uniform(kWeightRange);
    if (f16) {
      ggml_fp32_to_fp16_row(values.data(), halves.data(), static_cast<int64_t>(n));
      if (!out.Write(halves.data(), n * sizeof(ggml_fp16_t))) return false;
    } else if (!out.Write(values.data(), n * sizeof(float))) {
      return false;
    }
    done += n;
  }
  return true;
}

Status Validate(const SynthOptions& o, const SynthPreset** preset, bool* f16) {
  *preset = FindSynthPreset(o.preset);
  if (*preset == nullptr) {
    std::string names;
    for (const SynthPreset& p : SynthPresets()) names += (names.empty() ? "" : ", ") + p.name;
    return MakeError(
        fmt::format("unknown synthetic preset '{}'; valid presets: {}", o.preset, names));
  }
  const std::string type = Upper(o.type);
  if (type != "F16" && type != "F32") {
    return MakeError(fmt::format("unknown synthetic weight type '{}'; use F16 or F32", o.type));
  }
  *f16 = type == "F16";
  if (o.n_ctx == 0) return MakeError("synthetic model context length must be at least 1 token");
  if (o.out_path.empty()) return MakeError("no output path given for the synthetic model");
  return Status::Ok();
}

// Writes header and data to the already open `f`. The caller owns `f` and the temporary file.
Status WriteModel(FILE* f, const std::string& out_path, const SynthPreset& p, const SynthOptions& o,
                  bool f16, gguf_context* tokenizer) {
  const int64_t tok_key = gguf_find_key(tokenizer, "tokenizer.ggml.tokens");
  const auto n_vocab = static_cast<uint32_t>(gguf_get_arr_n(tokenizer, tok_key));
  GgufPtr g(gguf_init_empty());
  SetModelKeys(g.get(), p, o, f16, n_vocab);
  gguf_set_kv(g.get(), tokenizer);

  const std::vector<TensorSpec> specs = LlamaTensors(p, n_vocab);
  ggml_init_params params = {ggml_tensor_overhead() * (specs.size() + 1), nullptr, true};
  GgmlPtr tensors(ggml_init(params));
  for (const TensorSpec& t : specs) {
    const ggml_type type = (t.norm || !f16) ? GGML_TYPE_F32 : GGML_TYPE_F16;
    ggml_tensor* tensor = t.norm ? ggml_new_tensor_1d(tensors.get(), type, t.ne0)
                                 : ggml_new_tensor_2d(tensors.get(), type, t.ne0, t.ne1);
    ggml_set_name(tensor, t.name.c_str());
    gguf_add_tensor(g.get(), tensor);
  }

  std::vector<char> meta(gguf_get_meta_size(g.get()));
  gguf_get_meta_data(g.get(), meta.data());
  DataWriter out(f);
  out.Write(meta.data(), meta.size());
  const size_t alignment = gguf_get_alignment(g.get());
  for (size_t i = 0; i < specs.size() && out.error().empty(); ++i) {
    const size_t expected = meta.size() + gguf_get_tensor_offset(g.get(), static_cast<int64_t>(i));
    if (out.written() != expected) {
      return MakeError(fmt::format("internal error: tensor {} at byte {}, expected {}",
                                   specs[i].name, out.written(), expected));
    }
    WriteTensorData(out, specs[i], f16, o.seed, i);
    out.PadTo(alignment);
  }
  if (!out.error().empty()) {
    return MakeError(fmt::format("{}: writing the synthetic model failed ({}); free disk space or "
                                 "choose another place",
                                 out_path, out.error()),
                     kPrepareStage);
  }
  return Status::Ok();
}

}  // namespace

const std::vector<SynthPreset>& SynthPresets() {
  static const std::vector<SynthPreset> presets = {
      {"tiny", "no real model: a minimal llama shape for tests", "llama-spm", 64, 2, 4, 4, 256},
      {"stories15m", "llama2.c stories15M", "llama-spm", 288, 6, 6, 6, 768},
      {"stories110m", "llama2.c stories110M", "llama-spm", 768, 12, 12, 12, 2048},
      {"llama-160m", "JackFram/llama-160m", "llama-spm", 768, 12, 12, 12, 3072},
      {"smollm-135m", "HuggingFaceTB/SmolLM-135M (its layers; llama-spm vocabulary)", "llama-spm",
       576, 30, 9, 3, 1536},
      {"tinyllama-1.1b", "TinyLlama/TinyLlama-1.1B", "llama-spm", 2048, 22, 32, 4, 5632},
  };
  return presets;
}

const SynthPreset* FindSynthPreset(const std::string& name) {
  for (const SynthPreset& p : SynthPresets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

uint64_t SynthParamCount(const SynthPreset& p, uint64_t n_vocab) {
  uint64_t total = 0;
  for (const TensorSpec& t : LlamaTensors(p, static_cast<int64_t>(n_vocab))) {
    total += static_cast<uint64_t>(t.ne0 * t.ne1);
  }
  return total;
}

std::string SynthVocabPath(const SynthPreset& preset, const std::string& vocab_dir) {
  return (std::filesystem::path(VocabDir(vocab_dir)) / ("ggml-vocab-" + preset.vocab + ".gguf"))
      .string();
}

Status WriteSyntheticModel(const SynthOptions& options) {
  const SynthPreset* preset = nullptr;
  bool f16 = true;
  if (Status s = Validate(options, &preset, &f16); !s.ok()) return s;
  if (Status s = CheckOutputPath(options.out_path); !s.ok()) return s;

  Result<GgufPtr> tokenizer = LoadTokenizerKeys(SynthVocabPath(*preset, options.vocab_dir));
  if (!tokenizer.ok()) return tokenizer.error();

  const std::string tmp = fmt::format("{}.tmp-{}", options.out_path, ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return MakeError(fmt::format("{}: cannot create ({}); check that the folder exists and is "
                                 "writable",
                                 options.out_path, std::strerror(errno)),
                     kPrepareStage);
  }
  Status status = WriteModel(f, options.out_path, *preset, options, f16, tokenizer->get());
  const bool flushed = std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const std::string flush_error = flushed ? "" : std::strerror(errno);
  const bool closed = std::fclose(f) == 0;
  if (status.ok() && (!flushed || !closed)) {
    status = MakeError(fmt::format("{}: writing the synthetic model failed ({}); free disk space "
                                   "or choose another place",
                                   options.out_path, flushed ? std::strerror(errno) : flush_error),
                       kPrepareStage);
  }
  if (status.ok() && std::rename(tmp.c_str(), options.out_path.c_str()) != 0) {
    status = MakeError(fmt::format("{}: cannot rename the finished file into place ({})",
                                   options.out_path, std::strerror(errno)),
                       kPrepareStage);
  }
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

}  // namespace pipette
