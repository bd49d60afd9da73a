// Results measured elsewhere, brought into the store: llama-bench's own output files as results of
// the `llamacpp-stock` runtime (DESIGN.md 2), so that they take part in compare, select and the
// report like pipette's own cells.
//
// One result per llama-bench test (row), of the pipette benchmark that is exactly the same
// measurement (llama-bench's tests time a prompt and/or single-token generation steps; pipette's
// llamacpp-stock runtime runs the very same tests):
//   pp P        (n_prompt P, n_gen 0, n_depth 0)   -> prefill_throughput_P
//   tg D @ d P  (n_prompt 0, n_gen D, n_depth P)   -> decode_throughput_P_D
// and no other: tg D from an empty context (n_depth 0) has no pipette benchmark (decode_throughput
// needs a context of P >= 1 tokens); pp P + tg D (-pg) times the two together; pp P @ d N times a
// prompt after a context. Such rows are refused, one line each, unless skipped.
//
// What a record holds (docs/result-record.md, "Imported results"): `imported` {tool, format,
// file, file_sha256, row, line, build{commit, number}, model_filename, samples, fields (the row as
// llama-bench wrote it), unknown_fields}; the model's GGUF header and SHA-256 as `pipette run`
// records them (so imported results group with pipette's cells of the same file); runtime
// {name "llamacpp-stock", version "b<build_number>", commit build_commit, backends, settings in
// llamacpp-stock's names (threads, n_gpu_layers, mmap, flash_attn, n_batch, n_ubatch, type_k,
// type_v, poll; other llama-bench settings under their own names where not at llama-bench's
// default)}; started_at = finished_at = llama-bench's test_time. Only the provenance the file
// carries: no device fingerprint unless the run is declared to be this machine's (device then
// holds only llama-bench's cpu_info and gpu_info), no readiness, thermal or memory data.
// Metrics: with samples_ns (json, jsonl), one sample per repetition and pipette's own statistics
// (median, bootstrap interval, harness.ci_reached against a 2% target); without (sql), the
// headline is llama-bench's mean (avg_ts, avg_ns) with `estimate: "mean"`, n 0 and no interval,
// and the record says so in logs.warnings.
//
// Thread-safety: ImportLlamaBench keeps no state; calls may run at once on different files.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

struct LlamaBenchImportOptions {
  // Model files to read in place of the ones the rows name (model_filename): for a file moved or
  // renamed since, or a relative path from another working directory. A row takes the given path
  // whose file name equals its model_filename's; when the file names a single model and a single
  // path is given, that path. A row without one reads model_filename itself (relative to the
  // current directory).
  std::vector<std::string> model_paths;
  // Fields this pipette does not know (a newer llama-bench): refused by default (such a field
  // may be a setting that changes the measurement); true keeps them in imported.unknown_fields.
  bool allow_unknown_fields = false;
  // Rows that match no pipette benchmark: refused by default (the whole file is then refused);
  // true leaves them out, each listed in LlamaBenchImport::skipped.
  bool skip_unmatched = false;
  // The llama-bench run was made on this machine: record its fingerprint (device.id, as
  // `pipette run` records it) after checking that llama-bench's cpu_info names this machine's
  // CPU. false: no fingerprint.
  bool this_device = false;
  // SHA-256 of a model file (the CLI's store-cached hash); empty: read the file.
  std::function<Result<std::string>(const std::string&)> hash_file;
};

struct LlamaBenchImport {
  std::string format;  // "json", "jsonl" or "sql"
  // One pipette.result/1 record per imported row, in file order, each valid against the record
  // schema (pipette/record_schema.h). result_id is a UUIDv7 of llama-bench's test_time and a hash
  // of the file's SHA-256 and the row, so importing the same file again gives the same records.
  std::vector<nlohmann::json> records;
  // One line per row left out (skip_unmatched): "<file>:<line>: test N (tg16): ...".
  std::vector<std::string> skipped;
};

// Reads the llama-bench output file at `path` (-o json, jsonl or sql; told apart by content) and
// builds every record before returning any: all or nothing. Errors (one line, naming the file and
// line where there is one, and what to do): the file cannot be read; it is empty, not
// llama-bench's output, not valid JSON (an interrupted run) or an sql statement not llama-bench's;
// a row lacks a field llama-bench always writes or has one of the wrong type; unknown fields
// (unless allowed); a row that matches no pipette benchmark (unless skipped; also when every row
// is skipped); a model file that no longer exists (give its new path), is not a readable GGUF, or
// is not the file llama-bench measured (its parameter count differs); a row whose
// test_time is not an RFC 3339 time; with this_device, a CPU other than this machine's.
Result<LlamaBenchImport> ImportLlamaBench(const std::string& path,
                                          const LlamaBenchImportOptions& options);

}  // namespace pipette
