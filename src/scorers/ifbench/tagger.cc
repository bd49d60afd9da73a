// nltk.pos_tag(tokens) for English: NLTK 3.9.2's PerceptronTagger (nltk/tag/perceptron.py) over
// its averaged_perceptron_tagger_eng JSON files, inference only.
//
// What upstream does, and what this file reproduces:
// - context = ["-START-", "-START2-"] + [normalize(t) for t in tokens] + ["-END-", "-END2-"],
//   prev, prev2 = "-START-", "-START2-"; normalize(w) is "!HYPHEN" when w has a '-' not at its
//   start, "!YEAR" for 4 str.isdigit characters, "!DIGITS" when w[0].isdigit(), else w.lower().
// - A token found in tagdict (by the raw token) takes that tag; otherwise its 14 feature
//   strings ("bias", "i suffix " + w[-3:], "i pref1 " + w[0], "i-1 tag " + prev, ...) are looked
//   up in weights, and scores[label] += 1 * weight for every feature found, in feature order, in
//   doubles starting at 0.0. The tag is max(classes, key=(scores[label], label)): the highest
//   score, ties to the greatest label in code point order.
// - The 14 feature names are distinct and none of them is a prefix of another followed by a
//   space, so the 14 strings are always distinct: every feature's value is 1, and 1 * weight is
//   weight exactly. So the score of a label is the same sum, in the same order, as Python's.
// - Slicing is by code point; keys are compared as UTF-8 bytes (equal exactly when the Python
//   strings are equal), labels as UTF-8 bytes (the same order as code points).
//
// The weights are read with RapidJSON's SAX reader, numbers as strings, each converted by
// std::from_chars (correctly rounded, as Python's float() is); RapidJSON's own number conversion
// is never used.
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scorers/ifbench/nlp.h"

namespace pipette::scorers::ifbench {
namespace tagger_internal {

struct Model {
  // The distinct tags of classes.json in ascending (code point) order, so that among equal
  // scores the greatest index is Python's max.
  std::vector<std::string> classes;
  // tagdict.json: token (UTF-8) -> tag; an empty tag counts as absent, as `if not tag` does.
  std::unordered_map<std::string, std::string> tagdict;

  // weights.json: feature -> [(class index, weight)], as an open-addressed hash table over
  // `features` (slot = feature index + 1, 0 = empty) with the keys in one arena.
  struct Feature {
    uint32_t key_offset;
    uint32_t key_length;
    uint32_t begin;  // range in labels / weights
    uint32_t end;
  };
  std::string keys;
  std::vector<Feature> features;
  std::vector<uint32_t> slots;
  std::vector<uint8_t> labels;
  std::vector<double> weights;

  std::string_view Key(const Feature& f) const {
    return std::string_view(keys).substr(f.key_offset, f.key_length);
  }
  const Feature* Find(std::string_view key) const {
    if (slots.empty()) return nullptr;
    const size_t mask = slots.size() - 1;
    const size_t hash = std::hash<std::string_view>{}(key);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint32_t slot = slots[i];
      if (slot == 0) return nullptr;
      const Feature& f = features[slot - 1];
      if (Key(f) == key) return &f;
    }
  }
  // Index of `key` in features, adding it (with an empty range) when new.
  size_t Intern(std::string_view key) {
    const size_t mask = slots.size() - 1;
    const size_t hash = std::hash<std::string_view>{}(key);
    size_t i = hash & mask;
    for (;; i = (i + 1) & mask) {
      const uint32_t slot = slots[i];
      if (slot == 0) break;
      if (Key(features[slot - 1]) == key) return slot - 1;
    }
    features.push_back(
        {static_cast<uint32_t>(keys.size()), static_cast<uint32_t>(key.size()), 0, 0});
    keys.append(key);
    slots[i] = static_cast<uint32_t>(features.size());
    if (features.size() * 2 > slots.size()) Rehash(slots.size() * 2);
    return features.size() - 1;
  }
  void Rehash(size_t size) {
    slots.assign(size, 0);
    const size_t mask = size - 1;
    for (size_t f = 0; f < features.size(); ++f) {
      size_t i = std::hash<std::string_view>{}(Key(features[f])) & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = static_cast<uint32_t>(f + 1);
    }
  }
};

}  // namespace tagger_internal

