// A reply line of the llamacpp driver, which may run on a device the harness does not control:
// ReplyFromLine (bounded JSON, "ok", the error it carries), then every decoding the runtime applies to an "ok" reply (load facts, tokenize,
// prefill, decode, generate, complete). Anything: an Error, never an exception or a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtimes/llamacpp/driver_client.h"
#include "runtimes/llamacpp/llamacpp_runtime.h"
#include "runtimes/llamacpp/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace p = pipette::protocol;
  const std::string line(reinterpret_cast<const char*>(data), size);
  const pipette::Result<nlohmann::json> read = pipette::ReplyFromLine(line, "decode");
  if (!read.ok()) return 0;
  const nlohmann::json& reply = *read;
  static const nlohmann::json asked = {{"n_batch", 2048}, {"n_ubatch", 512}, {"n_ctx", 0}};
  (void)pipette::LoadFactsFromReply(reply, asked);
  (void)p::ReadReply<p::TokenizeReply>(reply, "input");
  (void)p::ReadReply<p::PrefillReply>(reply, p::kPrefill);
  (void)p::ReadReply<p::DecodeReply>(reply, p::kDecode);
  (void)p::ReadReply<p::GenerateReply>(reply, p::kGenerate);
  (void)p::ReadReply<p::CompletionReply>(reply, p::kComplete);
  return 0;
}
