// Names of llama.cpp quantizations: general.file_type values (LLAMA_FTYPE_* in llama.h) and the
// type names llama-quantize accepts (QUANT_OPTIONS in tools/quantize/quantize.cpp), both at the
// pinned llama.cpp commit.
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "models/llama_tools.h"
#include "pipette/gguf.h"


namespace pipette {
namespace {

constexpr int kFtypeGuessedFlag = 1024;  // LLAMA_FTYPE_GUESSED

// {file_type, name}; names as llama-quantize spells them.
const std::vector<std::pair<int, std::string>>& FtypeTable() {
  static const std::vector<std::pair<int, std::string>> table = {
      {0, "F32"},      {1, "F16"},      {2, "Q4_0"},       {3, "Q4_1"},    {7, "Q8_0"},
      {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},      {11, "Q3_K_S"}, {12, "Q3_K_M"},
      {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},    {16, "Q5_K_S"}, {17, "Q5_K_M"},
      {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},    {21, "Q2_K_S"}, {22, "IQ3_XS"},
      {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},    {26, "IQ3_S"},  {27, "IQ3_M"},
      {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},    {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"}, {39, "NVFP4"},  {40, "Q1_0"},
      {41, "Q2_0"},
  };
  return table;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::string FtypeName(int file_type) {
  const int base = file_type & ~kFtypeGuessedFlag;
  for (const auto& [value, name] : FtypeTable()) {
    if (value == base) return name;
  }
  return "FTYPE_" + std::to_string(file_type);
}

std::string QuantNameOfTensorType(const std::string& ggml_type_name) {
  return Upper(ggml_type_name);
}

const std::vector<std::string>& QuantizeTypeNames() {
  // QUANT_OPTIONS of llama-quantize, in its order; "Q3_K", "Q4_K", "Q5_K" are its aliases for the
  // _M variants and "COPY" copies tensors unchanged.
  static const std::vector<std::string> names = {
      "Q1_0",   "Q2_0",    "Q4_0",   "Q4_1",  "MXFP4_MOE", "Q5_0",   "Q5_1",   "IQ2_XXS",
      "IQ2_XS", "IQ2_S",   "IQ2_M",  "IQ1_S", "IQ1_M",     "TQ1_0",  "TQ2_0",  "Q2_K",
      "Q2_K_S", "IQ3_XXS", "IQ3_S",  "IQ3_M", "Q3_K",      "IQ3_XS", "Q3_K_S", "Q3_K_M",
      "Q3_K_L", "IQ4_NL",  "IQ4_XS", "Q4_K",  "Q4_K_S",    "Q4_K_M", "Q5_K",   "Q5_K_S",
      "Q5_K_M", "Q6_K",    "Q8_0",   "F16",   "BF16",      "F32",    "COPY",
  };
  return names;
}

std::string CanonicalQuantizeType(const std::string& type_name) {
  const std::string upper = Upper(type_name);
  const auto& names = QuantizeTypeNames();
  return std::find(names.begin(), names.end(), upper) != names.end() ? upper : std::string();
}

std::string QuantFallbackWarning(const GgufInfo& info) {
  if (info.quant_inferred) return "";
  const std::string mismatch = QuantLabelMismatch(info.quant, info.tensor_types);
  if (mismatch.empty()) return "";
  return info.file_name + " is labelled " + info.quant + " but has " + mismatch +
         ": llama.cpp fell back to other types, probably because the rows are not a multiple of " +
         info.quant + "'s block size";
}

}  // namespace pipette
