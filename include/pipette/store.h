// The results store (DESIGN.md 2 "store", 5 "result record").
//
// One SQLite file holds every result record (`pipette.result/1` JSON, DESIGN.md 5) with its raw
// per-repetition samples, and a cache of model-file SHA-256 digests. The file is shared safely
// between processes: it runs in WAL mode, every write is one transaction taken with
// BEGIN IMMEDIATE, and a writer waits for another up to a busy timeout before it gives up with an
// error. A failed write (full disk, busy, crash) leaves the file as it was before that write.
//
// Every fallible function returns an Error whose message names the store's path and what to do,
// for example "<path>: database is busy (another pipette is writing); retry". No function
// throws. A ResultStore is NOT thread-safe: use one instance per thread (or lock around it);
// separate instances, in the same or other processes, may use the same file at once.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// The schema string every stored record carries in its "schema" field.
inline constexpr char kResultSchema[] = "pipette.result/1";

// $PIPETTE_STORE if set and non-empty, else $XDG_DATA_HOME/pipette/results.db, else
// $HOME/.local/share/pipette/results.db, else "pipette-results.db" in the working directory.
std::string DefaultStorePath();

// Selects results. Every non-empty field must match; within a list field any one of its values
// matches (`quants = {"Q8_0", "Q4_0"}` selects both); an empty field (or limit 0) matches all.
struct ResultFilter {
  std::vector<std::string> benchmarks;  // benchmark.id, exact
  std::vector<std::string> models;  // model.sha256 prefix (case-insensitive) or model.file_name
                                    // substring
  std::vector<std::string> quants;  // model.quant, exact but case-insensitive ("q4_k_m" matches
                                    // "Q4_K_M")
  std::string status;               // "ok" or "failed"
  std::vector<std::string> devices;   // device.id prefix
  std::vector<std::string> runtimes;  // runtime.name, exact
  std::vector<std::string> labels;    // device.label, exact
  // runtime.settings entries as "key=value" (see ParseSettingFilter): values of one key are
  // alternatives, different keys must all match ({"threads=1", "threads=2", "cpus=0"} selects
  // 1 or 2 threads pinned to CPU 0). A result that did not record the key does not match.
  std::vector<std::string> settings;
  std::string since;      // started at or after this RFC 3339 UTC time or a prefix of it
                          // ("2026", "2026-11-29", "2026-11-29T10:05:00.5Z"); see ParseSince
  int limit = 0;          // at most this many results (the newest); 0 = no limit
};

// The runtime.settings keys results record (DESIGN.md 5; the llamacpp runtime's, harness/record.cc):
// threads, n_gpu_layers, mmap, flash_attn, n_batch, n_ubatch, type_k, type_v, n_ctx, poll, cpus,
// test_leak_bytes.
const std::vector<std::string>& RecordedSettingNames();

// One "key=value" entry of ResultFilter::settings: key = one of RecordedSettingNames(), value =
// the recorded value as text (spaces around it ignored): a number matches a recorded number of
// equal value (threads=2 matches 2 and 2.0) or a recorded string spelled the same ("cpus=0");
// true/false match booleans; anything else matches a string, case-insensitively ("type_k=F16"
// matches "f16"). Errors: "'<text>' is not a setting filter: give KEY=VALUE, e.g. threads=2";
// "unknown setting '<key>' (settings: threads, n_gpu_layers, ...)".
struct SettingFilter {
  std::string key;
  std::string value;
};
Result<SettingFilter> ParseSettingFilter(const std::string& text);

// The text `started_at` is compared with (started_at >= it) for ResultFilter::since: `since`
// without its "Z" (a missing part reads as its start: "2026-11" is 2026-11-01T00:00:00.000Z).
// Accepts an RFC 3339 UTC time ("2026-11-29T10:05:00Z", fractional seconds allowed, "T" and "Z"
// in either case) or a prefix of one ending after a complete field: "2026", "2026-11",
// "2026-11-29", "2026-11-29T10", "2026-11-29T10:05", "2026-11-29T10:05:00". Fields must be in
// range (month 01-12, day within the month, hour 00-23, minute 00-59, second 00-60). Error:
// "'<since>' is not a date or RFC 3339 UTC time (e.g. 2026-11-29 or 2026-11-29T10:00:00Z)".
Result<std::string> ParseSince(const std::string& since);

// One line of a results table: the indexed columns of a record, without parsing its JSON.
// Strings are empty where the record lacks the field.
struct ResultRow {
  std::string result_id;
  std::string short_id;  // shortest prefix of result_id (at least 8 characters) that is unique
                         // in the store when List() ran; Get() accepts it
  std::string config_id, status, benchmark_id, benchmark_type, model_file, model_sha256, quant,
      runtime, device_id, label, started_at;
  // quant as QuantLabel (pipette/gguf.h) names it: "Q4_K_M (no q4_K tensors: q5_0 x29, ...)"
  // when the file's tensors do not carry it.
  std::string quant_label;
  int threads = 0;                 // runtime.settings.threads; 0 when not recorded
  std::optional<double> headline;  // median of the headline metric; absent when not measured
  std::string headline_metric;     // HeadlineMetric(benchmark.type), e.g. "prefill_throughput"
  std::string headline_unit;       // that metric's unit, e.g. "tokens/s"
  std::optional<double> headline_ci95_low, headline_ci95_high;  // its 95% CI of the median
  int headline_n = 0;  // repetitions behind the headline median (metrics.<m>.n); 0: not recorded
  bool ci_reached = false;  // harness.ci_reached: the CI met the target (DESIGN.md 4.2); true
                            // when not recorded (nothing says the result is noisy)
};

