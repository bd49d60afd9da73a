// Synthetic models: GGUF files with the SHAPE of a real architecture (llama), seeded random
// weights and a real tokenizer copied from one of llama.cpp's vocabulary-only GGUF files
// (ggml-vocab-<name>.gguf). They let pipette measure speed and memory at any model shape and any
// context length without downloading weights.
//
// NOTE: a synthetic model's numbers stand for its shape (parameter count, layer sizes, context,
// vocabulary) on a device, never for any model's quality: its outputs are noise. Such files carry
// `pipette.synthetic = true` (see GgufInfo::synthetic) and every report must say so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// A named shape. Tensor shapes follow llama.cpp's LLM_ARCH_LLAMA: token_embd {n_embd, n_vocab},
// output {n_embd, n_vocab} (untied), per block attn_q {n_embd, n_embd}, attn_k/attn_v
// {n_embd, n_embd / n_head * n_head_kv}, attn_output {n_embd, n_embd}, ffn_gate/ffn_up
// {n_embd, n_ff}, ffn_down {n_ff, n_embd}, and F32 norms {n_embd}.
struct SynthPreset {
  std::string name;      // "tiny", "stories15m", ...
  std::string shape_of;  // the real model whose shape it copies, in words
  std::string vocab;     // vocabulary file: ggml-vocab-<vocab>.gguf ("llama-spm": 32000 tokens)
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t n_ff = 0;
};

// The built-in presets, in order of size: "tiny" (for tests), "stories15m", "stories110m",
// "llama-160m", "smollm-135m", "tinyllama-1.1b". The list is fixed for the life of the process.
const std::vector<SynthPreset>& SynthPresets();

// The preset named `name`, or nullptr.
const SynthPreset* FindSynthPreset(const std::string& name);

// Element count of all tensors of `preset` with a vocabulary of `n_vocab` tokens: what
// GgufInfo::params reports for the synthetic file.
uint64_t SynthParamCount(const SynthPreset& preset, uint64_t n_vocab);

struct SynthOptions {
  std::string preset = "stories15m";  // a SynthPresets() name
  std::string out_path;               // required; replaced if it exists
  uint32_t n_ctx = 8192;              // llama.context_length written to the header (tokens)
  uint64_t seed = 1;                  // same seed, preset, n_ctx and type: identical file bytes
  std::string type = "F16";           // weight type of matrices: "F16" or "F32" (norms stay F32)
  // Directory holding ggml-vocab-*.gguf. Empty: $PIPETTE_VOCAB_DIR if set, else
  // <PIPETTE_LLAMA_PREFIX>/share/pipette of the build.
  std::string vocab_dir;
};

// Writes the synthetic model described by `options`. Weights: norms 1.0; every other weight
// uniform in +-0.02*sqrt(3) (standard deviation 0.02) from a splitmix64 stream seeded by `seed` and
// the tensor's index. Streams: one tensor chunk at a time is in memory (a few MiB), whatever the
// model size. Atomic: writes "<out_path>.tmp-<pid>" and renames it over `out_path`; on failure no
// file is left behind.
// Errors: unknown preset or type (the message lists the valid ones), n_ctx of 0, a missing or
// unreadable vocabulary file (these have an empty Error::stage: bad input), or a failure to
// create, write or rename the output, such as a full disk (Error::stage "prepare"; the message
// names the file).
Status WriteSyntheticModel(const SynthOptions& options);

// The vocabulary file `preset` uses: <dir>/ggml-vocab-<preset.vocab>.gguf, where <dir> is
// `vocab_dir` or, when empty, the default of SynthOptions::vocab_dir. The file may not exist.
std::string SynthVocabPath(const SynthPreset& preset, const std::string& vocab_dir = "");

}  // namespace pipette
