// Chat templates on the real engine (driver/chat_prompt.h): every synthetic preset whose model has
// a chat template carries it, the driver applies it with llama.cpp's Jinja engine (the prompt holds
// the template's own markers) and generates through it; a built-in template name goes through
// llama_chat_apply_template, a model without a template gets the raw message, and a template the
// engine cannot apply is one error line of stage "template" naming the model. Miniatures (tiny
// widths, the real vocabulary) in Q8_0, a few tokens each: about a second per preset.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "driver/chat_prompt.h"
#include "driver/engine.h"
#include "pipette/synth.h"

namespace pipette::driver {
namespace {

namespace fs = std::filesystem;

const char* kMessage = "What is 2 + 2? Answer with one number.";

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "pipette-chat-template-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

std::string VocabDir() { return std::string(PIPETTE_LLAMA_PREFIX) + "/share/pipette"; }

// The shape `p` at tiny widths, written once per name.
std::string Model(const SynthPreset& p) {
  const std::string path = WorkDir() + "/" + p.name + ".gguf";
  if (fs::exists(path)) return path;
  SynthOptions o;
  o.type = "Q8_0";
  o.out_path = path;
  o.vocab_dir = VocabDir();
  const Status s = WriteSyntheticModel(p, o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? path : "";
}

std::unique_ptr<Engine> Load(const std::string& path) {
  auto e = std::make_unique<Engine>();
  EngineSettings s;
  s.threads = 1;
  s.n_ctx = 2048;
  const Status st = e->Load(path, s);
  EXPECT_TRUE(st.ok()) << st.error().message;
  return st.ok() ? std::move(e) : nullptr;
}

CompletionParams Params(bool use_template = true) {
  CompletionParams p;
  p.message = kMessage;
  p.use_chat_template = use_template;
  p.max_tokens = 4;
  p.temperature = 0;  // greedy: nothing here depends on the draw
  return p;
}

// What each preset's template writes around the user message and as the generation prompt: its
// own markers, not a generic format (SmolLM2's adds its default system message; Granite's has its
// role tokens).
struct Markers {
  std::string user_turn;
  std::string generation;
  std::string extra;  // another piece only this template writes; empty: none checked
};
const std::map<std::string, Markers>& ExpectedMarkers() {
  const std::string chatml_user = std::string("<|im_start|>user\n") + kMessage + "<|im_end|>";
  const Markers chatml{chatml_user, "<|im_start|>assistant\n", ""};
  const Markers granite{std::string("<|start_of_role|>user<|end_of_role|>") + kMessage +
                            "<|end_of_text|>",
                        "<|start_of_role|>assistant<|end_of_role|>",
                        "<|start_of_role|>system<|end_of_role|>"};  // its default system message
  Markers smollm2 = chatml;
  smollm2.extra = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
                  "Hugging Face<|im_end|>\n";
  static const std::map<std::string, Markers> m = {
      {"granite-4.0-h-350m", granite}, {"granite-4.0-350m", granite}, {"lfm2-350m", chatml},
      {"lfm2-1.2b", chatml},           {"lfm2-8b-a1b", chatml},      {"qwen3-0.6b", chatml},
      {"qwen3-4b", chatml},            {"qwen3-30b-a3b", chatml},    {"qwen3.5-4b", chatml},
      {"minicpm5-1b", chatml},         {"smollm2-135m", smollm2},    {"smollm2-360m", smollm2},
  };
  return m;
}

std::vector<std::string> PresetsWithTemplates() {
  std::vector<std::string> names;
  for (const SynthPreset& p : SynthPresets()) {
    if (!p.chat_template.empty()) names.push_back(p.name);
  }
  return names;
}

#define SKIP_WITHOUT_VOCAB()                                                              \
  if (!fs::exists(VocabDir() + "/ggml-vocab-llama-spm.gguf")) {                           \
    GTEST_SKIP() << "no " << VocabDir() << "/ggml-vocab-llama-spm.gguf; build llama.cpp " \
                 << "with scripts/llama.sh";                                              \
  }

TEST(ChatTemplates, EveryPresetWithATemplateHasItsMarkersListedHere) {
  for (const std::string& name : PresetsWithTemplates()) {
    EXPECT_TRUE(ExpectedMarkers().count(name)) << name << ": add its template's markers";
  }
  EXPECT_EQ(PresetsWithTemplates().size(), ExpectedMarkers().size());
}

class EveryTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryTemplate, AppliedByJinjaAndGeneratedThrough) {
  SKIP_WITHOUT_VOCAB();
  const SynthPreset& preset = *FindSynthPreset(GetParam());
  const SynthPreset mini = SynthMiniature(preset);
  ASSERT_EQ(mini.chat_template, preset.chat_template);
  const std::string path = Model(mini);
  ASSERT_FALSE(path.empty());
  auto engine = Load(path);
  ASSERT_TRUE(engine);

