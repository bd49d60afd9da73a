// Preparing model files with llama.cpp's own tools (built from the pinned commit):
// `llama-quantize` and `llama-convert-llama2c-to-ggml`. Each runs as a child process; pipette
// checks the inputs first (so a mistake gets a clear message instead of a tool's log) and checks
// the output afterwards by reading its GGUF header. Outputs are written to a temporary file beside
// the target and renamed into place, so a failed or interrupted run never leaves a partial file.
#pragma once

#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// Error::stage of failures after the inputs were accepted (the tool is missing or failed, or its
// output could not be written or validated). Errors about the inputs themselves have an empty
// stage, so a caller can tell bad input (exit 2) from a failed operation (exit 1).
inline constexpr char kPrepareStage[] = "prepare";

// Directory holding llama.cpp's tool binaries: $PIPETTE_LLAMA_BIN_DIR when set and non-empty,
// otherwise <PIPETTE_LLAMA_PREFIX>/bin of the build.
std::string LlamaToolsDir();

// The type names llama-quantize accepts, upper case, in its order ("Q4_0", ..., "Q4_K_M", "Q8_0",
// "F16", "BF16", "F32", "COPY"; "Q3_K", "Q4_K", "Q5_K" are aliases of the _M variants).
const std::vector<std::string>& QuantizeTypeNames();

// The canonical (upper-case) spelling of `type_name` if llama-quantize accepts it (matching is
// case-insensitive, like llama-quantize's), otherwise "".
std::string CanonicalQuantizeType(const std::string& type_name);

// Quantizes the GGUF model `in_path` to `type_name` (see QuantizeTypeNames) and writes `out_path`
// (replaced if it exists), by running `llama-quantize IN OUT TYPE`.
// Errors: unknown type (the message lists the valid ones), `in_path` is not a readable GGUF file
// (ReadGgufInfo's message), `out_path` equals `in_path`, the tool is missing, the tool fails (the
// message carries the last line of its output), or the output is not a valid GGUF file.
Status QuantizeModel(const std::string& in_path, const std::string& type_name,
                     const std::string& out_path);

// Converts a llama2.c checkpoint (`model_bin`, e.g. stories260K.bin) with its tokenizer
// (`tokenizer_bin`, e.g. tok512.bin, or a GGUF file to copy the vocabulary from) into an F32 GGUF
// model at `out_path` (replaced if it exists), by running `llama-convert-llama2c-to-ggml
// --copy-vocab-from-model TOK --llama2c-model BIN --llama2c-output-model OUT`. The converter
// always writes llama.context_length = 128; pipette then sets it, in place, to the checkpoint's own
// seq_len (512 for stories260K), the context the model was trained for. The converter's -1 for the
// separator and padding tokens (a llama2.c model has neither) are left out (DropInvalidTokenIds),
// so that the model's metadata names only tokens it has.
// Errors: an input is missing or not a regular file, the checkpoint's header is not a llama2.c
// header or the file is shorter than its weights, the tool is missing or fails (last line of its
// output), or the output is not a valid GGUF file.
Status ImportLlama2c(const std::string& model_bin, const std::string& tokenizer_bin,
                     const std::string& out_path);

}  // namespace pipette
