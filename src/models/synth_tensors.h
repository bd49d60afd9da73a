// The tensors and header keys of a synthetic model, per architecture, as the pinned llama.cpp's
// loaders (third_party/llama.cpp/src/models/<arch>.cpp, load_arch_hparams/load_arch_tensors)
// read them. Internal to the models library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipette/synth.h"

struct gguf_context;

namespace pipette::synth {

// What a tensor's values are; see WriteSyntheticModel in pipette/synth.h for the ranges.
enum class Fill {
  kWeight,    // uniform +-0.02*sqrt(3); quantized in a quantized file
  kRouter,    // uniform +-0.02*sqrt(3), F32, every element drawn (expert routing stays random)
  kSmall,     // uniform +-0.02*sqrt(3), F32 (convolution kernels)
  kOnes,      // norms, ssm_d
  kZeros,     // biases, expert-selection biases
  kSsmA,      // -A, A uniform in [1, 16]
  kSsmDtBias  // softplus^-1(dt), dt log-uniform in [1e-3, 1e-1]
};

struct TensorSpec {
  std::string name;
  int64_t ne[3] = {1, 1, 1};  // ggml order
  int n_dims = 1;
  Fill fill = Fill::kWeight;
  int layer = -1;  // blk.<layer>., -1 for the model's global tensors

  int64_t Elements() const { return ne[0] * ne[1] * ne[2]; }
  int64_t Rows() const { return ne[1] * ne[2]; }
  bool Expert() const { return n_dims == 3; }
};

// Every tensor of `p` with a vocabulary of `n_vocab` tokens, in the order the file holds them
// (the converter's: token_embd, then each block, then output_norm and output).
std::vector<TensorSpec> Tensors(const SynthPreset& p, int64_t n_vocab);

// Sets the architecture's keys (general.architecture, <arch>.*) of `p` on `g`.
void SetArchKeys(gguf_context* g, const SynthPreset& p, uint32_t n_ctx, uint32_t n_vocab);

// Checks that `p` is a shape llama.cpp's loader for p.arch accepts (known architecture, the keys
// it requires, its asserts such as granitehybrid's inner_size == 2 * n_embd). "" when it is.
std::string CheckShape(const SynthPreset& p);

}  // namespace pipette::synth
