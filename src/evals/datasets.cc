// The eval data sets (include/pipette/evals.h): loading, sample construction, fingerprints.
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "base/json_depth.h"
#include "base/sha256.h"
#include "evals/cpython_random.h"
#include "evals/csv.h"
#include "evals/file_read.h"
#include "pipette/evals.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr std::string_view kMathInstruction =
    "Solve the following math problem step by step. Put your answer inside \\boxed{}.";
constexpr std::string_view kMathReminder = "Remember to put your answer inside \\boxed{}.";
constexpr std::string_view kGpqaInstruction =
    "Answer the following multiple choice question. The last line of your response should be in "
    "the following format: 'Answer: A/B/C/D' (e.g. 'Answer: A').";
// The GPQA option columns, in the order the shuffle receives them.
const std::array<std::string, 4> kGpqaOptionColumns = {"Correct Answer", "Incorrect Answer 1",
                                                       "Incorrect Answer 2", "Incorrect Answer 3"};

std::string At(const std::string& path, int line) { return path + ":" + std::to_string(line); }

// The 1-based line of byte `offset` in `text`.
int LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// The offset of the first byte that does not belong to well-formed UTF-8, or npos.
size_t FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      min = 0x10000;
    } else {
      return i;
    }
    if (i + extra >= s.size()) return i;  // cut short by the end
    uint32_t cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += extra + 1;
  }
  return std::string_view::npos;
}

// The string field `name` of a JSON Lines record.
Result<std::string> StringField(const json& record, const char* name, const std::string& where) {
  const auto it = record.find(name);
  if (it == record.end()) return MakeError(where + ": no field \"" + name + "\"");
  if (!it->is_string()) {
    return MakeError(where + ": field \"" + name + "\" is " + it->type_name() +
                     ", expected a string");
  }
  return it->get<std::string>();
}

// The IFBench gold: the instruction ids and their arguments, checked for shape.
Result<std::string> IfBenchGold(const json& record, const std::string& where) {
  const auto ids = record.find("instruction_id_list");
  const auto kwargs = record.find("kwargs");
  if (ids == record.end()) return MakeError(where + ": no field \"instruction_id_list\"");
  if (kwargs == record.end()) return MakeError(where + ": no field \"kwargs\"");
  if (!ids->is_array()) {
    return MakeError(where + ": field \"instruction_id_list\" is " + ids->type_name() +
                     ", expected an array of strings");
  }
  for (const json& id : *ids) {
    if (!id.is_string()) {
      return MakeError(where + ": field \"instruction_id_list\" holds " +
                       std::string(id.type_name()) + ", expected only strings");
    }
  }
  if (!kwargs->is_array() || kwargs->size() != ids->size() ||
      !std::all_of(kwargs->begin(), kwargs->end(), [](const json& k) { return k.is_object(); })) {
    return MakeError(where + ": field \"kwargs\" must be an array of " +
                     std::to_string(ids->size()) + " objects, one per instruction");
  }
  std::string gold = json{{"instruction_id_list", *ids}, {"kwargs", *kwargs}}.dump();
  // The instructions themselves, as the scorer will read them: an unknown id or a malformed
  // argument is the data file's fault, named with its line, before any attempt runs.
  if (Status s = scorers::CheckIfBenchGold(gold); !s.ok()) {
    return MakeError(where + ": " + s.error().message);
  }
  return gold;
}

// One JSON Lines record as a sample of `dataset`.
Result<EvalSample> JsonlSample(EvalDataset dataset, const json& record, const std::string& where) {
  EvalSample sample;
  if (dataset == EvalDataset::kMath500) {
    auto problem = StringField(record, "problem", where);
    if (!problem.ok()) return problem.error();
    auto answer = StringField(record, "answer", where);
    if (!answer.ok()) return answer.error();
    auto unique_id = StringField(record, "unique_id", where);
    if (!unique_id.ok()) return unique_id.error();
    sample.prompt = MathPrompt(*problem);
    sample.gold = std::move(answer).value();
    sample.source_id = std::move(unique_id).value();
  } else {
    auto prompt = StringField(record, "prompt", where);
    if (!prompt.ok()) return prompt.error();
    auto key = StringField(record, "key", where);
    if (!key.ok()) return key.error();
    auto gold = IfBenchGold(record, where);
    if (!gold.ok()) return gold.error();
    sample.prompt = std::move(prompt).value();
    sample.gold = std::move(gold).value();
    sample.source_id = std::move(key).value();
  }
  return sample;
}

// Strips nlohmann's "[json.exception.parse_error.101] " prefix from a parse error.
std::string ParseErrorText(const char* what) {
  std::string text = what;
  const size_t bracket = text.find("] ");
  return text.rfind("[json.exception", 0) == 0 && bracket != std::string::npos
             ? text.substr(bracket + 2)
             : text;
}

