// Tensors and keys of synthetic models, per llama.cpp architecture (synth_tensors.h). Each
// builder mirrors the loader of the pinned tree: third_party/llama.cpp/src/models/<arch>.cpp.
#include "synth_tensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "gguf.h"

namespace pipette::synth {
namespace {

struct Builder {
  const SynthPreset& p;
  std::vector<TensorSpec> out;

  void Add(const std::string& name, std::initializer_list<int64_t> shape, Fill fill,
           int layer = -1) {
    TensorSpec t;
    t.name = layer >= 0 ? fmt::format("blk.{}.{}", layer, name) : name;
    int d = 0;
    for (int64_t n : shape) t.ne[d++] = n;
    t.n_dims = d;
    t.fill = fill;
    t.layer = layer;
    out.push_back(std::move(t));
  }

  int64_t E() const { return p.n_embd; }
  int64_t Hd() const { return p.HeadDim(); }
  int64_t Q() const { return Hd() * p.n_head; }
  int64_t Kv() const { return Hd() * p.n_head_kv; }

  // llama, granite, mistral3, qwen3(moe): q/k/v/o (+ q/k norms for qwen3).
  void Attention(int il, bool qk_norm) {
    Add("attn_q.weight", {E(), Q()}, Fill::kWeight, il);
    Add("attn_k.weight", {E(), Kv()}, Fill::kWeight, il);
    Add("attn_v.weight", {E(), Kv()}, Fill::kWeight, il);
    Add("attn_output.weight", {Q(), E()}, Fill::kWeight, il);
    if (qk_norm) {
      Add("attn_q_norm.weight", {Hd()}, Fill::kOnes, il);
      Add("attn_k_norm.weight", {Hd()}, Fill::kOnes, il);
    }
  }

  void DenseFfn(int il, int64_t ff) {
    Add("ffn_gate.weight", {E(), ff}, Fill::kWeight, il);
    Add("ffn_up.weight", {E(), ff}, Fill::kWeight, il);
    Add("ffn_down.weight", {ff, E()}, Fill::kWeight, il);
  }

  void Experts(int il, int64_t ff_exp) {
    const int64_t n = p.n_expert;
    Add("ffn_gate_inp.weight", {E(), n}, Fill::kRouter, il);
    Add("ffn_gate_exps.weight", {E(), ff_exp, n}, Fill::kWeight, il);
    Add("ffn_up_exps.weight", {E(), ff_exp, n}, Fill::kWeight, il);
    Add("ffn_down_exps.weight", {ff_exp, E(), n}, Fill::kWeight, il);
  }

  void Head() { Add("token_embd.weight", {E(), p.n_vocab}, Fill::kWeight); }
  void Tail(const std::string& norm_name) {
    Add(norm_name, {E()}, Fill::kOnes);
    if (!p.tied) Add("output.weight", {E(), p.n_vocab}, Fill::kWeight);
  }

  // llama, granite, mistral3, qwen3, qwen3moe: every layer attention + FFN (or experts).
  void Transformer(bool qk_norm) {
    Head();
    for (uint32_t i = 0; i < p.n_layer; ++i) {
      const int il = static_cast<int>(i);
      Add("attn_norm.weight", {E()}, Fill::kOnes, il);
      Attention(il, qk_norm);
      Add("ffn_norm.weight", {E()}, Fill::kOnes, il);
      if (p.n_expert > 0) {
        Experts(il, p.arch == "qwen3moe" ? p.n_ff_exp : p.n_ff);
      } else {
        DenseFfn(il, p.n_ff);
      }
    }
    Tail("output_norm.weight");
  }

  // granitehybrid: Mamba2 or attention, then a dense FFN, on every layer.
  void GraniteHybrid() {
    const int64_t d_inner = p.ssm_d_inner, ds = p.ssm_d_state, ng = p.ssm_n_group;
    const int64_t nh = p.ssm_dt_rank, conv = d_inner + 2 * ng * ds;
    Head();
    for (uint32_t i = 0; i < p.n_layer; ++i) {
      const int il = static_cast<int>(i);
      Add("attn_norm.weight", {E()}, Fill::kOnes, il);
      if (p.IsAttentionLayer(i)) {
        Attention(il, false);
      } else {
        Add("ssm_in.weight", {E(), 2 * d_inner + 2 * ng * ds + nh}, Fill::kWeight, il);
        Add("ssm_conv1d.weight", {p.ssm_d_conv, conv}, Fill::kSmall, il);
        Add("ssm_conv1d.bias", {conv}, Fill::kZeros, il);
        Add("ssm_dt.bias", {nh}, Fill::kSsmDtBias, il);
        Add("ssm_a", {1, nh}, Fill::kSsmA, il);
        Add("ssm_d", {1, nh}, Fill::kOnes, il);
        Add("ssm_norm.weight", {d_inner / ng, ng}, Fill::kOnes, il);
        Add("ssm_out.weight", {d_inner, E()}, Fill::kWeight, il);
      }
      Add("ffn_norm.weight", {E()}, Fill::kOnes, il);
      DenseFfn(il, p.n_ff);
    }
    Tail("output_norm.weight");
  }

