// The built-in synthetic shapes (pipette/synth.h). Real shapes and their sources are collected in
// ../shared/docs/reference/synthetic-architectures.md section 2; "config" means the model's
// Hugging Face config.json (a third-party copy where the vendor's page was not available), "GGUF"
// the metadata of a published GGUF file.
#include <fmt/format.h>

#include <algorithm>

#include "models/synth_chat_templates.h"
#include "pipette/synth.h"

namespace pipette {
namespace {

SynthPreset Llama(std::string name, std::string shape_of, uint32_t embd, uint32_t layers,
                  uint32_t heads, uint32_t kv, uint32_t ff) {
  SynthPreset p;
  p.name = std::move(name);
  p.shape_of = std::move(shape_of);
  p.source = "llama2.c / Hugging Face config";
  p.arch = "llama";
  p.vocab = "llama-spm";
  p.n_embd = embd;
  p.n_layer = layers;
  p.n_head = heads;
  p.n_head_kv = kv;
  p.n_ff = ff;
  return p;
}

// llama2.c ties the output matrix to the token embedding; llama.cpp's llama2.c converter writes
// it apart, as these presets do, so their files count 32000 x n_embd parameters more.
SynthPreset TiedInLlama2c(SynthPreset p, const char* llama2c_params) {
  p.note = "params: the output matrix (32000 x " + std::to_string(p.n_embd) +
           ") is stored apart from the token embedding, which llama2.c ties it to (" +
           llama2c_params + " parameters there); llama.cpp's llama2.c converter stores it apart "
           "too";
  return p;
}

std::vector<uint32_t> EveryKth(uint32_t n_layer, uint32_t k) {
  std::vector<uint32_t> layers;
  for (uint32_t i = k - 1; i < n_layer; i += k) layers.push_back(i);
  return layers;
}

std::vector<SynthPreset> Build() {
  std::vector<SynthPreset> v = {
      Llama("tiny", "no real model: a minimal llama shape for tests", 64, 2, 4, 4, 256),
      TiedInLlama2c(Llama("stories15m", "llama2.c stories15M", 288, 6, 6, 6, 768), "15.2M"),
      TiedInLlama2c(Llama("stories110m", "llama2.c stories110M", 768, 12, 12, 12, 2048), "110M"),
      Llama("llama-160m", "JackFram/llama-160m", 768, 12, 12, 12, 3072),
      Llama("smollm-135m", "HuggingFaceTB/SmolLM-135M (its layers; llama-spm vocabulary)", 576,
            30, 9, 3, 1536),
      Llama("tinyllama-1.1b", "TinyLlama/TinyLlama-1.1B", 2048, 22, 32, 4, 5632),
  };

  SynthPreset p;
  p = {};
  p.name = "granite-4.0-h-350m";
  p.shape_of = "ibm-granite/granite-4.0-h-350m";
  p.chat_template = synth::kGranite40;
  p.chat_template_source = "the Granite 4.0 family's (llama.cpp models/templates)";
  p.source = "GGUF (Ollama ibm/granite4:350m-h); layer types from a config copy";
  p.arch = "granitehybrid";
  p.vocab = "aquila";
  p.n_vocab = 100352;
  p.n_embd = 768, p.n_layer = 32, p.n_head = 12, p.n_head_kv = 4, p.n_ff = 2048;
  p.tied = true, p.n_ctx_train = 32768, p.rms_eps = 1e-5f;
  p.attention_layers = {10, 13, 17, 27};
  p.ssm_d_conv = 4, p.ssm_d_inner = 1536, p.ssm_d_state = 128, p.ssm_n_group = 1,
  p.ssm_dt_rank = 48;
  p.logit_scale = 3, p.residual_scale = 0.246f, p.embedding_scale = 12,
  p.attention_scale = 0.015625f;
  v.push_back(p);

  p = {};
  p.name = "granite-4.0-350m";
  p.shape_of = "ibm-granite/granite-4.0-350m";
  p.chat_template = synth::kGranite40;
  p.chat_template_source = "the Granite 4.0 family's (llama.cpp models/templates)";
  p.source = "GGUF (Ollama ibm/granite4:350m)";
  p.arch = "granite";
  p.vocab = "aquila";
  p.n_vocab = 100352;
  p.n_embd = 1024, p.n_layer = 28, p.n_head = 16, p.n_head_kv = 4, p.n_ff = 2048;
  p.tied = true, p.n_ctx_train = 32768, p.rope_theta = 1e7f, p.rms_eps = 1e-5f;
  p.logit_scale = 4, p.residual_scale = 0.263f, p.embedding_scale = 12,
  p.attention_scale = 0.015625f;
  v.push_back(p);

  SynthPreset lfm2;
  lfm2.arch = "lfm2";
  lfm2.vocab = "falcon";
  lfm2.n_vocab = 65536;
  lfm2.n_layer = 16, lfm2.n_head_kv = 8;
  lfm2.tied = true, lfm2.n_ctx_train = 128000, lfm2.rope_theta = 1e6f, lfm2.rms_eps = 1e-5f;
  lfm2.attention_layers = {2, 5, 8, 10, 12, 14};
  lfm2.shortconv_l_cache = 3;
  lfm2.source = "config copies (layer types, widths); llama.cpp's lfm2 size switch";
  lfm2.chat_template = synth::kLfm2;
  lfm2.chat_template_source = "the LFM2 family's, as LiquidAI/LFM2-8B-A1B publishes it";

  p = lfm2;
  p.name = "lfm2-350m";
  p.shape_of = "LiquidAI/LFM2-350M";
  p.n_embd = 1024, p.n_head = 16, p.n_ff = 4608;
  v.push_back(p);

  p = lfm2;
  p.name = "lfm2-1.2b";
  p.shape_of = "LiquidAI/LFM2-1.2B (the shape of LFM2.5-1.2B)";
  p.n_embd = 2048, p.n_head = 32, p.n_ff = 8192;
  v.push_back(p);

  p = lfm2;
  p.name = "lfm2-8b-a1b";
  p.shape_of = "LiquidAI/LFM2-8B-A1B (stand-in for LFM2.5-8B-A1B)";
  p.source = "config copy of a fine-tune; llama.cpp's lfm2moe size switch";
  p.arch = "lfm2moe";
  p.n_embd = 2048, p.n_layer = 24, p.n_head = 32, p.n_ff = 7168;
  p.attention_layers = {2, 6, 10, 14, 18, 21};
  p.n_expert = 32, p.n_expert_used = 4, p.n_ff_exp = 1792, p.n_dense_lead = 2;
  v.push_back(p);

  SynthPreset qwen3;
  qwen3.arch = "qwen3";
  qwen3.vocab = "qwen2";
  qwen3.n_vocab = 151936;
  qwen3.head_dim = 128;
  qwen3.tied = true, qwen3.n_ctx_train = 40960, qwen3.rope_theta = 1e6f, qwen3.rms_eps = 1e-6f;
  qwen3.source = "config copies; llama.cpp's qwen3 size switch";
  qwen3.chat_template = synth::kQwen3;
  qwen3.chat_template_source = "the Qwen3 release's, as Qwen/Qwen3-0.6B publishes it";

  p = qwen3;
  p.name = "qwen3-0.6b";
  p.shape_of = "Qwen/Qwen3-0.6B";
  p.n_embd = 1024, p.n_layer = 28, p.n_head = 16, p.n_head_kv = 8, p.n_ff = 3072;
  v.push_back(p);

  p = qwen3;
  p.name = "qwen3-4b";
  p.shape_of = "Qwen/Qwen3-4B";
  p.n_embd = 2560, p.n_layer = 36, p.n_head = 32, p.n_head_kv = 8, p.n_ff = 9728;
  v.push_back(p);

  p = qwen3;
  p.name = "qwen3-30b-a3b";
  p.shape_of = "Qwen/Qwen3-30B-A3B";
  p.source = "config copies in public test files; llama.cpp's qwen3moe size switch";
  p.arch = "qwen3moe";
  p.n_embd = 2048, p.n_layer = 48, p.n_head = 32, p.n_head_kv = 4, p.n_ff = 6144;
  p.n_expert = 128, p.n_expert_used = 8, p.n_ff_exp = 768;
  p.tied = false;
  v.push_back(p);

  p = {};
  p.name = "qwen3.5-4b";
  p.shape_of = "Qwen/Qwen3.5-4B";
  p.chat_template = synth::kQwen35;
  p.chat_template_source = "Qwen/Qwen3.5-4B's";
  p.source = "GGUF (Ollama, a Qwen3.5-4B Q4_K_M); vocabulary size from config copies; tied "
             "embeddings inferred from the file size";
  p.arch = "qwen35";
  p.vocab = "qwen35";
  p.n_vocab = 248320;
  p.n_embd = 2560, p.n_layer = 32, p.n_head = 16, p.n_head_kv = 4, p.n_ff = 9216;
  p.head_dim = 256, p.n_rot = 64;
  p.tied = true, p.n_ctx_train = 262144, p.rope_theta = 1e7f, p.rms_eps = 1e-6f;
  p.attention_layers = EveryKth(32, 4);
  p.ssm_d_conv = 4, p.ssm_d_inner = 4096, p.ssm_d_state = 128, p.ssm_n_group = 16,
  p.ssm_dt_rank = 32;
  v.push_back(p);

  p = {};
  p.name = "ministral-3-3b";
  p.shape_of = "mistralai/Ministral-3-3B";
  p.source = "config copy (Ministral3ForCausalLM); llama.cpp's mistral3 size switch";
  p.arch = "mistral3";
  p.vocab = "llama-bpe";
  p.n_vocab = 131072;
  p.n_embd = 3072, p.n_layer = 26, p.n_head = 32, p.n_head_kv = 8, p.n_ff = 9216;
  p.head_dim = 128;
  p.tied = true, p.n_ctx_train = 262144, p.rope_theta = 1e6f, p.rms_eps = 1e-5f;
  v.push_back(p);

  p = {};
  p.name = "minicpm5-1b";
  p.shape_of = "openbmb/MiniCPM5-1B";
  p.chat_template = synth::kMiniCpm5;
  p.chat_template_source = "openbmb/MiniCPM5-1B's";
  p.source = "config copies; parameter counts of litert-community/MiniCPM5-1B";
  p.arch = "llama";
  p.vocab = "llama-bpe";
  p.n_vocab = 130560;
  p.n_embd = 1536, p.n_layer = 24, p.n_head = 16, p.n_head_kv = 2, p.n_ff = 4608;
  p.head_dim = 128;
  p.tied = false, p.n_ctx_train = 131072, p.rope_theta = 5e6f, p.rms_eps = 1e-6f;
  v.push_back(p);

  SynthPreset smol;
  smol.arch = "llama";
  smol.vocab = "starcoder";
  smol.n_vocab = 49152;
  smol.tied = true, smol.n_ctx_train = 8192, smol.rope_theta = 1e5f, smol.rms_eps = 1e-5f;
  smol.source = "config copies";
  // The base models' shape; the template is their instruct models' (same shape and vocabulary).
  smol.chat_template = synth::kSmolLm2;
  smol.chat_template_source = "HuggingFaceTB/SmolLM2-135M-Instruct's (and -360M-Instruct's)";

  p = smol;
  p.name = "smollm2-135m";
  p.shape_of = "HuggingFaceTB/SmolLM2-135M";
  p.n_embd = 576, p.n_layer = 30, p.n_head = 9, p.n_head_kv = 3, p.n_ff = 1536;
  v.push_back(p);

  p = smol;
  p.name = "smollm2-360m";
  p.shape_of = "HuggingFaceTB/SmolLM2-360M";
  p.n_embd = 960, p.n_layer = 32, p.n_head = 15, p.n_head_kv = 5, p.n_ff = 2560;
  v.push_back(p);
  return v;
}

}  // namespace

bool SynthPreset::IsAttentionLayer(uint32_t layer) const {
  return attention_layers.empty() ||
         std::find(attention_layers.begin(), attention_layers.end(), layer) !=
             attention_layers.end();
}

const std::vector<SynthPreset>& SynthPresets() {
  static const std::vector<SynthPreset> presets = Build();
  return presets;
}

const std::vector<std::string>& SynthArchitectures() {
  static const std::vector<std::string> archs = {
      "llama", "granite", "granitehybrid", "lfm2", "lfm2moe",
      "qwen3", "qwen3moe", "qwen35",      "mistral3"};
  return archs;
}

std::string UnknownSynthArchitecture(const std::string& arch) {
  const std::vector<std::string>& archs = SynthArchitectures();
  if (std::find(archs.begin(), archs.end(), arch) != archs.end()) return "";
  std::string known;
  for (const std::string& a : archs) known += (known.empty() ? "" : ", ") + a;
  return fmt::format("unknown synthetic architecture '{}'; known architectures: {}", arch, known);
}

const SynthPreset* FindSynthPreset(const std::string& name) {
  for (const SynthPreset& p : SynthPresets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

SynthPreset SynthMiniature(const SynthPreset& preset, uint32_t n_embd) {
  SynthPreset m = preset;
  m.name = preset.name + "-mini";
  m.shape_of = preset.shape_of + ", at tiny widths";
  m.miniature = true;
  m.n_embd = n_embd;
  m.n_head = 4;
  m.n_head_kv = preset.n_head_kv == preset.n_head ? 4 : 2;
  // Keep "key length != n_embd / n_head" where the real shape has it (lfm2 cannot).
  m.head_dim = preset.head_dim != 0 && preset.head_dim != preset.n_embd / preset.n_head
                   ? 2 * (n_embd / m.n_head)
                   : 0;
  if (preset.n_rot != 0) {
    m.n_rot = std::max<uint32_t>(2, preset.n_rot * m.HeadDim() / preset.HeadDim() / 2 * 2);
  }
  m.n_ff = 2 * n_embd;
  if (preset.n_expert > 0) {
    m.n_expert = std::min<uint32_t>(preset.n_expert, 8);
    m.n_expert_used = std::min(preset.n_expert_used, m.n_expert / 2);
    if (preset.n_ff_exp > 0) m.n_ff_exp = n_embd / 2;
  }
  if (preset.arch == "granitehybrid") {
    m.ssm_d_inner = 2 * n_embd, m.ssm_d_state = 16, m.ssm_n_group = 1;
    m.ssm_dt_rank = m.ssm_d_inner / 16;
  } else if (preset.arch == "qwen35") {
    m.ssm_d_state = 16, m.ssm_n_group = 2, m.ssm_dt_rank = 4;
    m.ssm_d_inner = m.ssm_d_state * m.ssm_dt_rank;
  }
  return m;
}

std::string SynthLayerPattern(const SynthPreset& p) {
  std::string mixer;
  if (p.arch == "granitehybrid") mixer = "Mamba2";
  if (p.arch == "lfm2" || p.arch == "lfm2moe") mixer = "short conv";
  if (p.arch == "qwen35") mixer = "Gated DeltaNet";
  std::string out;
  if (p.attention_layers.empty() || mixer.empty()) {
    out = fmt::format("{} attention", p.n_layer);
  } else {
    std::string at;
    for (uint32_t l : p.attention_layers) {
      at.append(at.empty() ? "" : ",").append(std::to_string(l));
    }
    out = fmt::format("{} {} + {} attention ({})", p.n_layer - p.attention_layers.size(), mixer,
                      p.attention_layers.size(), at);
  }
  if (p.n_expert > 0) {
    const uint32_t dense = p.arch == "lfm2moe" ? p.n_dense_lead : 0;
    out += fmt::format("; {}{} MoE ({} experts, {} used)",
                       dense > 0 ? fmt::format("{} dense + ", dense) : "", p.n_layer - dense,
                       p.n_expert, p.n_expert_used);
  }
  return out;
}

}  // namespace pipette
