// The CPU work of one signed submission on `pipette serve`, piece by piece, over the real
// stories260K prefill record of the server tests (11.5 KB with its raw samples): parsing the
// body, checking it against the record's JSON Schema, serializing it for storage, and verifying
// the request's Ed25519 signature (SHA-256 of the body included). The sum bounds what one core
// can ingest; compare it with bench/fleet/ingest_load's submissions/s. BM_ParseRecord is what
// the server does (pipette::ParseRecord); BM_ParseThenValidate, the json::parse and
// ValidateRecord it replaced.
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "pipette/identity.h"
#include "pipette/record_schema.h"

namespace {

using nlohmann::json;

const std::string& Body() {
  static const std::string body = [] {
    std::ifstream in(std::string(PIPETTE_SOURCE_DIR) +
                     "/src/server/testdata/stories260k_prefill_record.json");
    std::stringstream s;
    s << in.rdbuf();
    return json::parse(s.str()).dump();
  }();
  return body;
}

void SetBytes(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Body().size()));
}

void BM_ParseBody(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(json::parse(Body()));
  SetBytes(state);
}
BENCHMARK(BM_ParseBody);

void BM_ValidateAgainstSchema(benchmark::State& state) {
  const json record = json::parse(Body());
  for (auto _ : state) {
    pipette::Status s = pipette::ValidateRecord(record);
    if (!s.ok()) state.SkipWithError(s.error().message.c_str());
  }
}
BENCHMARK(BM_ValidateAgainstSchema);

// What the server does with a submission's body: one pass that parses, checks and builds.
void BM_ParseRecord(benchmark::State& state) {
  for (auto _ : state) {
    pipette::Result<json> r = pipette::ParseRecord(Body());
    if (!r.ok()) state.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r);
  }
  SetBytes(state);
}
BENCHMARK(BM_ParseRecord);

// The two steps it replaced, together.
void BM_ParseThenValidate(benchmark::State& state) {
  for (auto _ : state) {
    const json record = json::parse(Body());
    pipette::Status s = pipette::ValidateRecord(record);
    if (!s.ok()) state.SkipWithError(s.error().message.c_str());
  }
  SetBytes(state);
}
BENCHMARK(BM_ParseThenValidate);

void BM_DumpForStorage(benchmark::State& state) {
  const json record = json::parse(Body());
  for (auto _ : state) {
    benchmark::DoNotOptimize(record.dump(-1, ' ', false, json::error_handler_t::strict));
  }
  SetBytes(state);
}
BENCHMARK(BM_DumpForStorage);

void BM_VerifySignature(benchmark::State& state) {
  const pipette::Identity id = pipette::GenerateIdentity();
  const std::string nonce = pipette::NewNonce();
  const std::string message =
      pipette::SigningString("POST", "/api/results", 1764633600, id.client_id, nonce, Body());
  const std::string signature = pipette::SignMessage(id, message);
  for (auto _ : state) {
    const std::string m =
        pipette::SigningString("POST", "/api/results", 1764633600, id.client_id, nonce, Body());
    if (!pipette::VerifyMessage(id.public_key_hex, m, signature)) state.SkipWithError("bad");
  }
}
BENCHMARK(BM_VerifySignature);

}  // namespace

BENCHMARK_MAIN();