  auto c = engine->Complete(Params(), 4);
  ASSERT_TRUE(c.ok()) << c.error().stage << ": " << c.error().message;
  EXPECT_EQ(c->prompt_format, "chat_template");
  EXPECT_EQ(c->chat_template, preset.chat_template);  // the file carries the model's own
  EXPECT_EQ(c->template_engine, ChatPrompter::HasJinja() ? kEngineJinja : kEngineBuiltin);
  const Markers& m = ExpectedMarkers().at(preset.name);
  EXPECT_NE(c->prompt.find(m.user_turn), std::string::npos) << c->prompt;
  EXPECT_NE(c->prompt.find(m.generation), std::string::npos) << c->prompt;
  if (!m.extra.empty()) {
    EXPECT_NE(c->prompt.find(m.extra), std::string::npos) << c->prompt;
  }
  // The templated prompt was tokenized and run: more tokens than the message alone, and output.
  auto bare = engine->Tokenize(kMessage, true);
  ASSERT_TRUE(bare.ok());
  EXPECT_GT(c->prompt_tokens, static_cast<int>(bare->size()));
  EXPECT_TRUE(c->done || c->tokens == 4) << c->tokens;
  EXPECT_GE(c->first_token_ns, 0);
  while (!c->done) {
    c = engine->Continue(4);
    ASSERT_TRUE(c.ok()) << c.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(Synthetic, EveryTemplate, ::testing::ValuesIn(PresetsWithTemplates()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// A shape of its own with `chat_template` (the tiny llama: llama-spm vocabulary, no template).
std::string TinyWith(const std::string& name, const std::string& chat_template) {
  SynthPreset p = *FindSynthPreset("tiny");
  p.name = name;
  p.chat_template = chat_template;
  return Model(p);
}

TEST(ChatTemplates, ABuiltInTemplateNameGoesThroughLlamaChatApplyTemplate) {
  SKIP_WITHOUT_VOCAB();
  auto engine = Load(TinyWith("tiny-chatml", "chatml"));
  ASSERT_TRUE(engine);
  auto c = engine->Complete(Params(), 4);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->prompt_format, "chat_template");
  EXPECT_EQ(c->chat_template, "chatml");
  EXPECT_EQ(c->template_engine, kEngineBuiltin);
  EXPECT_EQ(c->prompt, std::string("<|im_start|>user\n") + kMessage +
                           "<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplates, AModelWithoutATemplateGetsTheRawMessage) {
  SKIP_WITHOUT_VOCAB();
  auto engine = Load(Model(*FindSynthPreset("tiny")));
  ASSERT_TRUE(engine);
  auto c = engine->Complete(Params(), 4);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->prompt_format, "raw");
  EXPECT_EQ(c->chat_template, "");
  EXPECT_EQ(c->template_engine, "");
  EXPECT_EQ(c->prompt, kMessage);
}

TEST(ChatTemplates, TheRawMessageOnRequestEvenWithATemplate) {
  SKIP_WITHOUT_VOCAB();
  auto engine = Load(Model(SynthMiniature(*FindSynthPreset("smollm2-135m"))));
  ASSERT_TRUE(engine);
  auto c = engine->Complete(Params(/*use_template=*/false), 4);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->prompt_format, "raw");
  EXPECT_EQ(c->template_engine, "");
  EXPECT_EQ(c->prompt, kMessage);
}

// What Jinja cannot apply fails before anything runs: stage "template", one line that names the
// model's file and the engine's reason.
TEST(ChatTemplates, ATemplateJinjaCannotApplyIsOneTemplateErrorNamingTheModel) {
  SKIP_WITHOUT_VOCAB();
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"tiny-unparsable", "{% for message in messages %}{{ message.content }}{% endfor"},
      {"tiny-raises", "{{ raise_exception('Only system, user and assistant roles\nare "
                      "supported') }}"},
  };
  for (const auto& [name, tmpl] : broken) {
    const std::string path = TinyWith(name, tmpl);
    auto engine = Load(path);
    ASSERT_TRUE(engine);
    auto c = engine->Complete(Params(), 4);
    ASSERT_FALSE(c.ok()) << name;
    EXPECT_EQ(c.error().stage, "template") << name;
    EXPECT_NE(c.error().message.find(path), std::string::npos) << c.error().message;
    EXPECT_EQ(c.error().message.find('\n'), std::string::npos) << c.error().message;
#if PIPETTE_DRIVER_JINJA
    EXPECT_NE(c.error().message.find("Jinja engine cannot apply its chat template"),
              std::string::npos)
        << c.error().message;
    if (name == "tiny-unparsable") {
      EXPECT_NE(c.error().message.find("Parser Error: Expected %}"), std::string::npos)
          << c.error().message;
    }
    if (name == "tiny-raises") {
      EXPECT_NE(c.error().message.find("Only system, user and assistant roles are supported"),
                std::string::npos)
          << c.error().message;
    }
#endif
    // The engine is still usable: the failure ran nothing.
    EXPECT_TRUE(engine->Tokenize(kMessage, true).ok());
  }
}

}  // namespace
}  // namespace pipette::driver
