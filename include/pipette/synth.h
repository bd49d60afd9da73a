// Synthetic models: GGUF files with the SHAPE of a real model (its architecture as llama.cpp
// names it, layer pattern, widths, experts, vocabulary size), seeded random weights, and a real
// tokenizer copied from one of llama.cpp's vocabulary-only GGUF files (ggml-vocab-<name>.gguf),
// padded to the real vocabulary size as llama.cpp's converter pads. They let pipette measure speed
// and memory at any model shape and any context length without downloading weights.
//
// Architectures (llama.cpp's general.architecture, loaders in third_party/llama.cpp/src/models):
// llama (dense or Mixtral-style experts, untied output, key_length != n_embd / n_head), granite,
// granitehybrid (Mamba2 + attention), lfm2 (short convolution + attention), lfm2moe, qwen3,
// qwen3moe, qwen35 (Gated DeltaNet + attention), mistral3. The shapes and what each architecture
// needs are in ../shared/docs/reference/synthetic-architectures.md.
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

// A named shape. Tensor shapes are in ggml order (ne0 is the row length), as llama.cpp's loader
// for `arch` creates them.
struct SynthPreset {
  std::string name;      // "granite-4.0-h-350m", "tiny", ...
  std::string shape_of;  // the real model whose shape it copies, in words
  std::string source;    // where the shape comes from (a config or GGUF metadata), for --list
  // What a user may wonder about the written file, said when it is written (not stored in it:
  // a preset's file keeps its bytes); empty for most.
  std::string note;
  std::string arch;      // llama.cpp architecture: "llama", "granite", "granitehybrid", ...
  std::string vocab;     // vocabulary file: ggml-vocab-<vocab>.gguf ("llama-spm": 32000 tokens)
  uint32_t n_vocab = 0;  // the real model's vocabulary; the file's token list is padded to it
                         // with "[PAD<i>]" tokens of type UNUSED (0: the file's own size)
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;  // on the attention layers
  uint32_t n_ff = 0;       // dense feed-forward width (the effective width, after rounding)
  uint32_t head_dim = 0;   // attention key/value length; 0: n_embd / n_head
  bool tied = false;       // output projection shares token_embd (no output.weight)
  uint32_t n_ctx_train = 0;  // the real model's context (tokens): the most a file may declare
  uint32_t n_rot = 0;        // rope.dimension_count (partial rotary); 0: the head dimension
  float rope_theta = 10000.0f;
  float rms_eps = 1e-5f;
  // Hybrids (granitehybrid, lfm2, lfm2moe, qwen35): the layers with attention, 0-based; every
  // other layer has the architecture's recurrent mixer. Empty: attention on every layer.
  std::vector<uint32_t> attention_layers;
  // Mixture of experts (lfm2moe, qwen3moe, llama): experts per layer, experts used per token,
  // an expert's feed-forward width, and the leading layers that stay dense (lfm2moe).
  uint32_t n_expert = 0;
  uint32_t n_expert_used = 0;
  uint32_t n_ff_exp = 0;
  uint32_t n_dense_lead = 0;
  // State-space mixers: Mamba2 (granitehybrid) and Gated DeltaNet (qwen35), as llama.cpp's ssm.*
  // keys: conv_kernel, inner_size, state_size, group_count, time_step_rank (SSM heads).
  uint32_t ssm_d_conv = 0;
  uint32_t ssm_d_inner = 0;
  uint32_t ssm_d_state = 0;
  uint32_t ssm_n_group = 0;
  uint32_t ssm_dt_rank = 0;
  uint32_t shortconv_l_cache = 0;  // lfm2's short convolution length
  // granite's multipliers (logit_scale is required by llama.cpp's granite loader).
  float logit_scale = 0.0f;
  float residual_scale = 0.0f;
  float embedding_scale = 0.0f;
  float attention_scale = 0.0f;
  bool miniature = false;  // made by SynthMiniature: the shape's widths are not the real ones
  // The real model's chat template as it publishes it (the chat_template of its
  // tokenizer_config.json), written to the file's tokenizer.chat_template so that quality evals
  // format prompts as they would for the real model. Empty: the model has none (a base model,
  // the llama shapes of earlier versions) and the file carries none, whatever the vocabulary
  // file had.
  std::string chat_template;
  std::string chat_template_source;  // whose template it is, in words (empty without one)

  uint32_t HeadDim() const { return head_dim != 0 ? head_dim : n_embd / n_head; }
  uint32_t RopeDims() const { return n_rot != 0 ? n_rot : HeadDim(); }
  bool IsAttentionLayer(uint32_t layer) const;
};

// The built-in presets: "tiny" (for tests) and the llama shapes of earlier versions, then the
// real shapes of Granite-4.0-H-350M, Granite-4.0-350M, LFM2-350M, LFM2-1.2B (= LFM2.5-1.2B),
// LFM2-8B-A1B, Qwen3-0.6B, Qwen3-4B, Qwen3-30B-A3B, Qwen3.5-4B, Ministral-3-3B, MiniCPM5-1B,
// SmolLM2-135M and SmolLM2-360M, each with its model's chat template (none for Ministral-3-3B,
// whose template pipette does not carry yet, and for the llama shapes). The list is fixed for the
// life of the process.
const std::vector<SynthPreset>& SynthPresets();

