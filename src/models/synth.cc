// Synthetic GGUF models (pipette/synth.h). The header is built with ggml's gguf API (tokenizer
// keys copied from a vocabulary-only GGUF file and padded to the real vocabulary); tensor data is
// generated and written one chunk at a time after it, with GGUF's alignment padding. Tensors and
// keys per architecture: synth_tensors.cc; tensor types: synth_types.cc.
#include "pipette/synth.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ggml.h"
#include "gguf.h"
#include "models/gguf_ptr.h"
#include "models/llama_tools.h"
#include "pipette/gguf.h"
#include "platform/output_path.h"
#include "synth_tensors.h"
#include "synth_types.h"

#ifndef PIPETTE_MODELS_VOCAB_DIR
#define PIPETTE_MODELS_VOCAB_DIR ""
#endif

namespace pipette {
namespace {

using synth::Fill;
using synth::TensorSpec;

constexpr float kWeightRange = 0.0346410162f;  // 0.02 * sqrt(3): uniform with stddev 0.02
constexpr size_t kChunkElements = size_t{1} << 20;
constexpr int64_t kPoolRows = 256;             // distinct quantized rows per tensor
constexpr size_t kWriteBytes = size_t{4} << 20;
constexpr uint32_t kDefaultContext = 8192;     // for shapes without a real model's context
constexpr int32_t kTokenTypeUnused = 5;        // llama_token_type LLAMA_TOKEN_TYPE_UNUSED

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
  float Unit() { return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  // Uniform in [-range, range).
  float Uniform(float range) { return (2.0f * Unit() - 1.0f) * range; }

 private:
  uint64_t state_;
};

float Value(Fill fill, SplitMix64& rng) {
  switch (fill) {
    case Fill::kOnes: return 1.0f;
    case Fill::kZeros: return 0.0f;
    case Fill::kSsmA: return -(1.0f + 15.0f * rng.Unit());  // GGUF stores -exp(A_log)
    case Fill::kSsmDtBias: {
      const double dt = std::exp(std::log(1e-3) + rng.Unit() * (std::log(1e-1) - std::log(1e-3)));
      return static_cast<float>(dt + std::log(-std::expm1(-dt)));  // softplus^-1(dt)
    }
    default: return rng.Uniform(kWeightRange);
  }
}

std::string VocabDir(const std::string& vocab_dir) {
  if (!vocab_dir.empty()) return vocab_dir;
  const char* env = std::getenv("PIPETTE_VOCAB_DIR");
  if (env != nullptr && *env != '\0') return env;
  return PIPETTE_MODELS_VOCAB_DIR;
}

// Appends "[PAD<i>]" tokens of type UNUSED (score -1000) up to `n_vocab`, as llama.cpp's
// converter does when a model's vocabulary is larger than its tokenizer's list
// (conversion/base.py). UNUSED tokens stay out of the special-token cache, so tokenizing is
// unchanged; the embedding and output get the real model's size.
Status PadVocabulary(gguf_context* keys, uint32_t n_vocab, const std::string& vocab_path) {
  const int64_t tok = gguf_find_key(keys, "tokenizer.ggml.tokens");
  const size_t have = gguf_get_arr_n(keys, tok);
  if (n_vocab == 0 || n_vocab == have) return Status::Ok();
  if (n_vocab < have) {
    return MakeError(fmt::format("{}: has {} tokens, more than the shape's vocabulary of {}",
                                 vocab_path, have, n_vocab));
  }
  std::vector<std::string> tokens;
  tokens.reserve(n_vocab);
  for (size_t i = 0; i < have; ++i) tokens.emplace_back(gguf_get_arr_str(keys, tok, i));
  for (size_t i = have; i < n_vocab; ++i) tokens.push_back(fmt::format("[PAD{}]", i));
  std::vector<const char*> ptrs;
  ptrs.reserve(tokens.size());
  for (const std::string& t : tokens) ptrs.push_back(t.c_str());
  gguf_set_arr_str(keys, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());

  if (const int64_t k = gguf_find_key(keys, "tokenizer.ggml.token_type"); k >= 0) {
    const auto* old = static_cast<const int32_t*>(gguf_get_arr_data(keys, k));
    std::vector<int32_t> types(old, old + gguf_get_arr_n(keys, k));
    types.resize(n_vocab, kTokenTypeUnused);
    gguf_set_arr_data(keys, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(),
                      types.size());
  }
  if (const int64_t k = gguf_find_key(keys, "tokenizer.ggml.scores"); k >= 0) {
    const auto* old = static_cast<const float*>(gguf_get_arr_data(keys, k));
    std::vector<float> scores(old, old + gguf_get_arr_n(keys, k));
    scores.resize(n_vocab, -1000.0f);
    gguf_set_arr_data(keys, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores.data(),
                      scores.size());
  }
  return Status::Ok();
}

// Loads the tokenizer.* keys of a vocabulary-only GGUF file into a fresh gguf context, less its
// chat templates.
Result<GgufPtr> LoadTokenizerKeys(const std::string& vocab_path, uint32_t n_vocab) {
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
    // A vocabulary file's chat template is its source model's, not the shape's: the preset's own
    // (or none) is written instead.
    if (key.rfind("tokenizer.", 0) != 0 || key.rfind("tokenizer.chat_template", 0) == 0) {
      drop.push_back(key);
    }
  }
  for (const std::string& key : drop) gguf_remove_key(keys.get(), key.c_str());
  if (Status s = PadVocabulary(keys.get(), n_vocab, vocab_path); !s.ok()) return s.error();
  return keys;
}

void SetModelKeys(gguf_context* g, const SynthPreset& p, const SynthOptions& o,
                  const synth::FileType& ft, uint32_t n_ctx, uint32_t n_vocab) {
  gguf_set_val_str(g, "general.architecture", p.arch.c_str());
  gguf_set_val_str(g, "general.name", ("synthetic-" + p.name).c_str());
  gguf_set_val_str(g, "general.description",
                   "pipette synthetic model: random weights of a real model's shape; its "
                   "performance stands for the shape, not for any model's quality");
  gguf_set_val_u32(g, "general.file_type", static_cast<uint32_t>(ft.ftype));
  if (ft.quantized) gguf_set_val_u32(g, "general.quantization_version", GGML_QNT_VERSION);
  synth::SetArchKeys(g, p, n_ctx, n_vocab);
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

// F32 or F16 data, element by element.
bool WriteFloats(DataWriter& out, const TensorSpec& t, bool f16, SplitMix64& rng) {
  const size_t total = static_cast<size_t>(t.Elements());
  std::vector<float> values(std::min(total, kChunkElements));
  std::vector<ggml_fp16_t> halves(f16 ? values.size() : 0);
  for (size_t done = 0; done < total;) {
    const size_t n = std::min(values.size(), total - done);
    for (size_t i = 0; i < n; ++i) values[i] = Value(t.fill, rng);
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

// Quantized data: up to kPoolRows random rows quantized by ggml, the tensor's rows drawn from
// them (all distinct when the tensor has no more rows than the pool).
bool WriteQuantized(DataWriter& out, const TensorSpec& t, ggml_type type, SplitMix64& rng) {
  const int64_t n_per_row = t.ne[0], rows = t.Rows();
  const int64_t pool_rows = std::min(rows, kPoolRows);
  std::vector<float> src(static_cast<size_t>(pool_rows * n_per_row));
  for (float& v : src) v = Value(t.fill, rng);
  const size_t row_size = ggml_row_size(type, n_per_row);
  std::vector<uint8_t> pool(row_size * static_cast<size_t>(pool_rows));
  ggml_quantize_chunk(type, src.data(), pool.data(), 0, pool_rows, n_per_row, nullptr);
  std::vector<uint8_t> buf;
  buf.reserve(kWriteBytes + row_size);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = rows <= kPoolRows ? r : static_cast<int64_t>(rng.Next() % kPoolRows);
    const uint8_t* row = pool.data() + static_cast<size_t>(k) * row_size;
    buf.insert(buf.end(), row, row + row_size);
    if (buf.size() >= kWriteBytes) {
      if (!out.Write(buf.data(), buf.size())) return false;
      buf.clear();
    }
  }
  return out.Write(buf.data(), buf.size());
}

bool WriteTensorData(DataWriter& out, const TensorSpec& t, ggml_type type, uint64_t seed,
                     size_t index) {
  SplitMix64 rng(seed * 0xD1342543DE82EF95ull + (index + 1) * 0x9E3779B97F4A7C15ull);
  if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16) {
    return WriteFloats(out, t, type == GGML_TYPE_F16, rng);
  }
  return WriteQuantized(out, t, type, rng);
}

struct Resolved {
  const synth::FileType* type = nullptr;
  uint32_t n_ctx = 0;
};

Result<Resolved> Validate(const SynthPreset& p, const SynthOptions& o) {
  if (std::string why = synth::CheckShape(p); !why.empty()) return MakeError(why);
  Resolved r;
  r.type = synth::FindFileType(o.type);
  if (r.type == nullptr) {
    return MakeError(fmt::format("unknown synthetic model type '{}'; valid types: {}", o.type,
                                 synth::FileTypeNames()));
  }
  r.n_ctx = o.n_ctx != 0 ? o.n_ctx : (p.n_ctx_train != 0 ? p.n_ctx_train : kDefaultContext);
  if (p.n_ctx_train != 0 && r.n_ctx > p.n_ctx_train) {
    return MakeError(fmt::format("a context of {} tokens was asked for, but {} ({}) has a context "
                                 "of {} tokens; ask for at most that",
                                 r.n_ctx, p.name, p.shape_of, p.n_ctx_train));
  }
  if (o.out_path.empty()) return MakeError("no output path given for the synthetic model");
  return r;
}

// Writes header and data to the already open `f`. The caller owns `f` and the temporary file.
Status WriteModel(FILE* f, const std::string& out_path, const SynthPreset& p, const SynthOptions& o,
                  const Resolved& r, gguf_context* tokenizer) {
  const int64_t tok_key = gguf_find_key(tokenizer, "tokenizer.ggml.tokens");
  const auto n_vocab = static_cast<uint32_t>(gguf_get_arr_n(tokenizer, tok_key));
  GgufPtr g(gguf_init_empty());
  SetModelKeys(g.get(), p, o, *r.type, r.n_ctx, n_vocab);
  gguf_set_kv(g.get(), tokenizer);
  if (!p.chat_template.empty()) {
    gguf_set_val_str(g.get(), "tokenizer.chat_template", p.chat_template.c_str());
  }

  const std::vector<TensorSpec> specs = synth::Tensors(p, n_vocab);
  const std::vector<ggml_type> types = synth::TensorTypes(p, specs, *r.type);
  ggml_init_params params = {ggml_tensor_overhead() * (specs.size() + 1), nullptr, true};
  GgmlPtr tensors(ggml_init(params));
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    ggml_tensor* tensor = ggml_new_tensor(tensors.get(), types[i], t.n_dims, t.ne);
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
    WriteTensorData(out, specs[i], types[i], o.seed, i);
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

SynthParams SynthParamCount(const SynthPreset& p, uint64_t n_vocab) {
  SynthParams n;
  for (const TensorSpec& t : synth::Tensors(p, static_cast<int64_t>(n_vocab))) {
    const auto e = static_cast<uint64_t>(t.Elements());
    n.total += e;
    n.active += t.Expert() ? e / p.n_expert * p.n_expert_used : e;
  }
  return n;
}

std::string SynthVocabPath(const SynthPreset& preset, const std::string& vocab_dir) {
  return (std::filesystem::path(VocabDir(vocab_dir)) / ("ggml-vocab-" + preset.vocab + ".gguf"))
      .string();
}

Status WriteSyntheticModel(const SynthOptions& options) {
  const SynthPreset* preset = FindSynthPreset(options.preset);
  if (preset == nullptr) {
    std::string names;
    for (const SynthPreset& p : SynthPresets()) names += (names.empty() ? "" : ", ") + p.name;
    return MakeError(
        fmt::format("unknown synthetic preset '{}'; valid presets: {}", options.preset, names));
  }
  return WriteSyntheticModel(*preset, options);
}

Status CheckSyntheticModel(const SynthPreset& shape, const SynthOptions& options) {
  Result<Resolved> resolved = Validate(shape, options);
  if (!resolved.ok()) return resolved.error();
  return CheckOutputPath(options.out_path);
}

Status WriteSyntheticModel(const SynthPreset& shape, const SynthOptions& options) {
  Result<Resolved> resolved = Validate(shape, options);
  if (!resolved.ok()) return resolved.error();
  if (Status s = CheckOutputPath(options.out_path); !s.ok()) return s;

  const std::string vocab_path = SynthVocabPath(shape, options.vocab_dir);
  Result<GgufPtr> tokenizer = LoadTokenizerKeys(vocab_path, shape.n_vocab);
  if (!tokenizer.ok()) return tokenizer.error();

  const std::string tmp = fmt::format("{}.tmp-{}", options.out_path, ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return MakeError(fmt::format("{}: cannot create ({}); check that the folder exists and is "
                                 "writable",
                                 options.out_path, std::strerror(errno)),
                     kPrepareStage);
  }
  Status status = WriteModel(f, options.out_path, shape, options, *resolved, tokenizer->get());
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
