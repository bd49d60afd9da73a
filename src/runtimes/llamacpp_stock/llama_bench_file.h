// llamacpp-stock, results made elsewhere: reading a file of llama-bench's own output (-o json,
// -o jsonl, -o sql) into typed rows, one per test, so that `pipette import llama-bench` can turn
// each into a result record. Pure: nothing here opens the model or the store.
//
// The three formats, as llama-bench writes them (tools/llama-bench/llama-bench.cpp at the pinned
// commit 80fb11a; json_printer, jsonl_printer, sql_printer):
//  - json: "[", one object per test, "]". Each object has the fields of test::get_fields() (typed:
//    strings, integers, booleans, numbers) plus samples_ns (integer nanoseconds, one per
//    repetition) and samples_ts (tokens/s of each). An interrupted run leaves "[" without "]".
//  - jsonl: one such object per line.
//  - sql: "CREATE TABLE IF NOT EXISTS llama_bench (...);" then one "INSERT INTO llama_bench
//    (f1, f2, ...) VALUES ('v1', 'v2', ...);" per test, every value quoted text (booleans "0"/"1").
//    No samples: only avg_ns, stddev_ns, avg_ts and stddev_ts.
// Values are the same in all three: a row read from sql equals the json row without samples.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

enum class LlamaBenchFormat { kJson, kJsonl, kSql };

// "json", "jsonl", "sql".
std::string FormatName(LlamaBenchFormat format);

// One test of the file.
struct LlamaBenchRow {
  // Where it is: 1-based position among the file's tests, and the 1-based line it starts on.
  int index = 0;
  int line = 0;
  // The fields as llama-bench wrote them, typed (sql values converted by the field's type:
  // integers, booleans from "0"/"1", numbers, text). Known fields only (KnownLlamaBenchFields),
  // unless unknown ones were allowed. samples_ns is absent when the row has no samples (sql).
  nlohmann::json fields;
  // Fields this pipette does not know (a newer llama-bench), in the order they appear; kept out
  // of `fields`.
  nlohmann::json unknown = nlohmann::json::object();
};

struct LlamaBenchFile {
  LlamaBenchFormat format = LlamaBenchFormat::kJson;
  std::vector<LlamaBenchRow> rows;  // in file order; at least one
};

// Every field name llama-bench has written, in this and older versions (older ones: use_mmap,
// flash_attn as a boolean), samples_ns and samples_ts included.
const std::vector<std::string>& KnownLlamaBenchFields();

// Parses `text`, the content of the file at `path` (named in errors). The format is taken from
// the content: "[" json, "{" jsonl, "CREATE TABLE" or "INSERT INTO" sql. Checks every row:
// required fields (build_commit, model_filename, n_prompt, n_gen, avg_ns, avg_ts), each known
// field's type, samples_ns (positive integers, as many as samples_ts when both are there),
// n_prompt, n_gen, n_depth >= 0 and n_prompt + n_gen >= 1.
// Fields it does not know are an error unless `allow_unknown`: a newer llama-bench may record a
// setting that changes the measurement; with it they are kept in LlamaBenchRow::unknown.
// Errors (one line, starting with `path`, naming the line and what to do): empty; not llama-bench
// output; not valid JSON (an interrupted run); a JSON value that is not a list of objects; a sql
// statement that is not llama-bench's; a row without a required field or with a field of the
// wrong type; unknown fields (all of them named, with where they first appear).
Result<LlamaBenchFile> ParseLlamaBenchFile(const std::string& text, const std::string& path,
                                           bool allow_unknown = false);

}  // namespace pipette
