#include "driver/chat_prompt.h"

#include <exception>
#include <utility>
#include <vector>

#include "llama.h"

#ifndef PIPETTE_DRIVER_JINJA
#define PIPETTE_DRIVER_JINJA 1
#endif
#if PIPETTE_DRIVER_JINJA
#include "common/chat.h"  // llama.cpp's common library, installed by scripts/llama.sh
#endif

namespace pipette::driver {
namespace {

// One line of at most 300 bytes: an engine's reason may span lines (a parser's excerpt).
std::string OneLine(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == '\n' || c == '\r' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out.empty() ? "no reason given" : out;
}

// The reason in a Jinja engine's exception: a runtime error comes as "... While executing X at
// line L, column C in source: <excerpt> ^ Error: <reason>" (keep "<reason> (at line L, column C)"),
// a parse error as "<reason>\n<excerpt>\n^" (keep the first line).
std::string JinjaReason(const std::string& what) {
  const size_t executing = what.find("While executing");
  const size_t error = what.rfind("Error: ");
  if (executing != std::string::npos && error != std::string::npos && error > executing) {
    std::string reason = what.substr(error + 7);
    const size_t at = what.find(" at line ", executing);
    const size_t in = what.find(" in source", executing);
    if (at != std::string::npos && in != std::string::npos && at < in) {
      reason += " (" + what.substr(at + 1, in - at - 1) + ")";
    }
    return OneLine(reason);
  }
  return OneLine(what.substr(0, what.find('\n')));
}

// A template name for llama_chat_apply_template ("chatml", "llama3", ...) holds no Jinja markup.
bool IsJinja(const std::string& tmpl) {
  return tmpl.find("{{") != std::string::npos || tmpl.find("{%") != std::string::npos;
}

// llama_chat_apply_template's own formats: a name, or a Jinja template it recognizes by its
// markers (the heuristic path of drivers built without the common library). -1 when it knows
// neither.
Result<std::string> ApplyBuiltin(const std::string& tmpl, const std::string& message) {
  const llama_chat_message msg{"user", message.c_str()};
  std::vector<char> buf(message.size() * 2 + 512);
  int len = llama_chat_apply_template(tmpl.c_str(), &msg, 1, true, buf.data(),
                                      static_cast<int32_t>(buf.size()));
  if (len > static_cast<int>(buf.size())) {
    buf.resize(static_cast<size_t>(len));
    len = llama_chat_apply_template(tmpl.c_str(), &msg, 1, true, buf.data(),
                                    static_cast<int32_t>(buf.size()));
  }
  if (len < 0) return MakeError("", "template");
  return std::string(buf.data(), static_cast<size_t>(len));
}

}  // namespace

#if PIPETTE_DRIVER_JINJA
struct ChatPrompter::Templates {
  common_chat_templates_ptr ptr;
};
bool ChatPrompter::HasJinja() { return true; }
#else
struct ChatPrompter::Templates {};
bool ChatPrompter::HasJinja() { return false; }
#endif

ChatPrompter::ChatPrompter(const llama_model* model, std::string model_name)
    : model_(model), model_name_(std::move(model_name)) {}

ChatPrompter::~ChatPrompter() = default;

Result<ChatPrompt> ChatPrompter::Build(const std::string& message, bool use_template) {
  ChatPrompt out;
  const char* tmpl = use_template ? llama_model_chat_template(model_, nullptr) : nullptr;
  if (!tmpl) {
    out.text = message;
    out.format = "raw";
    return out;
  }
  out.format = "chat_template";
  out.chat_template = tmpl;
#if PIPETTE_DRIVER_JINJA
  if (IsJinja(out.chat_template)) {
    out.engine = kEngineJinja;
    try {
      if (!templates_) {
        auto t = std::make_unique<Templates>();
        // "": the model's own template (and its tool_use variant), BOS/EOS from its vocabulary.
        t->ptr = common_chat_templates_init(model_, "");
        templates_ = std::move(t);
      }
      common_chat_templates_inputs in;
      common_chat_msg msg;
      msg.role = "user";
      msg.content = message;
      in.messages.push_back(std::move(msg));
      in.add_generation_prompt = true;
      in.use_jinja = true;
      out.text = common_chat_templates_apply(templates_->ptr.get(), in).prompt;
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (!templates_) {
        // common_chat_templates_init rethrows a sliced copy ("std::exception"); parsing the
        // template again gives the parser's own reason.
        try {
          common_chat_template again(out.chat_template, "", "");
        } catch (const std::exception& parse) {
          what = parse.what();
        }
      }
      return MakeError(model_name_ + ": llama.cpp's Jinja engine cannot apply its chat template (" +
                           JinjaReason(what) +
                           "); fix tokenizer.chat_template in the file or use another model",
                       "template");
    } catch (...) {
      return MakeError(model_name_ + ": llama.cpp's Jinja engine cannot apply its chat template; "
                                     "fix tokenizer.chat_template in the file or use another model",
                       "template");
    }
    return out;
  }
#endif
  out.engine = kEngineBuiltin;
  auto text = ApplyBuiltin(out.chat_template, message);
  if (!text) {
    if (IsJinja(out.chat_template)) {
      return MakeError(model_name_ + ": its chat template is not one llama_chat_apply_template "
                                     "knows, and this driver was built without llama.cpp's Jinja "
                                     "engine (PIPETTE_DRIVER_JINJA=OFF); build it with the common "
                                     "library",
                       "template");
    }
    return MakeError(model_name_ + ": its chat template names '" + OneLine(out.chat_template) +
                         "', which llama_chat_apply_template does not know; put the template "
                         "itself in tokenizer.chat_template",
                     "template");
  }
  out.text = std::move(*text);
  return out;
}

}  // namespace pipette::driver