  // lfm2, lfm2moe: short convolution or attention; dense FFN or (past the leading dense
  // layers of lfm2moe) experts with an expert-selection bias.
  void Lfm2() {
    const bool moe = p.arch == "lfm2moe";
    Head();
    for (uint32_t i = 0; i < p.n_layer; ++i) {
      const int il = static_cast<int>(i);
      Add("ffn_norm.weight", {E()}, Fill::kOnes, il);
      if (moe && i >= p.n_dense_lead) {
        Experts(il, p.n_ff_exp);
        Add("exp_probs_b.bias", {p.n_expert}, Fill::kZeros, il);
      } else {
        DenseFfn(il, p.n_ff);
      }
      Add("attn_norm.weight", {E()}, Fill::kOnes, il);
      if (p.IsAttentionLayer(i)) {
        Add("attn_q_norm.weight", {Hd()}, Fill::kOnes, il);
        Add("attn_k_norm.weight", {Hd()}, Fill::kOnes, il);
        Add("attn_q.weight", {E(), E()}, Fill::kWeight, il);
        Add("attn_k.weight", {E(), Kv()}, Fill::kWeight, il);
        Add("attn_v.weight", {E(), Kv()}, Fill::kWeight, il);
        Add("attn_output.weight", {E(), E()}, Fill::kWeight, il);
      } else {
        Add("shortconv.conv.weight", {p.shortconv_l_cache, E()}, Fill::kSmall, il);
        Add("shortconv.in_proj.weight", {E(), 3 * E()}, Fill::kWeight, il);
        Add("shortconv.out_proj.weight", {E(), E()}, Fill::kWeight, il);
      }
    }
    Tail("token_embd_norm.weight");  // llama.cpp's LLM_TENSOR_OUTPUT_NORM_LFM2
  }