Result<std::vector<EvalSample>> LoadJsonl(EvalDataset dataset, const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  std::vector<EvalSample> samples;
  std::string_view rest = *text;
  for (int line = 1; !rest.empty(); ++line) {
    const size_t eol = rest.find('\n');
    const std::string_view content = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    if (content.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = At(path, line);
    json record;
    if (const auto deep = JsonNestsDeeperThan(content)) {
      return MakeError(where + ": " + TooDeeplyNested(*deep));
    }
    try {
      record = json::parse(content);
    } catch (const json::parse_error& e) {
      return MakeError(where + ": not a JSON object: " + ParseErrorText(e.what()));
    } catch (const json::exception&) {  // the parser's other refusal: a number beyond a double
      return MakeError(where + ": not a JSON object: a number out of range");
    }
    if (!record.is_object()) {
      return MakeError(where + ": a record is a JSON object, not " +
                       std::string(record.type_name()));
    }
    auto sample = JsonlSample(dataset, record, where);
    if (!sample.ok()) return sample.error();
    sample->line = line;
    samples.push_back(std::move(sample).value());
  }
  return samples;
}

// The GPQA sample of one CSV record, its columns found through `column`.
EvalSample GpqaSample(const evals::CsvRecord& record, const std::map<std::string, size_t>& column) {
  const std::string& question = record.fields[column.at("Question")];
  EvalSample sample;
  sample.shuffle_seed = GpqaShuffleSeed(question);
  const std::array<int, 4> order = GpqaOptionOrder(sample.shuffle_seed);
  std::array<std::string, 4> options;
  for (int letter = 0; letter < 4; ++letter) {
    const std::string& name = kGpqaOptionColumns[order[letter]];
    options[letter] = record.fields[column.at(name)];
    sample.option_columns.push_back(name);
    if (order[letter] == 0) sample.gold = std::string(1, static_cast<char>('A' + letter));
  }
  sample.prompt = GpqaPrompt(question, options);
  sample.source_id = record.fields[column.at("Record ID")];
  sample.line = record.line;
  return sample;
}

Result<std::vector<EvalSample>> LoadGpqa(const std::string& path) {
  auto text = ReadGzipFile(path);
  if (!text.ok()) return text.error();
  if (const size_t bad = FirstInvalidUtf8(*text); bad != std::string::npos) {
    return MakeError(At(path, LineOf(*text, bad)) + ": not UTF-8 text (byte " +
                     std::to_string(bad) + " of the CSV)");
  }
  auto records = evals::ParseCsv(*text, path);
  if (!records.ok()) return records.error();
  if (records->empty()) return MakeError(path + ": empty CSV (no header)");
  const evals::CsvRecord& header = records->front();
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.fields.size(); ++i) column.emplace(header.fields[i], i);
  for (const char* needed : {"Question", "Correct Answer", "Incorrect Answer 1",
                             "Incorrect Answer 2", "Incorrect Answer 3", "Record ID"}) {
    if (!column.contains(needed)) {
      return MakeError(At(path, header.line) + ": the header has no column \"" + needed + "\"");
    }
  }
  std::vector<EvalSample> samples;
  std::map<std::string, int> record_lines;
  for (size_t r = 1; r < records->size(); ++r) {
    const evals::CsvRecord& record = (*records)[r];
    if (record.fields.size() != header.fields.size()) {
      return MakeError(At(path, record.line) + ": the record has " +
                       std::to_string(record.fields.size()) + " fields, the header " +
                       std::to_string(header.fields.size()));
    }
    EvalSample sample = GpqaSample(record, column);
    if (sample.source_id.empty()) return MakeError(At(path, record.line) + ": empty Record ID");
    if (const auto [it, added] = record_lines.emplace(sample.source_id, record.line); !added) {
      return MakeError(At(path, record.line) + ": Record ID \"" + sample.source_id +
                       "\" already on line " + std::to_string(it->second));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

// Two samples with one prompt would share an id: refused, naming both lines.
Status CheckUniqueIds(const std::vector<EvalSample>& samples, const std::string& path) {
  std::map<std::string_view, int> lines;
  for (const EvalSample& sample : samples) {
    if (const auto [it, added] = lines.emplace(sample.id, sample.line); !added) {
      return MakeError(At(path, sample.line) + ": the same prompt (sample id " + sample.id +
                       ") as line " + std::to_string(it->second));
    }
  }
  return Status::Ok();
}

std::vector<std::string> WarningsOf(const EvalDataSet& set) {
  const EvalDatasetInfo& info = InfoOf(set.dataset);
  std::vector<std::string> warnings;
  if (set.MatchesPublished() == false) {
    warnings.push_back(info.title + " data set " + set.path + " has fingerprint " +
                       set.fingerprint + ", not the published " + info.published_fingerprint +
                       ": it is not the published data set, so its scores are not comparable "
                       "with published ones");
  }
  if (set.samples.size() != info.published_samples) {
    warnings.push_back(info.title + " data set " + set.path + " has " +
                       std::to_string(set.samples.size()) + " samples, the published one " +
                       std::to_string(info.published_samples));
  }
  return warnings;
}

}  // namespace

const std::vector<EvalDatasetInfo>& EvalDatasets() {
  static const std::vector<EvalDatasetInfo> kDatasets = {
      {EvalDataset::kMath500, "math_500", "MATH-500", "eval_math_500_2026.06.1",
       "math500/test.jsonl", 500,
       "03d8a41616e2b3f5e0c317e8de72d3a88b930186a0ef7d00686e90051004f588"},
      {EvalDataset::kGpqaDiamond, "gpqa_diamond", "GPQA Diamond", "eval_gpqa_diamond_2026.06.1",
       "gpqa_diamond/gpqa_diamond.csv.gz", 198,
       "60d4d93801f979b3dc52847f1eadb9d14a495a427fbb4934858f18530fab9281"},
      {EvalDataset::kIfBench, "ifbench", "IFBench", "eval_ifbench_2026.06.1",
       "ifbench/IFBench_test.jsonl", 300, ""},
  };
  return kDatasets;
}

const EvalDatasetInfo& InfoOf(EvalDataset dataset) {
  return EvalDatasets()[static_cast<size_t>(dataset)];
}

std::optional<EvalDataset> EvalDatasetNamed(std::string_view name_or_id) {
  for (const EvalDatasetInfo& info : EvalDatasets()) {
    if (name_or_id == info.name || name_or_id == info.benchmark_id) return info.dataset;
  }
  return std::nullopt;
}

std::optional<bool> EvalDataSet::MatchesPublished() const {
  const std::string& published = InfoOf(dataset).published_fingerprint;
  if (published.empty()) return std::nullopt;
  return fingerprint == published;
}

Result<EvalDataSet> LoadEvalDataSetFile(EvalDataset dataset, const std::string& path) {
  auto samples = dataset == EvalDataset::kGpqaDiamond ? LoadGpqa(path) : LoadJsonl(dataset, path);
  if (!samples.ok()) return samples.error();
  EvalDataSet set;
  set.dataset = dataset;
  set.path = path;
  set.samples = std::move(samples).value();
  for (EvalSample& sample : set.samples) sample.id = EvalSampleId(sample.prompt);
  if (Status unique = CheckUniqueIds(set.samples, path); !unique.ok()) return unique.error();
  set.fingerprint = EvalFingerprint(set.samples);
  set.warnings = WarningsOf(set);
  return set;
}

Result<EvalDataSet> LoadEvalDataSet(EvalDataset dataset, const std::string& data_dir) {
  return LoadEvalDataSetFile(dataset, data_dir + "/" + InfoOf(dataset).file);
}

std::string EvalSampleId(std::string_view prompt) { return Sha256Hex(prompt).substr(0, 12); }

std::string EvalFingerprint(const std::vector<EvalSample>& samples) {
  std::vector<std::string> lines;
  lines.reserve(samples.size());
  for (const EvalSample& sample : samples) lines.push_back(sample.prompt + "\x1f" + sample.gold);
  std::sort(lines.begin(), lines.end());  // bytewise, as Python sorts these strings' code points
  Sha256 hasher;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) hasher.Update("\n", 1);
    hasher.Update(lines[i].data(), lines[i].size());
  }
  return hasher.HexDigest();
}