// The metric a benchmark type is summarized by: prefill -> "prefill_throughput",
// decode -> "decode_throughput", e2e -> "end_to_end_latency", memory -> "max_host_usage";
// "" for other types.
std::string HeadlineMetric(const std::string& benchmark_type);

// Tunables of Open(); the defaults suit the CLI.
struct StoreOptions {
  // How long a write waits for another process's write transaction before failing with
  // "database is busy", in milliseconds.
  int busy_timeout_ms = 10000;
  // Refuse to grow the file beyond about this many bytes (writes then fail like on a full disk);
  // 0 = no limit. Meant for quotas and for testing disk-full handling.
  int64_t max_size_bytes = 0;
  // Create the file (and missing parent directories) when it does not exist. False for commands
  // that only read: a mistyped path is then an error ("no results store at PATH; ...") instead
  // of a new empty store.
  bool create_if_missing = true;
};

class ResultStore {
 public:
  // Opens the store at `path`, creating missing parent directories, the file and its schema
  // (unless options.create_if_missing is false: then a missing file is an error).
  // Upgrades an older schema in place (PRAGMA user_version). Errors, each naming the path:
  // no such file (without create_if_missing), not an SQLite file / an SQLite file of another program, read-only file or directory, full
  // disk, busy beyond the timeout, or a schema newer than this build understands.
  static Result<std::unique_ptr<ResultStore>> Open(const std::string& path,
                                                   const StoreOptions& options = {});
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  const std::string& path() const { return path_; }

  // Stores `record` atomically: its indexed columns, the full JSON and every numeric field of
  // each samples[] entry (except "rep") as a (result_id, rep, metric, value) row; a sample
  // without "rep" takes its index. Requires schema == kResultSchema, a lowercase UUID
  // result_id, config_id, status "ok"|"failed" (and failure.message when failed), benchmark.id
  // and started_at; other fields are free-form but, when present, metrics must be an object and
  // samples an array of objects with distinct reps. Idempotent: storing the same result_id
  // again succeeds if the content is identical (nothing changes) and fails otherwise.
  Status Put(const nlohmann::json& record);

  // Stores every record of `records` as Put does, in one transaction: all of them or, on any
  // error (an invalid record, one already stored with different content, a full disk), none.
  // A record already stored with identical content is left as it is. The error names the record.
  Status PutAll(const std::vector<nlohmann::json>& records);

  // The record whose result_id is `id_or_prefix` or starts with it (case-insensitive).
  // Returns nullopt when none matches; an Error when the prefix is empty or matches several
  // results (the message says how many).
  Result<std::optional<nlohmann::json>> Get(const std::string& id_or_prefix);

  // Rows matching `filter`, newest first (started_at, then result_id, descending). Errors: a
  // filter.since that ParseSince refuses, a setting that ParseSettingFilter refuses.
  Result<std::vector<ResultRow>> List(const ResultFilter& filter);

  // Full records matching `filter`, newest first.
  Result<std::vector<nlohmann::json>> Records(const ResultFilter& filter);

  // result_ids of the "ok" results of `config_id`, oldest first (for resuming suites).
  Result<std::vector<std::string>> OkResultIds(const std::string& config_id);

  // SHA-256 (lowercase hex) cached for the file at `path` (made absolute, lexically normalized),
  // if it was recorded with exactly this size (bytes) and modification time (ns since the Unix
  // epoch). nullopt on a miss, including when the file changed since.
  Result<std::optional<std::string>> CachedFileHash(const std::string& path, uint64_t size,
                                                    int64_t mtime_ns);
  // Records the digest for (path, size, mtime_ns), replacing what was cached for that path.
  Status PutFileHash(const std::string& path, uint64_t size, int64_t mtime_ns,
                     const std::string& sha256);

  // Runs SQLite's PRAGMA integrity_check; an Error quotes its first complaint.
  Status CheckIntegrity();

 private:
  struct Impl;
  ResultStore(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

// SHA-256 (lowercase hex) of the file at `path`, from the store's cache when the file's size and
// modification time match what was cached, else read in full and cached. A failure to use the
// cache is not an error (the file is hashed); errors: the file cannot be read (names the path).
Result<std::string> CachedSha256(ResultStore& store, const std::string& path);

// Writes one record per line, compact JSON ("jsonl"). Errors: a record that is not an object,
// or a failed stream write.
Status ExportJsonl(const std::vector<nlohmann::json>& records, std::ostream& out);

// Writes CSV (RFC 4180: CRLF line ends, fields with , " CR or LF quoted, quotes doubled) with a
// header row and one row per (result, metric), metrics in name order. Columns: result_id,
// started_at, status, benchmark, type, prefill_tokens, decode_tokens, model_file, model_sha256,
// quant, runtime, runtime_commit, threads, device_id, label, metric, unit, n, median, mean,
// stddev, cv, min, max, ci95_low, ci95_high, failure_stage, failure_message. A result without
// metrics (a failed one) gives one row with an empty metric. Numbers are written in their
// shortest exact form; missing values are empty. Errors: a failed stream write.
Status ExportCsv(const std::vector<nlohmann::json>& records, std::ostream& out);

}  // namespace pipette
