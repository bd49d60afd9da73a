// The prompt of one user message as a model's chat template makes it (quality evals, DESIGN.md 7):
// the template the GGUF carries in tokenizer.chat_template, applied the way llama-server applies
// it with --jinja (llama.cpp's common library: common_chat_templates_init(model, "") and
// common_chat_templates_apply with use_jinja, one user message, the generation prompt added).
//
//   the model carries a Jinja template  -> llama.cpp's common Jinja engine (kEngineJinja)
//   it carries a built-in template name -> llama_chat_apply_template's own formats (kEngineBuiltin)
//     (no "{{" or "{%": e.g. "chatml", or the name llama.cpp itself gives a model it recognizes)
//   it carries none                     -> the raw message
//
// A driver built with PIPETTE_DRIVER_JINJA=0 (a llama.cpp without the common library) applies
// every template with llama_chat_apply_template's heuristics, and says so (kEngineBuiltin).
//
// Not thread-safe: the driver runs one command at a time.
#pragma once

#include <memory>
#include <string>

#include "pipette/status.h"

struct llama_model;

namespace pipette::driver {

// Values of CompletionChunk::template_engine (and of the record's eval.template_engine).
inline constexpr const char* kEngineJinja = "llama.cpp common jinja";
inline constexpr const char* kEngineBuiltin = "llama_chat_apply_template (built-in)";

struct ChatPrompt {
  std::string text;           // what is tokenized (special tokens parsed)
  std::string format;         // "chat_template" | "raw"
  std::string chat_template;  // the template as the model carries it; empty for raw
  std::string engine;         // kEngineJinja | kEngineBuiltin; empty for raw
};

class ChatPrompter {
 public:
  // `model` outlives this; `model_name` names it in errors (its file).
  ChatPrompter(const llama_model* model, std::string model_name);
  ~ChatPrompter();
  ChatPrompter(const ChatPrompter&) = delete;
  ChatPrompter& operator=(const ChatPrompter&) = delete;

  // The prompt of `message` (the raw message when `use_template` is false). Errors: stage
  // "template", one line naming the model and why its template cannot be applied (a Jinja
  // template the engine cannot parse or render, a name llama.cpp does not know).
  Result<ChatPrompt> Build(const std::string& message, bool use_template);

  // Whether this driver applies Jinja templates with llama.cpp's common library.
  static bool HasJinja();

 private:
  struct Templates;  // the parsed templates, made on first use and kept for the model's life
  const llama_model* model_;
  std::string model_name_;
  std::unique_ptr<Templates> templates_;
};

}  // namespace pipette::driver
