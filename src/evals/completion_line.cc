// ParseCompletionLine (pipette/evals.h): one line of a completions file.
#include <string>

#include "base/json_depth.h"
#include "pipette/evals.h"

namespace pipette {

Result<CompletionLine> ParseCompletionLine(std::string_view line) {
  using nlohmann::json;
  if (const auto deep = JsonNestsDeeperThan(line)) return MakeError(TooDeeplyNested(*deep));
  json r;
  try {
    r = json::parse(line);
  } catch (const json::parse_error& e) {
    // The parser's message quotes the bytes read, which need not be printable: name the byte.
    const bool utf8 = std::string_view(e.what()).find("UTF-8") != std::string_view::npos;
    return MakeError(std::string(utf8 ? "text that is not UTF-8" : "not a JSON line") +
                     " at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {
    // The parser's only other refusal (found by fuzz/fuzz_completions_jsonl: it ended `pipette
    // score`): a number beyond a double, 1e400.
    return MakeError("not a JSON line: a number out of range");
  }
  if (!r.is_object() || !r.contains("id") || !r["id"].is_string() || !r.contains("completion") ||
      !r["completion"].is_string()) {
    return MakeError("expected {\"id\": string, \"completion\": string}");
  }
  return CompletionLine{r["id"].get<std::string>(), r["completion"].get<std::string>()};
}

}  // namespace pipette
