#include "cli/eval_output.h"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/text_table.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

// At most `n` characters of `text` on one line, cut at a UTF-8 character boundary.
std::string OneLine(const std::string& text, size_t n) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < text.size() && shown < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t' || c == '\r') {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
    if ((c & 0xC0) != 0x80) ++shown;
  }
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) out.pop_back();
  return shown >= n ? out + "..." : out;
}

double MetricMedian(const json& m) { return m.is_object() ? m.value("median", 0.0) : 0.0; }

}  // namespace

void PrintEvalSummary(const json& r, std::ostream& out) {
  if (!r.contains("eval")) return;
  const json& e = r["eval"];
  const std::string fp = e.value("fingerprint", "");
  std::string match = "no published fingerprint";
  if (e.contains("fingerprint_matches_published")) {
    match = e["fingerprint_matches_published"].get<bool>()
                ? "the published one"
                : "DIFFERS from the published " + e.value("published_fingerprint", "");
  }
  const size_t samples = e.value("sample_ids", json::array()).size();
  const int parallel = e.value("parallel", 1);
  out << fmt::format("{} (fingerprint {}, {}): {} samples x {} attempts{}, seed {}, temperature "
                     "{:g}, max {} tokens, prompt {}, scorer {}\n",
                     e.value("title", ""), fp.substr(0, 12), match, samples,
                     e.value("repeats", 0),
                     parallel > 1 ? fmt::format(" ({} in parallel)", parallel) : std::string(),
                     e.value("seed", 0), e.value("temperature", 0.0),
                     e.value("max_tokens", 0), e.value("prompt_format", "?"),
                     e.value("scorer", ""));
  if (!r.contains("metrics") || !r["metrics"].contains("accuracy")) return;
  const json& m = r["metrics"];
  const json& acc = m["accuracy"];
  out << fmt::format(
      "accuracy {:.1f}% (95% CI {:.1f}%..{:.1f}%, clustered by question) over {} attempts; "
      "unparsed {:.1f}%, truncated {:.1f}%, doom loop {:.1f}%, failed {:.1f}%",
      100 * MetricMedian(acc), 100 * acc.value("ci95_low", 0.0), 100 * acc.value("ci95_high", 0.0),
      acc.value("n", 0), 100 * MetricMedian(m.value("unparsed_rate", json())),
      100 * MetricMedian(m.value("truncated_rate", json())),
      100 * MetricMedian(m.value("doom_loop_rate", json())),
      100 * MetricMedian(m.value("failure_rate", json())));
  const int resumed = e.value("resumed_attempts", 0);
  if (resumed > 0) out << fmt::format("; {} attempts resumed from the checkpoint", resumed);
  out << "\n";
}

void PrintCompletions(const json& r, std::ostream& out) {
  const json completions = r.value("completions", json::array());
  if (completions.empty()) return;
  std::vector<std::vector<std::string>> rows = {
      {"ATTEMPT", "STOP", "TOKENS", "VERDICT", "METHOD", "EXTRACTED", "COMPLETION"}};
  for (const json& c : completions) {
    std::string stop = c.value("stop", "");
    if (c.contains("doom_loop_detector")) stop += " (" + c["doom_loop_detector"].get<std::string>() + ")";
    const std::string verdict = stop == "failure"              ? "failed"
                                : c.value("correct", false) ? "correct"
                                : c.value("parsed", false)  ? "wrong"
                                                            : "unparsed";
    const std::string text = stop == "failure" ? "error: " + c.value("error", "")
                                               : c.value("completion", "");
    rows.push_back({c.value("key", ""), stop,
                    c.contains("output_tokens") ? std::to_string(c["output_tokens"].get<int>()) : "-",
                    verdict, c.value("method", ""), OneLine(c.value("extracted", ""), 24),
                    OneLine(text, 60)});
  }
  out << "\ncompletions (" << completions.size() << "):\n";
  PrintTable(rows, out);
}

}  // namespace pipette::cli
