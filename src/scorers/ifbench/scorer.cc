// IfBenchScorer: upstream's strict and loose evaluation (allenai/IFBench evaluation_lib.py,
// test_instruction_following_strict / _loose) over the checkers of checkers.h.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/scorers.h"
#include "scorers/ifbench/checkers.h"
#include "scorers/ifbench/nlp.h"

namespace pipette::scorers {

using ifbench::Doc;
using ifbench::InstructionSpec;
using ifbench::Kwargs;
using ifbench::Text;
using ifbench::TextView;

struct IfBenchScorer::Impl {
  ifbench::NlpData nlp;
};

const std::vector<IfBenchDataFile>& IfBenchDataFiles() {
  static const std::vector<IfBenchDataFile> files = {
      {"punkt_tab/english/abbrev_types.txt",
       "92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779", false},
      {"punkt_tab/english/collocations.tab",
       "8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf", false},
      {"punkt_tab/english/ortho_context.tab",
       "4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c", false},
      {"punkt_tab/english/sent_starters.txt",
       "f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac", false},
      {"averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.classes.json",
       "d152ffa69d45b8357276341a3d592c6c025911d52ec0d9068d4f382560dd48b6", false},
      {"averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.tagdict.json",
       "4c713731cb06727736962bc8cd94ad919217a040e76691059af99bc0c2c9c246", false},
      {"averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.weights.json.gz",
       "799a41d5a94ac218841f3e9f74c822423abc744441d6c95895c90c92f6afcf34", true},
      {"stopwords/english", "f6d005956f407dbc6ea32e5ff0c7e8e6f71488d3239b9023efdc7fc139d6375b",
       false},
      {"syllapy/data.csv", "15dbc605f4b03690ccf4fbfe14f634b52efcea866c21310664253fadb718bc0d",
       false},
      {"emoji/emoji_sequences.txt",
       "1d6dd94716ed422f8923f7339172b21a9e53fb2418e085907ba95f3f73dc608b", false},
  };
  return files;
}

Result<IfBenchScorer> IfBenchScorer::FromFiles(
    const std::unordered_map<std::string, std::string>& files) {
  ifbench::NlpFiles nlp_files;
  for (const IfBenchDataFile& f : IfBenchDataFiles()) {
    // ParseNlpData names a compressed file by its name without ".gz" (its contents decompressed).
    std::string key = f.path;
    if (f.gzip && key.size() > 3 && key.compare(key.size() - 3, 3, ".gz") == 0) {
      key.resize(key.size() - 3);
    }
    auto it = files.find(f.path);
    if (it == files.end()) it = files.find(key);
    if (it == files.end()) {
      return MakeError("IFBench scorer: the data file nlp/" + f.path + " is missing");
    }
    nlp_files.emplace(std::move(key), it->second);
  }
  Result<ifbench::NlpData> nlp = ifbench::ParseNlpData(nlp_files);
  if (!nlp.ok()) return nlp.error().Wrap("IFBench scorer");
  auto impl = std::make_shared<Impl>();
  impl->nlp = std::move(nlp).value();
  IfBenchScorer scorer;
  scorer.impl_ = std::move(impl);
  return scorer;
}

namespace {

struct Instruction {
  const InstructionSpec* spec;
  Kwargs kwargs;
};

Result<std::vector<Instruction>> ParseGold(std::string_view gold) {
  const auto bad = [](const std::string& what) {
    return MakeError("IFBench gold: " + what);
  };
  nlohmann::json j = nlohmann::json::parse(gold, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");
  const auto ids = j.find("instruction_id_list");
  const auto kwargs = j.find("kwargs");
  if (ids == j.end() || !ids->is_array()) return bad("no instruction_id_list array");
  if (kwargs == j.end() || !kwargs->is_array()) return bad("no kwargs array");
  if (ids->empty()) return bad("instruction_id_list is empty");
  if (ids->size() != kwargs->size()) {
    return bad("instruction_id_list has " + std::to_string(ids->size()) + " ids but kwargs has " +
               std::to_string(kwargs->size()) + " entries");
  }
  std::vector<Instruction> out;
  for (size_t i = 0; i < ids->size(); ++i) {
    const nlohmann::json& id = (*ids)[i];
    if (!id.is_string()) return bad("instruction " + std::to_string(i) + " is not a string");
    const std::string& name = id.get_ref<const std::string&>();
    const InstructionSpec* spec = ifbench::FindInstruction(name);
    if (spec == nullptr) return bad("unknown instruction id " + nlohmann::json(name).dump());
    Result<Kwargs> kw = ifbench::ParseKwargs(*spec, (*kwargs)[i]);
    if (!kw.ok()) return bad(name + ": " + kw.error().message);
    out.push_back({spec, std::move(kw).value()});
  }
  return out;
}

}  // namespace

Status CheckIfBenchGold(std::string_view gold) {
  auto parsed = ParseGold(gold);
  if (!parsed) return parsed.error();
  return Status::Ok();
}

namespace {

// The pieces of evaluation_lib's loose variants: "\n".join(r[1:]) etc. for r = s.split("\n").
TextView AfterFirstLine(TextView s) {
  const size_t at = s.find(U'\n');
  return at == TextView::npos ? TextView() : s.substr(at + 1);
}
TextView BeforeLastLine(TextView s) {
  const size_t at = s.rfind(U'\n');
  return at == TextView::npos ? TextView() : s.substr(0, at);
}

}  // namespace

Result<IfBenchVerdict> IfBenchScorer::Score(std::string_view gold, std::string_view response,
                                            IfBenchProfile profile) const {
  if (!impl_) return MakeError("IFBench scorer: not loaded");
  Result<std::vector<Instruction>> parsed = ParseGold(gold);
  if (!parsed.ok()) return parsed.error();
  const std::vector<Instruction>& instructions = parsed.value();
  const ifbench::NlpData& nlp = impl_->nlp;

  const Text response_text = ifbench::Decode(response);
  const TextView r = response_text;

  // evaluation_lib's 8 variants, in its order: the response, it without '*', the response with
  // its first / last / first and last lines dropped (then stripped), and those without '*'
  // (deleted after the strip). Views into the response where no '*' needs deleting.
  std::vector<TextView> variants(8);
  std::vector<Text> owned;  // the '*'-free copies
  owned.reserve(4);
  variants[0] = r;
  variants[2] = ifbench::Strip(AfterFirstLine(r));
  variants[3] = ifbench::Strip(BeforeLastLine(r));
  variants[4] = ifbench::Strip(BeforeLastLine(AfterFirstLine(r)));  // r[1:-1]
  for (size_t i : {0, 2, 3, 4}) {
    const size_t without = i == 0 ? 1 : i + 3;
    if (variants[i].find(U'*') == TextView::npos) {
      variants[without] = variants[i];
    } else {
      owned.push_back(ifbench::Delete(variants[i], U"*"));
      variants[without] = owned.back();
    }
  }

  // A checker is a pure function of the text: a variant equal to an earlier one, or blank
  // (skipped upstream), is not checked again.
  std::vector<bool> checked(8, false);
  for (size_t i = 0; i < variants.size(); ++i) {
    checked[i] = !ifbench::Strip(variants[i]).empty();
    for (size_t k = 0; k < i && checked[i]; ++k) {
      if (checked[k] && variants[k] == variants[i]) checked[i] = false;
    }
  }
  std::vector<std::unique_ptr<Doc>> docs(8);
  const auto doc = [&](size_t i) -> Doc& {
    if (!docs[i]) docs[i] = std::make_unique<Doc>(variants[i], nlp);
    return *docs[i];
  };

  IfBenchVerdict verdict;
  for (const Instruction& ins : instructions) {
    // Strict: the raw response, when it is not blank.
    const bool strict = checked[0] && ins.spec->check(doc(0), ins.kwargs, profile);
    bool loose = strict;
    for (size_t i = 1; i < variants.size() && !loose; ++i) {
      if (checked[i]) loose = ins.spec->check(doc(i), ins.kwargs, profile);
    }
    verdict.strict.push_back(strict);
    verdict.loose.push_back(loose);
  }
  verdict.prompt_strict = true;
  verdict.prompt_loose = true;
  for (size_t i = 0; i < instructions.size(); ++i) {
    verdict.prompt_strict = verdict.prompt_strict && verdict.strict[i];
    verdict.prompt_loose = verdict.prompt_loose && verdict.loose[i];
  }
  return verdict;
}

}  // namespace pipette::scorers