std::string MathPrompt(std::string_view problem) {
  std::string prompt(kMathInstruction);
  prompt += "\n\n";
  prompt += problem;
  prompt += "\n\n";
  prompt += kMathReminder;
  return prompt;
}

std::string GpqaPrompt(std::string_view question, const std::array<std::string, 4>& options) {
  std::string prompt(kGpqaInstruction);
  prompt += "\n\n";
  prompt += question;
  prompt += "\n";
  for (int letter = 0; letter < 4; ++letter) {
    prompt += "\n";
    prompt += static_cast<char>('A' + letter);
    prompt += ") ";
    prompt += options[letter];
  }
  return prompt;
}

uint32_t GpqaShuffleSeed(std::string_view question) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(question.data(), question.size(), digest, &size, EVP_md5(), nullptr);
  // The integer's low 32 bits are the digest's last four bytes, big-endian.
  return (uint32_t{digest[12]} << 24) | (uint32_t{digest[13]} << 16) | (uint32_t{digest[14]} << 8) |
         uint32_t{digest[15]};
}

std::array<int, 4> GpqaOptionOrder(uint32_t seed) {
  std::vector<int> order = {0, 1, 2, 3};
  evals::CPythonRandom(seed).Shuffle(order);
  return {order[0], order[1], order[2], order[3]};
}

}  // namespace pipette
