// Reading the header of a GGUF model file (the format of llama.cpp/ggml, versions 2 and 3).
//
// pipette resolves a model from its header, never from its file name (DESIGN.md 4.2 step 1):
// architecture, parameter count, quantization (`general.file_type`), the per-tensor type histogram,
// training context and vocabulary. The parser is pipette's own so that every way a file can be
// wrong (missing, not GGUF, truncated, corrupt) gets one clear line naming the file and what to do;
// it uses ggml's type tables for tensor sizes, so it knows exactly the types of the pinned
// llama.cpp. Only the header is read (plus the file size); tensor data is never touched.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "pipette/status.h"

namespace pipette {

// What a GGUF header says about a model. Sizes are bytes; counts are plain numbers. A field the
// header does not carry keeps its default (0, "" or -1 as stated).
struct GgufInfo {
  std::string path;       // as given to ReadGgufInfo
  std::string file_name;  // last path component
  uint64_t size_bytes = 0;
  uint32_t version = 0;  // GGUF format version: 2 or 3

  std::string architecture;  // general.architecture, e.g. "llama"
  std::string name;          // general.name ("" when absent)

  uint64_t params = 0;  // total element count of all tensors (weights, norms, biases)
  int file_type = -1;   // general.file_type (a LLAMA_FTYPE_* value); -1 when absent
  // The quantization as llama-quantize spells it: "F32", "F16", "Q8_0", "Q4_K_M", ...; from
  // general.file_type when present (see FtypeName), otherwise inferred (quant_inferred = true):
  // the most common type, by bytes, of the tensors with 2 or more dimensions, upper-cased ("Q8_0",
  // "F32" for an all-F32 model). "" for a file with no tensors.
  std::string quant;
  bool quant_inferred = false;
  std::map<std::string, uint64_t> tensor_types;  // ggml type name ("f32", "q8_0") -> tensor count
  uint64_t tensor_bytes = 0;  // sum of tensor data sizes: bytes of weights (no padding)

  uint64_t n_ctx_train = 0;  // <arch>.context_length (tokens)
  uint64_t vocab_size = 0;   // entries of tokenizer.ggml.tokens, else <arch>.vocab_size
  uint64_t n_embd = 0;       // <arch>.embedding_length
  uint64_t n_layer = 0;      // <arch>.block_count
  uint64_t n_head = 0;       // <arch>.attention.head_count (largest value if per layer)
  uint64_t n_head_kv = 0;  // <arch>.attention.head_count_kv; n_head when absent (llama.cpp's rule)
  uint64_t n_ff = 0;       // <arch>.feed_forward_length (largest value if per layer)

  // A synthetic model made by WriteSyntheticModel (pipette/synth.h): random weights of a real
  // architecture's shape. Its performance stands for the shape only, never for any quality.
  bool synthetic = false;  // key pipette.synthetic present and true
  nlohmann::json synth;    // {preset, seed, shape_of} from pipette.synth.*; null when not synthetic
};

// Reads and validates the header of the GGUF file at `path`. Also checks that the file is long
// enough to hold all tensor data (data section start, aligned to general.alignment, plus the end
// of the last tensor). Memory use is bounded by the header's own size; large arrays (the token
// list) are skipped, not loaded.
// Errors (one line, starting with `path`): the file is missing, a directory or unreadable; it is
// not GGUF (bad magic); its GGUF version is not 2 or 3 (or it is big-endian); it is truncated
// (header or tensor data); it is corrupt (counts or lengths beyond the file size, unknown value or
// tensor types, bad dimensions or offsets).
Result<GgufInfo> ReadGgufInfo(const std::string& path);

// The same for a file that lives elsewhere (a model on a device, `--model device:/PATH`), read
// from `prefix_path`: a copy of its first bytes; `file_size` is the whole file's size and every
// message names `path`. When the header goes on past the copy, the error says so and
// `*prefix_short` is set (it is cleared otherwise): copy more of the file and read again.
Result<GgufInfo> ReadGgufInfoFromPrefix(const std::string& prefix_path, const std::string& path,
                                        uint64_t file_size, bool* prefix_short);

// The result record's model{} block (DESIGN.md 5) for `info`: path, file_name, size_bytes,
// gguf_version, architecture, name, params, quant, quant_inferred, file_type (-1 when absent),
// tensor_types, tensor_bytes, n_ctx_train, vocab_size, n_embd, n_layer, n_head, n_head_kv, n_ff,
// synthetic, synth. It has no sha256: the caller adds it (hashing is the expensive part).
nlohmann::json ToJson(const GgufInfo& info);

// llama.cpp's name of a general.file_type value (LLAMA_FTYPE_*), spelled as llama-quantize takes
// it: 0 -> "F32", 1 -> "F16", 7 -> "Q8_0", 15 -> "Q4_K_M", 32 -> "BF16", ... An unknown value gives
// "FTYPE_<n>". Values carrying llama.cpp's "guessed" flag (1024) name the type without the flag.
std::string FtypeName(int file_type);

// The upper-case quantization name of a ggml tensor type name: "q4_K" -> "Q4_K", "f32" -> "F32".
std::string QuantNameOfTensorType(const std::string& ggml_type_name);

// The ggml tensor type that carries a quantization, e.g. "Q4_K_M" -> "q4_K", "IQ3_M" -> "iq3_s",
// "Q8_0" -> "q8_0"; "" when unknown.
std::string PrincipalTensorType(const std::string& quant);

// What the tensors hold when none of them carries `quant`'s principal type, e.g.
// "no q4_K tensors: q5_0 x29, q8_0 x3" (types by count, most frequent first; f32/f16 norms left
// out unless nothing else is there); "" when they do carry it, when the principal type is unknown
// or when `tensor_types` (ggml type name -> tensor count) is empty.
std::string QuantLabelMismatch(const std::string& quant,
                               const std::map<std::string, uint64_t>& tensor_types);

// The quantization as pipette names it wherever a configuration is shown (tables, charts, select,
// compare, reports): `quant`, and when the tensors do not carry it, what they hold:
// "Q4_K_M (no q4_K tensors: q5_0 x29, q8_0 x3)". A label is never shown without that.
std::string QuantLabel(const std::string& quant,
                       const std::map<std::string, uint64_t>& tensor_types);

// The same for a result record's model{} block (quant, quant_inferred, tensor_types); a
// quantization inferred from the tensors is shown as it is. "" when `model` is not an object.
std::string QuantLabel(const nlohmann::json& model);

// A one-line warning when a model's tensors do not carry the quantization its header names
// (llama-quantize falls back to other types for tensors whose rows are not a multiple of the
// type's block size, and still writes the requested file type); "" when they do. Never a silent
// fallback: `models quantize` prints it and results record it in logs.warnings.
std::string QuantFallbackWarning(const GgufInfo& info);

}  // namespace pipette