// The private model type of nlp.h, defined here.
struct PerceptronTagger::Data : tagger_internal::Model {};

namespace {

using tagger_internal::Model;

constexpr const char* kClassesFile = "averaged_perceptron_tagger_eng.classes.json";
constexpr const char* kTagdictFile = "averaged_perceptron_tagger_eng.tagdict.json";
constexpr const char* kWeightsFile = "averaged_perceptron_tagger_eng.weights.json";

// Numbers stay text (never converted by RapidJSON); no recursion; UTF-8 checked.
constexpr unsigned kParseFlags = rapidjson::kParseNumbersAsStringsFlag |
                                 rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseValidateEncodingFlag;

Error JsonError(const char* file, const rapidjson::ParseResult& r) {
  return MakeError(std::string(file) + ": not valid JSON (byte " + std::to_string(r.Offset()) +
                   ": " + rapidjson::GetParseError_En(r.Code()) + ")");
}

std::string Quote(std::string_view s) {
  constexpr size_t kMax = 60;
  std::string out = "'";
  out.append(s.substr(0, kMax));
  if (s.size() > kMax) out += "...";
  return out + "'";
}

// SAX handler for classes.json (kList: a list of strings, kept in `pairs` as (string, ""))
// and tagdict.json (kObject: an object of string -> string, kept in order).
class StringsHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, StringsHandler> {
 public:
  enum Shape { kList, kObject };
  explicit StringsHandler(Shape shape) : shape_(shape) {}

  const std::string& error() const { return error_; }
  std::vector<std::pair<std::string, std::string>>& pairs() { return pairs_; }

  bool StartArray() {
    if (shape_ != kList || depth_ != 0) return Default();
    ++depth_;
    return true;
  }
  bool StartObject() {
    if (shape_ != kObject || depth_ != 0) return Default();
    ++depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  // With kParseNumbersAsStringsFlag a number arrives here, not as a String.
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return Default(); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (depth_ != 1) return Default();
    if (shape_ == kList) {
      pairs_.emplace_back(std::string(s, n), std::string());
    } else {
      pairs_.emplace_back(key_, std::string(s, n));
    }
    return true;
  }
  bool Default() {
    if (depth_ == 0) {
      error_ = shape_ == kList ? "not a list of tags" : "not an object of word -> tag";
    } else {
      error_ = shape_ == kList ? "an element is not a string"
                               : "the tag of " + Quote(key_) + " is not a string";
    }
    return false;
  }

 private:
  Shape shape_;
  int depth_ = 0;
  std::string key_;
  std::vector<std::pair<std::string, std::string>> pairs_;
  std::string error_;
};

// SAX handler for weights.json: {feature: {tag: number, ...}, ...}. Duplicate keys keep the
// last value, as Python's dict does (a feature's weights are replaced as a whole; a repeated tag
// within one feature replaces that tag's weight). Tags not in classes are dropped: Python's max
// only reads the scores of classes.
class WeightsHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, WeightsHandler> {
 public:
  explicit WeightsHandler(Model* data) : data_(data) {}

  const std::string& error() const { return error_; }

