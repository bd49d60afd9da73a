// The real models' chat templates the synthetic presets write into tokenizer.chat_template
// (synth_chat_templates.cc names each one's source).
#pragma once

namespace pipette::synth {

extern const char* const kQwen3;       // Qwen3-0.6B, Qwen3-4B, Qwen3-30B-A3B
extern const char* const kQwen35;      // Qwen3.5-4B
extern const char* const kLfm2;        // LFM2-350M, LFM2-1.2B, LFM2-8B-A1B
extern const char* const kGranite40;   // Granite-4.0-350M, Granite-4.0-H-350M
extern const char* const kMiniCpm5;    // MiniCPM5-1B
extern const char* const kSmolLm2;     // SmolLM2-135M(-Instruct), SmolLM2-360M(-Instruct)

}  // namespace pipette::synth
