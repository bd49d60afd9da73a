// Per-tensor types of synthetic model files (synth_types.h). The quantized rules follow
// third_party/llama.cpp/src/llama-quant.cpp (llama_tensor_get_type, _impl, tensor_type_fallback,
// init_quantize_state_counters) for the file types written here; line references are to that
// file in the pinned tree.
#include "synth_types.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace pipette::synth {
namespace {

const std::vector<FileType>& FileTypes() {
  static const std::vector<FileType> types = {
      {"F32", 0, GGML_TYPE_F32, false},    {"F16", 1, GGML_TYPE_F16, false},
      {"Q8_0", 7, GGML_TYPE_Q8_0, true},   {"Q4_0", 2, GGML_TYPE_Q4_0, true},
      {"Q4_K_M", 15, GGML_TYPE_Q4_K, true},
  };
  return types;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool Has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// tensor_get_category (lines 119-155), for the names synthetic models have.
enum class Category { kOutput, kTokenEmbd, kAttnV, kAttnK, kAttnQ, kAttnOut, kUp, kGate, kDown, kOther };

Category CategoryOf(const std::string& name) {
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight") return Category::kTokenEmbd;
  // attn_qkv and attn_v are both "attention-v-like" (category_is_attn_v).
  if (Has(name, "attn_qkv.weight") || Has(name, "attn_v.weight")) return Category::kAttnV;
  if (Has(name, "attn_k.weight")) return Category::kAttnK;
  if (Has(name, "attn_q.weight")) return Category::kAttnQ;
  if (Has(name, "attn_output.weight")) return Category::kAttnOut;
  if (Has(name, "ffn_up")) return Category::kUp;
  if (Has(name, "ffn_gate")) return Category::kGate;
  if (Has(name, "ffn_down")) return Category::kDown;
  return Category::kOther;
}

// use_more_bits (line 434): the first and last eighth of the layers, and every third between.
bool UseMoreBits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// tensor_type_fallback (lines 372-424) for the types chosen here.
ggml_type Fallback(int64_t ncols, ggml_type t) {
  if (ncols % ggml_blck_size(t) == 0) return t;
  ggml_type f = t;
  switch (t) {
    case GGML_TYPE_Q4_K: f = GGML_TYPE_Q5_0; break;
    case GGML_TYPE_Q5_K: f = GGML_TYPE_Q5_1; break;
    case GGML_TYPE_Q6_K: f = GGML_TYPE_Q8_0; break;
    default: break;  // 32-element blocks (Q4_0, Q8_0): nothing smaller; F16 below
  }
  return ncols % ggml_blck_size(f) == 0 ? f : GGML_TYPE_F16;
}

}  // namespace

const FileType* FindFileType(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const FileType& t : FileTypes()) {
    if (t.name == upper) return &t;
  }
  return nullptr;
}

std::string FileTypeNames() {
  std::string names;
  for (const FileType& t : FileTypes()) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

bool KeepsF32(const TensorSpec& t) {
  // tensor_allows_quantization (lines 287-370); the converter keeps the same tensors in F32.
  const std::string& n = t.name;
  return t.n_dims < 2 || !EndsWith(n, "weight") || Has(n, "_norm.weight") ||
         Has(n, "ffn_gate_inp.weight") || Has(n, "ssm_conv1d") || Has(n, "shortconv.conv.weight");
}

std::vector<ggml_type> TensorTypes(const SynthPreset& p, const std::vector<TensorSpec>& specs,
                                   const FileType& ft) {
  std::vector<ggml_type> types(specs.size(), ft.base);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (KeepsF32(specs[i])) types[i] = GGML_TYPE_F32;
  }
  if (!ft.quantized) return types;

  // llama-quantize walks the tensors ordered by layer, then name (weight_name_comparer in
  // llama-model-loader.h); its counters (i_attention_wv, i_ffn_down) count in that order.
  std::vector<size_t> order(specs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&specs](size_t a, size_t b) {
    if (specs[a].layer != specs[b].layer) return specs[a].layer < specs[b].layer;
    return specs[a].name < specs[b].name;
  });
  int n_attention_wv = 0;
  bool tied = true;
  for (const TensorSpec& t : specs) {
    const Category c = CategoryOf(t.name);
    if (c == Category::kAttnV) ++n_attention_wv;
    if (c == Category::kOutput) tied = false;
  }
  const int n_layer = static_cast<int>(p.n_layer);
  const bool q4_k_m = ft.name == "Q4_K_M";
  int i_attention_wv = 0, i_ffn_down = 0;
  for (size_t i : order) {
    const TensorSpec& t = specs[i];
    if (KeepsF32(t)) continue;
    ggml_type type = ft.base;
    const Category c = CategoryOf(t.name);
    if (c == Category::kOutput || (tied && c == Category::kTokenEmbd)) {
      // Lines 456-477: the output projection (or the tied embedding) gets more bits.
      if (t.ne[0] % ggml_blck_size(type) != 0) {
        type = GGML_TYPE_Q8_0;
      } else if (type != GGML_TYPE_Q8_0) {
        type = GGML_TYPE_Q6_K;
      }
    } else if (c == Category::kAttnV) {  // lines 533-570
      if (q4_k_m && UseMoreBits(i_attention_wv, n_attention_wv)) type = GGML_TYPE_Q6_K;
      if (p.n_expert == 8) type = GGML_TYPE_Q8_0;
      ++i_attention_wv;
    } else if (c == Category::kAttnK) {  // lines 571-576
      if (p.n_expert == 8) type = GGML_TYPE_Q8_0;
    } else if (c == Category::kDown) {  // lines 590-634
      // With experts the layer comes from the name (layer_info), else from the counter.
      const int i_layer = p.n_expert > 1 ? t.layer : i_ffn_down;
      if (q4_k_m && UseMoreBits(i_layer, n_layer)) type = GGML_TYPE_Q6_K;
      ++i_ffn_down;
    } else if (c == Category::kAttnOut) {  // lines 635-650
      if (q4_k_m && p.n_expert == 8) type = GGML_TYPE_Q5_K;
    }
    types[i] = Fallback(t.ne[0], type);
  }
  return types;
}

}  // namespace pipette::synth
