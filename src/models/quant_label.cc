// What a model file's tensors hold against the quantization its header names: the honest label
// shown wherever a configuration is named (issue 7: a stories260K "Q4_K_M" holds no q4_K tensor).
// Pure string work, no ggml: the store, analysis and reports use it without the models library.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pipette/gguf.h"

namespace pipette {

std::string PrincipalTensorType(const std::string& quant) {
  static const std::map<std::string, std::string> kSpecial = {
      {"Q2_K_S", "q2_K"}, {"Q3_K_S", "q3_K"},  {"Q3_K_M", "q3_K"}, {"Q3_K_L", "q3_K"},
      {"Q4_K_S", "q4_K"}, {"Q4_K_M", "q4_K"},  {"Q5_K_S", "q5_K"}, {"Q5_K_M", "q5_K"},
      {"IQ2_M", "iq2_s"}, {"IQ3_XS", "iq3_s"}, {"IQ3_M", "iq3_s"}, {"MXFP4_MOE", "mxfp4"}};
  if (auto it = kSpecial.find(quant); it != kSpecial.end()) return it->second;
  if (quant.empty() || quant.rfind("FTYPE_", 0) == 0) return "";
  std::string t;
  for (char c : quant) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (t.size() >= 4 && t.compare(t.size() - 2, 2, "_k") == 0) t[t.size() - 1] = 'K';  // q6_K
  return t;
}

std::string QuantLabelMismatch(const std::string& quant,
                               const std::map<std::string, uint64_t>& tensor_types) {
  const std::string principal = PrincipalTensorType(quant);
  if (principal.empty() || tensor_types.empty() || tensor_types.count(principal) > 0) return "";
  // Most frequent first; f32/f16 tensors (norms, kept in full precision by every quantization)
  // only when nothing else is there, since they say nothing about the fallback.
  std::vector<std::pair<std::string, uint64_t>> types;
  for (const auto& [type, count] : tensor_types) {
    if (type != "f32" && type != "f16") types.emplace_back(type, count);
  }
  if (types.empty()) types.assign(tensor_types.begin(), tensor_types.end());
  std::stable_sort(types.begin(), types.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string held;
  for (const auto& [type, count] : types) {
    held += (held.empty() ? "" : ", ") + type + " x" + std::to_string(count);
  }
  return "no " + principal + " tensors: " + held;
}

std::string QuantLabel(const std::string& quant,
                       const std::map<std::string, uint64_t>& tensor_types) {
  const std::string mismatch = QuantLabelMismatch(quant, tensor_types);
  return mismatch.empty() ? quant : quant + " (" + mismatch + ")";
}

std::string QuantLabel(const nlohmann::json& model) {
  if (!model.is_object()) return "";
  const std::string quant = model.contains("quant") && model["quant"].is_string()
                                ? model["quant"].get<std::string>()
                                : std::string();
  // A quantization inferred from the tensors (no general.file_type) names what they hold.
  if (model.contains("quant_inferred") && model["quant_inferred"] == true) return quant;
  std::map<std::string, uint64_t> types;
  if (model.contains("tensor_types") && model["tensor_types"].is_object()) {
    for (const auto& [type, count] : model["tensor_types"].items()) {
      if (count.is_number_unsigned() || (count.is_number_integer() && count.get<int64_t>() >= 0)) {
        types[type] = count.get<uint64_t>();
      }
    }
  }
  return QuantLabel(quant, types);
}

}  // namespace pipette
