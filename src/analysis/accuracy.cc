// Eval accuracy for decisions (issue 9, item 5): which model a configuration is a build of, the
// reference a drop is measured from, and two eval results paired attempt by attempt.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <random>
#include <set>

#include "analysis/record_fields.h"
#include "pipette/analysis.h"
#include "pipette/record.h"
#include "pipette/stats.h"

namespace pipette {

using nlohmann::json;

namespace {

std::string LowerCase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A llama.cpp tensor or file type name as file names carry it: f32, f16, bf16, q8_0, q4_k_m,
// iq2_xxs, tq1_0, mxfp4 (lower case).
bool LooksLikeQuant(const std::string& s) {
  if (s == "f32" || s == "f16" || s == "bf16" || s == "fp16" || s == "fp32" || s == "mxfp4") {
    return true;
  }
  size_t i = 0;
  if (s.rfind("iq", 0) == 0 || s.rfind("tq", 0) == 0) {
    i = 2;
  } else if (s.rfind("q", 0) == 0) {
    i = 1;
  } else {
    return false;
  }
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string KeyOf(const json& completion) {
  if (completion.contains("key") && completion["key"].is_string()) {
    return completion["key"].get<std::string>();
  }
  const std::string id = completion.value("id", "");
  const int attempt = completion.contains("attempt") && completion["attempt"].is_number_integer()
                          ? completion["attempt"].get<int>()
                          : 0;
  return id + "#" + std::to_string(attempt);
}

std::string QuestionOf(const json& completion, const std::string& key) {
  if (completion.contains("id") && completion["id"].is_string()) {
    return completion["id"].get<std::string>();
  }
  return key.substr(0, key.rfind('#'));
}

// key -> (question, correct)
std::optional<std::map<std::string, std::pair<std::string, bool>>> Attempts(const json& r) {
  if (!r.is_object() || !r.contains("completions") || !r["completions"].is_array()) {
    return std::nullopt;
  }
  std::map<std::string, std::pair<std::string, bool>> out;
  for (const json& c : r["completions"]) {
    if (!c.is_object()) continue;
    const std::string key = KeyOf(c);
    const bool correct =
        c.contains("correct") && c["correct"].is_boolean() && c["correct"].get<bool>();
    out.emplace(key, std::pair{QuestionOf(c, key), correct});
  }
  return out;
}

}  // namespace

std::string ModelFamily(const Configuration& config) {
  std::string stem = LowerCase(config.model_file);
  if (stem.size() > 5 && stem.ends_with(".gguf")) stem.resize(stem.size() - 5);
  const std::string quant = LowerCase(config.quant);
  for (size_t i = stem.size(); i-- > 0;) {
    const char c = stem[i];
    if (c != '-' && c != '.' && c != '_') continue;
    const std::string tail = stem.substr(i + 1);
    if (i > 0 && (tail == quant || LooksLikeQuant(tail))) return stem.substr(0, i);
  }
  return stem;
}

Result<const Configuration*> ReferenceNamed(const std::vector<Configuration>& configs,
                                            const std::string& name) {
  std::string names;
  for (const Configuration& c : configs) names += (names.empty() ? "" : ", ") + c.name;
  const auto unique = [&](auto pred) -> std::vector<const Configuration*> {
    std::vector<const Configuration*> out;
    for (const Configuration& c : configs) {
      if (pred(c)) out.push_back(&c);
    }
    return out;
  };
  for (const auto& found :
       {unique([&](const Configuration& c) { return c.name == name; }),
        unique([&](const Configuration& c) { return !name.empty() && c.key.rfind(name, 0) == 0; }),
        unique([&](const Configuration& c) {
          return !name.empty() && c.model_file.find(name) != std::string::npos;
        })}) {
    if (found.size() == 1) return found.front();
    if (found.size() > 1) {
      return MakeError("--reference " + name + " names " + std::to_string(found.size()) +
                       " configurations; give one of: " + names);
    }
  }
  return MakeError("--reference " + name +
                   " names no configuration; give a name as select shows it (" + names +
                   "), a key prefix or a model file name");
}

bool IsEvalOf(const json& record, const std::string& eval) {
  if (analysis::BenchmarkTypeOf(record) != "eval") return false;
  return record::BenchmarkId(record) == eval || record::StringAt(record, "/eval/dataset") == eval;
}

std::optional<PairedAccuracy> PairAccuracy(const json& a, const json& b) {
  const auto ka = Attempts(a), kb = Attempts(b);
  if (!ka || !kb) return std::nullopt;
  PairedAccuracy p;
  // question -> (A correct, B correct, attempts)
  std::map<std::string, std::array<int64_t, 3>> questions;
  for (const auto& [key, va] : *ka) {
    const auto it = kb->find(key);
    if (it == kb->end()) {
      p.only_in_a.push_back(key);
      continue;
    }
    const bool ca = va.second, cb = it->second.second;
    ++p.paired;
    p.both_correct += ca && cb;
    p.both_wrong += !ca && !cb;
    p.only_a += ca && !cb;
    p.only_b += !ca && cb;
    auto& q = questions[va.first];
    q[0] += ca;
    q[1] += cb;
    q[2] += 1;
  }
  for (const auto& [key, vb] : *kb) {
    if (!ka->count(key)) p.only_in_b.push_back(key);
  }
  p.p_value = McNemarExactP(p.only_a, p.only_b);
  if (p.paired == 0) return p;
  const double n = static_cast<double>(p.paired);
  p.accuracy_a = static_cast<double>(p.both_correct + p.only_a) / n;
  p.accuracy_b = static_cast<double>(p.both_correct + p.only_b) / n;
  p.difference = static_cast<double>(p.only_b - p.only_a) / n;  // exact: no 0.55 - 0.6
  p.ci95_low = p.ci95_high = p.difference;
  if (questions.size() < 2) return p;
  std::vector<std::array<int64_t, 3>> q;
  for (const auto& [id, v] : questions) q.push_back(v);
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL);
  std::uniform_int_distribution<size_t> pick(0, q.size() - 1);
  constexpr int kResamples = 10000;
  std::vector<double> diffs;
  diffs.reserve(kResamples);
  for (int r = 0; r < kResamples; ++r) {
    int64_t sa = 0, sb = 0, sn = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      const auto& x = q[pick(rng)];
      sa += x[0];
      sb += x[1];
      sn += x[2];
    }
    diffs.push_back(static_cast<double>(sb - sa) / static_cast<double>(sn));
  }
  std::sort(diffs.begin(), diffs.end());
  const auto at = [&](double f) {
    const size_t i = static_cast<size_t>(f * (kResamples - 1) + 0.5);
    return diffs[std::min(i, diffs.size() - 1)];
  };
  p.ci95_low = at(0.025);
  p.ci95_high = at(0.975);
  return p;
}

}  // namespace pipette