// The architectures a synthetic model can have, as llama.cpp names them.
const std::vector<std::string>& SynthArchitectures();

// "" when `arch` is one of SynthArchitectures(); else the one-line error naming the known ones:
// "unknown synthetic architecture 'x'; known architectures: llama, granite, ...".
std::string UnknownSynthArchitecture(const std::string& arch);

// The preset named `name`, or nullptr.
const SynthPreset* FindSynthPreset(const std::string& name);

// `preset` at tiny widths (n_embd `n_embd`, a multiple of 64; a few heads, experts and SSM
// heads), keeping its architecture, layer count and pattern, tied or untied output, vocabulary
// size and context: for tests that must load and run every architecture in seconds. Named
// "<name>-mini", with `miniature` set.
SynthPreset SynthMiniature(const SynthPreset& preset, uint32_t n_embd = 64);

// Element counts of `preset` with a vocabulary of `n_vocab` tokens (after padding): total is
// what GgufInfo::params reports for the file; active is what one token's forward pass uses
// (total less the experts not routed to: (n_expert - n_expert_used) of each expert tensor).
struct SynthParams {
  uint64_t total = 0;
  uint64_t active = 0;
};
SynthParams SynthParamCount(const SynthPreset& preset, uint64_t n_vocab);

// The per-layer pattern in words, e.g. "28 Mamba2 + 4 attention (10, 13, 17, 27)",
// "16 attention", "2 dense + 22 MoE (32 experts, 4 used)" joined with "; ".
std::string SynthLayerPattern(const SynthPreset& preset);

struct SynthOptions {
  std::string preset = "stories15m";  // a SynthPresets() name
  std::string out_path;               // required; replaced if it exists
  // <arch>.context_length written to the header (tokens); 0: the preset's n_ctx_train (8192 for
  // presets without one). More than the preset's n_ctx_train is an error.
  uint32_t n_ctx = 0;
  uint64_t seed = 1;  // same seed, preset, n_ctx and type: identical file bytes
  // The file's type, as llama-quantize spells it: "F32", "F16", or, written directly without an
  // F16 intermediate, "Q8_0", "Q4_0", "Q4_K_M" (each tensor gets the type llama-quantize would
  // give it, src/llama-quant.cpp, including its fallbacks for rows that are not a multiple of
  // the block size). Tensors real conversions keep in F32 stay F32 in every type: 1-D tensors,
  // norms, ffn_gate_inp (routers), ssm_conv1d, shortconv.conv, ssm_a, ssm_d, biases.
  std::string type = "F16";
  // Directory holding ggml-vocab-*.gguf. Empty: $PIPETTE_VOCAB_DIR if set, else
  // <PIPETTE_LLAMA_PREFIX>/share/pipette of the build.
  std::string vocab_dir;
};

// Writes the synthetic model `options` names (or `shape`, for the overload). Weights: norms 1.0;
// routers (ffn_gate_inp) and F16/F32 matrices uniform in +-0.02*sqrt(3) (standard deviation
// 0.02), element by element, from a splitmix64 stream seeded by `seed` and the tensor's index.
// Quantized matrices: a pool of 256 random rows per tensor is quantized with ggml's own
// quantizer (ggml_quantize_chunk) and the tensor's rows are drawn from the pool, so a multi-GB
// model is written at disk speed. Recurrent parameters in their physical ranges, so a long
// prefill stays finite: ssm_a negative (-A, A uniform in [1, 16]), ssm_d 1, ssm_dt.bias
// softplus^-1(dt) with dt log-uniform in [1e-3, 1e-1], biases and expert-selection biases 0.
// Streams: one tensor chunk at a time is in memory (a few MiB), whatever the model size.
// Atomic: writes "<out_path>.tmp-<pid>" and renames it over `out_path`; on failure (a full disk
// included) no file is left behind, under either name.
// Errors: unknown preset (the message lists the known ones) or type (the valid ones), a context
// of more than the preset's (naming its context), a missing or unreadable vocabulary file
// (these have an empty Error::stage: bad input), or a failure to create, write or rename the
// output, such as a full disk (Error::stage "prepare"; the message names the file).
Status WriteSyntheticModel(const SynthOptions& options);
Status WriteSyntheticModel(const SynthPreset& shape, const SynthOptions& options);

// The bad-input checks of WriteSyntheticModel (shape, type, context, output path), without
// writing anything: the same errors, so a caller can report them before it announces a write.
Status CheckSyntheticModel(const SynthPreset& shape, const SynthOptions& options);

// The vocabulary file `preset` uses: <dir>/ggml-vocab-<preset.vocab>.gguf, where <dir> is
// `vocab_dir` or, when empty, the default of SynthOptions::vocab_dir. The file may not exist.
std::string SynthVocabPath(const SynthPreset& preset, const std::string& vocab_dir = "");

}  // namespace pipette