  bool StartObject() {
    if (depth_ == 0 || (depth_ == 1 && expect_value_)) {
      if (depth_ == 1) {
        Model::Feature& f = data_->features[feature_];
        f.begin = f.end = static_cast<uint32_t>(data_->labels.size());
        expect_value_ = false;
      }
      ++depth_;
      return true;
    }
    return Default();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view key(s, n);
    if (depth_ == 1) {
      feature_ = data_->Intern(key);
    } else {
      const auto it = std::lower_bound(data_->classes.begin(), data_->classes.end(), key);
      label_ = it != data_->classes.end() && *it == key
                   ? static_cast<int>(it - data_->classes.begin())
                   : -1;
      tag_ = key;
    }
    expect_value_ = true;
    return true;
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (depth_ != 2) return Default();
    expect_value_ = false;
    double w = 0;
    const auto [end, ec] = std::from_chars(s, s + n, w);
    if (ec != std::errc() || end != s + n) {
      return Fail("the weight " + std::string(s, n) + " of tag " + Quote(tag_) +
                  " is out of range");
    }
    if (label_ < 0) return true;
    Model::Feature& f = data_->features[feature_];
    for (uint32_t i = f.begin; i < f.end; ++i) {
      if (data_->labels[i] == label_) {
        data_->weights[i] = w;
        return true;
      }
    }
    data_->labels.push_back(static_cast<uint8_t>(label_));
    data_->weights.push_back(w);
    f.end = static_cast<uint32_t>(data_->labels.size());
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  // Anything else (arrays, strings, literals) is the wrong shape.
  bool Default() {
    if (depth_ == 0) return Fail("the top level is not an object");
    if (depth_ == 1) return Fail("its weights are not an object of tag -> number");
    return Fail("the weight of tag " + Quote(tag_) + " is not a number");
  }

 private:
  bool Fail(std::string message) {
    if (depth_ >= 1 && feature_ < data_->features.size()) {
      message = "feature " + Quote(data_->Key(data_->features[feature_])) + ": " + message;
    }
    error_ = std::move(message);
    return false;
  }

  Model* data_;
  int depth_ = 0;
  bool expect_value_ = false;
  size_t feature_ = static_cast<size_t>(-1);
  int label_ = -1;
  std::string tag_;
  std::string error_;
};

// word[-3:], by code point.
TextView Suffix3(TextView s) { return s.size() <= 3 ? s : s.substr(s.size() - 3); }

// PerceptronTagger.normalize.
Text Normalize(TextView word) {
  if (word.find(U'-') != TextView::npos && word[0] != U'-') return U"!HYPHEN";
  if (word.size() == 4 && StrIsDigit(word)) return U"!YEAR";
  if (!word.empty() && IsDigit(word[0])) return U"!DIGITS";
  return Lower(word);
}

}  // namespace

Result<PerceptronTagger> PerceptronTagger::Parse(std::string_view classes_json,
                                                 std::string_view tagdict_json,
                                                 std::string_view weights_json) {
  auto data = std::make_shared<Data>();

  // classes.json: a list of tags. Python keeps them as a set.
  {
    StringsHandler handler(StringsHandler::kList);
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(classes_json.data(), classes_json.size());
    const rapidjson::ParseResult r = reader.Parse<kParseFlags>(stream, handler);
    if (!handler.error().empty()) {
      return MakeError(std::string(kClassesFile) + ": " + handler.error());
    }
    if (r.IsError()) return JsonError(kClassesFile, r);
    for (auto& [tag, unused] : handler.pairs()) data->classes.push_back(std::move(tag));
    std::sort(data->classes.begin(), data->classes.end());
    data->classes.erase(std::unique(data->classes.begin(), data->classes.end()),
                        data->classes.end());
    if (data->classes.empty()) {
      return MakeError(std::string(kClassesFile) + ": no tags (Python's max() would fail)");
    }
    if (data->classes.size() > 256) {
      return MakeError(std::string(kClassesFile) + ": more than 256 tags");
    }
  }

  // tagdict.json: an object word -> tag; a repeated word takes its last tag.
  {
    StringsHandler handler(StringsHandler::kObject);
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(tagdict_json.data(), tagdict_json.size());
    const rapidjson::ParseResult r = reader.Parse<kParseFlags>(stream, handler);
    if (!handler.error().empty()) {
      return MakeError(std::string(kTagdictFile) + ": " + handler.error());
    }
    if (r.IsError()) return JsonError(kTagdictFile, r);
    data->tagdict.reserve(handler.pairs().size());
    for (auto& [word, tag] : handler.pairs()) {
      data->tagdict.insert_or_assign(std::move(word), std::move(tag));
    }
  }

  // weights.json, streamed.
  {
    if (weights_json.size() >= UINT32_MAX) {  // offsets into the model are 32-bit
      return MakeError(std::string(kWeightsFile) + ": larger than 4 GiB");
    }
    data->slots.assign(1u << 17, 0);
    data->features.reserve(80000);
    data->keys.reserve(weights_json.size() / 4);
    data->labels.reserve(weights_json.size() / 20);
    data->weights.reserve(weights_json.size() / 20);
    WeightsHandler handler(data.get());
    rapidjson::Reader reader;
    rapidjson::MemoryStream stream(weights_json.data(), weights_json.size());
    const rapidjson::ParseResult r = reader.Parse<kParseFlags>(stream, handler);
    if (!handler.error().empty()) {
      return MakeError(std::string(kWeightsFile) + ": " + handler.error());
    }
    if (r.IsError()) return JsonError(kWeightsFile, r);
    data->features.shrink_to_fit();
    data->keys.shrink_to_fit();
    data->labels.shrink_to_fit();
    data->weights.shrink_to_fit();
  }

  PerceptronTagger tagger;
  tagger.data_ = std::move(data);
  return tagger;
}

namespace {

// Tags tokens[0 .. count) of `tokens` (the rest only read as context), as PerceptronTagger.tag.
std::vector<std::string> TagPrefix(const Model& d, const std::vector<Text>& tokens, size_t count) {
  const size_t n = tokens.size();
  count = std::min(count, n);
  std::vector<std::string> out;
  out.reserve(count);
  if (count == 0) return out;

  // context[i + 2] for i < n; only tokens up to count + 1 are ever read.
  const size_t n_context = std::min(n, count + 2);
  std::vector<Text> context;
  context.reserve(n_context);
  for (size_t i = 0; i < n_context; ++i) context.push_back(Normalize(tokens[i]));
  static const Text kStart = U"-START-", kStart2 = U"-START2-", kEnd = U"-END-", kEnd2 = U"-END2-";
  // Python's context[i + 2] for token index i (-2 <= i <= n + 1).
  auto at = [&](ptrdiff_t i) -> TextView {
    if (i == -2) return kStart;
    if (i == -1) return kStart2;
    if (i == static_cast<ptrdiff_t>(n)) return kEnd;
    if (i == static_cast<ptrdiff_t>(n) + 1) return kEnd2;
    return context[static_cast<size_t>(i)];
  };

  std::string prev = "-START-", prev2 = "-START2-";
  std::string key;
  std::vector<double> scores(d.classes.size());
  for (size_t t = 0; t < count; ++t) {
    const TextView word = tokens[t];
    std::string tag;
    if (const auto it = d.tagdict.find(Encode(word)); it != d.tagdict.end()) tag = it->second;
    if (tag.empty()) {
      const auto i = static_cast<ptrdiff_t>(t);
      std::fill(scores.begin(), scores.end(), 0.0);
      // ' '.join((name,) + args), then scores[label] += weight for each weight of the feature.
      auto add = [&](std::string_view name, std::initializer_list<std::string_view> args) {
        key.assign(name);
        for (std::string_view a : args) {
          key += ' ';
          key += a;
        }
        if (const Model::Feature* f = d.Find(key)) {
          for (uint32_t j = f->begin; j < f->end; ++j) scores[d.labels[j]] += d.weights[j];
        }
      };
      const std::string word_suffix = Encode(Suffix3(word));
      const std::string word_first = Encode(word.substr(0, 1));
      const std::string w0 = Encode(at(i));
      const std::string wm1 = Encode(at(i - 1));
      add("bias", {});
      add("i suffix", {word_suffix});
      add("i pref1", {word_first});
      add("i-1 tag", {prev});
      add("i-2 tag", {prev2});
      add("i tag+i-2 tag", {prev, prev2});
      add("i word", {w0});
      add("i-1 tag+i word", {prev, w0});
      add("i-1 word", {wm1});
      add("i-1 suffix", {Encode(Suffix3(at(i - 1)))});
      add("i-2 word", {Encode(at(i - 2))});
      add("i+1 word", {Encode(at(i + 1))});
      add("i+1 suffix", {Encode(Suffix3(at(i + 1)))});
      add("i+2 word", {Encode(at(i + 2))});
      size_t best = 0;
      for (size_t c = 1; c < scores.size(); ++c) {
        if (scores[c] >= scores[best]) best = c;  // ties: the greater label
      }
      tag = d.classes[best];
    }
    prev2 = std::move(prev);
    prev = tag;
    out.push_back(std::move(tag));
  }
  return out;
}

}  // namespace

// A default-constructed tagger (no model) gives "" for every token.
std::vector<std::string> PerceptronTagger::Tag(const std::vector<Text>& tokens) const {
  if (!data_) return std::vector<std::string>(tokens.size());
  return TagPrefix(*data_, tokens, tokens.size());
}

std::string PerceptronTagger::FirstTag(const std::vector<Text>& tokens) const {
  if (!data_ || tokens.empty()) return "";
  return TagPrefix(*data_, tokens, 1)[0];
}

}  // namespace pipette::scorers::ifbench
