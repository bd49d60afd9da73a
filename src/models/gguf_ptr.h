// Owning pointers to llama.cpp's gguf and ggml contexts: each frees its context (gguf_free,
// ggml_free) when it goes out of scope. Shared by the writers of models/.
#pragma once

#include <memory>

#include "ggml.h"
#include "gguf.h"

namespace pipette {

struct GgufDeleter {
  void operator()(gguf_context* ctx) const { gguf_free(ctx); }
};
struct GgmlDeleter {
  void operator()(ggml_context* ctx) const { ggml_free(ctx); }
};
using GgufPtr = std::unique_ptr<gguf_context, GgufDeleter>;
using GgmlPtr = std::unique_ptr<ggml_context, GgmlDeleter>;

}  // namespace pipette