  // qwen35: Gated DeltaNet or gated attention (q carries the output gate), then a dense FFN.
  void Qwen35() {
    const int64_t ds = p.ssm_d_state, key_dim = ds * p.ssm_n_group, value_dim = ds * p.ssm_dt_rank;
    const int64_t n_v = p.ssm_dt_rank, conv = 2 * key_dim + value_dim;
    Head();
    for (uint32_t i = 0; i < p.n_layer; ++i) {
      const int il = static_cast<int>(i);
      Add("attn_norm.weight", {E()}, Fill::kOnes, il);
      Add("post_attention_norm.weight", {E()}, Fill::kOnes, il);
      if (p.IsAttentionLayer(i)) {
        Add("attn_q.weight", {E(), 2 * Q()}, Fill::kWeight, il);
        Add("attn_k.weight", {E(), Kv()}, Fill::kWeight, il);
        Add("attn_v.weight", {E(), Kv()}, Fill::kWeight, il);
        Add("attn_output.weight", {Q(), E()}, Fill::kWeight, il);
        Add("attn_q_norm.weight", {Hd()}, Fill::kOnes, il);
        Add("attn_k_norm.weight", {Hd()}, Fill::kOnes, il);
      } else {
        Add("attn_qkv.weight", {E(), conv}, Fill::kWeight, il);
        Add("attn_gate.weight", {E(), value_dim}, Fill::kWeight, il);
        Add("ssm_conv1d.weight", {p.ssm_d_conv, conv}, Fill::kSmall, il);
        Add("ssm_dt.bias", {n_v}, Fill::kSsmDtBias, il);
        Add("ssm_a", {n_v}, Fill::kSsmA, il);
        Add("ssm_beta.weight", {E(), n_v}, Fill::kWeight, il);
        Add("ssm_alpha.weight", {E(), n_v}, Fill::kWeight, il);
        Add("ssm_norm.weight", {ds}, Fill::kOnes, il);
        Add("ssm_out.weight", {value_dim, E()}, Fill::kWeight, il);
      }
      DenseFfn(il, p.n_ff);
    }
    Tail("output_norm.weight");
  }
};

void SetU32(gguf_context* g, const std::string& arch, const char* key, uint32_t v) {
  gguf_set_val_u32(g, (arch + "." + key).c_str(), v);
}
void SetF32(gguf_context* g, const std::string& arch, const char* key, float v) {
  gguf_set_val_f32(g, (arch + "." + key).c_str(), v);
}

bool IsHybrid(const std::string& arch) {
  return arch == "granitehybrid" || arch == "lfm2" || arch == "lfm2moe" || arch == "qwen35";
}

// qwen35's full_attention_interval: k when the attention layers are exactly those with
// (i + 1) % k == 0; 0 when they are not such a pattern.
uint32_t AttentionInterval(const SynthPreset& p) {
  if (p.attention_layers.empty()) return 0;
  const uint32_t k = p.attention_layers.front() + 1;
  for (uint32_t i = 0; i < p.n_layer; ++i) {
    if (p.IsAttentionLayer(i) != ((i + 1) % k == 0)) return 0;
  }
  return k;
}

}  // namespace

std::vector<TensorSpec> Tensors(const SynthPreset& p, int64_t n_vocab) {
  SynthPreset shape = p;
  shape.n_vocab = static_cast<uint32_t>(n_vocab);
  Builder b{shape, {}};
  if (p.arch == "granitehybrid") {
    b.GraniteHybrid();
  } else if (p.arch == "lfm2" || p.arch == "lfm2moe") {
    b.Lfm2();
  } else if (p.arch == "qwen35") {
    b.Qwen35();
  } else {
    b.Transformer(p.arch == "qwen3" || p.arch == "qwen3moe");
  }
  return std::move(b.out);
}

void SetArchKeys(gguf_context* g, const SynthPreset& p, uint32_t n_ctx, uint32_t n_vocab) {
  const std::string& a = p.arch;
  SetU32(g, a, "context_length", n_ctx);
  SetU32(g, a, "embedding_length", p.n_embd);
  SetU32(g, a, "block_count", p.n_layer);
  SetU32(g, a, "feed_forward_length", p.n_ff);
  SetU32(g, a, "attention.head_count", p.n_head);
  if (IsHybrid(a) && a != "qwen35") {
    // A layer is recurrent iff its head_count_kv is 0 (granite-hybrid.cpp, lfm2.cpp).
    std::vector<uint32_t> kv(p.n_layer);
    for (uint32_t i = 0; i < p.n_layer; ++i) kv[i] = p.IsAttentionLayer(i) ? p.n_head_kv : 0;
    gguf_set_arr_data(g, (a + ".attention.head_count_kv").c_str(), GGUF_TYPE_UINT32, kv.data(),
                      kv.size());
  } else {
    SetU32(g, a, "attention.head_count_kv", p.n_head_kv);
  }
  SetU32(g, a, "rope.dimension_count", p.RopeDims());
  SetF32(g, a, "attention.layer_norm_rms_epsilon", p.rms_eps);
  SetF32(g, a, "rope.freq_base", p.rope_theta);
  SetU32(g, a, "vocab_size", n_vocab);
  if (p.head_dim != 0 && p.head_dim != p.n_embd / p.n_head) {
    SetU32(g, a, "attention.key_length", p.head_dim);
    SetU32(g, a, "attention.value_length", p.head_dim);
  }
  if (p.n_expert > 0) {
    SetU32(g, a, "expert_count", p.n_expert);
    SetU32(g, a, "expert_used_count", p.n_expert_used);
    if (p.n_ff_exp > 0) SetU32(g, a, "expert_feed_forward_length", p.n_ff_exp);
  }
  if (a == "lfm2moe") {
    SetU32(g, a, "leading_dense_block_count", p.n_dense_lead);
    SetU32(g, a, "expert_gating_func", 2);  // sigmoid, as the converter writes for LFM2-MoE
  }
  if (a == "lfm2" || a == "lfm2moe") SetU32(g, a, "shortconv.l_cache", p.shortconv_l_cache);
  if (a == "granite" || a == "granitehybrid") {
    SetF32(g, a, "logit_scale", p.logit_scale);
    if (p.residual_scale != 0) SetF32(g, a, "residual_scale", p.residual_scale);
    if (p.embedding_scale != 0) SetF32(g, a, "embedding_scale", p.embedding_scale);
    if (p.attention_scale != 0) SetF32(g, a, "attention.scale", p.attention_scale);
  }
  if (a == "granitehybrid" || a == "qwen35") {
    SetU32(g, a, "ssm.conv_kernel", p.ssm_d_conv);
    SetU32(g, a, "ssm.inner_size", p.ssm_d_inner);
    SetU32(g, a, "ssm.state_size", p.ssm_d_state);
    SetU32(g, a, "ssm.time_step_rank", p.ssm_dt_rank);
    SetU32(g, a, "ssm.group_count", p.ssm_n_group);
  }
  if (a == "granitehybrid") {
    // Granite-4.0-H attention has no position encoding: the converter writes false here.
    gguf_set_val_bool(g, (a + ".rope.scaling.finetuned").c_str(), false);
  }
  if (a == "qwen35") {
    SetU32(g, a, "full_attention_interval", AttentionInterval(p));
    // Multimodal RoPE sections of Qwen3.5 ([11, 11, 10, 0] for 64 rotary dimensions), scaled to
    // this shape's rotary half; for text every section sees the same position.
    const int32_t half = static_cast<int32_t>(p.RopeDims() / 2);
    const int32_t s = half * 11 / 32;
    const std::array<int32_t, 4> sections = {s, s, half - 2 * s, 0};
    gguf_set_arr_data(g, (a + ".rope.dimension_sections").c_str(), GGUF_TYPE_INT32,
                      sections.data(), sections.size());
  }
}

std::string CheckShape(const SynthPreset& p) {
  if (std::string unknown = UnknownSynthArchitecture(p.arch); !unknown.empty()) return unknown;
  auto bad = [&p](const std::string& why) {
    return fmt::format("synthetic shape '{}' ({}): {}", p.name, p.arch, why);
  };
  if (p.n_embd == 0 || p.n_layer == 0 || p.n_head == 0 || p.n_head_kv == 0 || p.n_ff == 0) {
    return bad("n_embd, n_layer, n_head, n_head_kv and n_ff must all be at least 1");
  }
  if (p.head_dim == 0 && p.n_embd % p.n_head != 0) {
    return bad("n_embd must be a multiple of n_head (or set head_dim)");
  }
  if (p.n_head % p.n_head_kv != 0) return bad("n_head must be a multiple of n_head_kv");
  if (p.RopeDims() % 2 != 0 || p.RopeDims() > p.HeadDim()) {
    return bad("rope dimensions must be even and at most the head dimension");
  }
  std::set<uint32_t> seen;
  for (uint32_t l : p.attention_layers) {
    if (l >= p.n_layer || !seen.insert(l).second) {
      return bad(fmt::format("attention layer {} is out of range or repeated", l));
    }
  }
  if (!p.attention_layers.empty() && !IsHybrid(p.arch)) {
    return bad("only hybrid architectures (granitehybrid, lfm2, lfm2moe, qwen35) have a layer "
               "pattern");
  }
  const bool moe_arch = p.arch == "lfm2moe" || p.arch == "qwen3moe";
  if (moe_arch && (p.n_expert == 0 || p.n_expert_used == 0 || p.n_ff_exp == 0)) {
    return bad("needs n_expert, n_expert_used and n_ff_exp");
  }
  if (p.n_expert_used > p.n_expert) return bad("n_expert_used exceeds n_expert");
  if (p.n_expert > 0 && !moe_arch && p.arch != "llama" && p.arch != "mistral3") {
    return bad("this architecture has no experts here");
  }
  if (p.arch == "granite" && p.logit_scale == 0) return bad("granite needs logit_scale");
  if (p.arch == "granitehybrid" || p.arch == "qwen35") {
    if (p.ssm_d_conv == 0 || p.ssm_d_inner == 0 || p.ssm_d_state == 0 || p.ssm_n_group == 0 ||
        p.ssm_dt_rank == 0) {
      return bad("needs ssm_d_conv, ssm_d_inner, ssm_d_state, ssm_n_group and ssm_dt_rank");
    }
  }
  if (p.arch == "granitehybrid") {
    if (p.ssm_d_inner != 2 * p.n_embd) {
      return bad("llama.cpp supports only ssm_d_inner == 2 * n_embd for granitehybrid");
    }
    if (p.ssm_d_inner % p.ssm_n_group != 0) return bad("ssm_d_inner must divide by ssm_n_group");
  }
  if (p.arch == "qwen35") {
    if (p.ssm_d_inner != p.ssm_d_state * p.ssm_dt_rank) {
      return bad("ssm_d_inner must equal ssm_d_state * ssm_dt_rank (the DeltaNet value width)");
    }
    if (p.ssm_dt_rank % p.ssm_n_group != 0) {
      return bad("ssm_dt_rank (value heads) must be a multiple of ssm_n_group (key heads)");
    }
    if (AttentionInterval(p) == 0) {
      return bad("qwen35 needs attention on every k-th layer ((i + 1) % k == 0)");
    }
  }
  if (p.arch == "lfm2" || p.arch == "lfm2moe") {
    if (p.shortconv_l_cache == 0) return bad("needs shortconv_l_cache");
    if (p.HeadDim() * p.n_head != p.n_embd) return bad("lfm2 needs head_dim * n_head == n_embd");
    if (p.n_dense_lead > p.n_layer) return bad("n_dense_lead exceeds n_layer");
  }
  return "";
}

}  // namespace pipette::synth
