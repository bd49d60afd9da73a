// The tensor types of a synthetic model file: which tensors stay F32 as real conversions keep
// them, and, for a quantized file, the type llama-quantize would give each tensor (the rules of
// third_party/llama.cpp/src/llama-quant.cpp, llama_tensor_get_type). Internal to the models
// library; tests compare the result with the real llama-quantize.
#pragma once

#include <string>
#include <vector>

#include "ggml.h"
#include "synth_tensors.h"

namespace pipette::synth {

// A file type pipette can write directly, as llama-quantize spells it.
struct FileType {
  std::string name;         // "F32", "F16", "Q8_0", "Q4_0", "Q4_K_M"
  int ftype = 0;            // general.file_type (LLAMA_FTYPE_*)
  ggml_type base;           // the type of most matrices
  bool quantized = false;
};

// The file type named `name` (case-insensitive), or nullptr. FileTypeNames() lists them.
const FileType* FindFileType(const std::string& name);
std::string FileTypeNames();

// True for tensors a converter keeps in F32 and llama-quantize never quantizes: fewer than two
// dimensions, names not ending in "weight", norms, expert routers (ffn_gate_inp), convolution
// kernels (ssm_conv1d, shortconv.conv).
bool KeepsF32(const TensorSpec& t);

// The type of each of `specs` (same order) in a file of type `ft` for the shape `p`.
std::vector<ggml_type> TensorTypes(const SynthPreset& p, const std::vector<TensorSpec>& specs,
                                   const FileType& ft);

}  // namespace pipette::synth
