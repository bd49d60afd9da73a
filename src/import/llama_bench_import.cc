// `pipette import llama-bench`: llama-bench's output rows as llamacpp-stock results
// (pipette/import.h). Every row is checked and its record built before any is returned.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "base/sha256.h"
#include "pipette/benchmark.h"
#include "pipette/build_info.h"
#include "pipette/cell.h"
#include "pipette/gguf.h"
#include "pipette/import.h"
#include "pipette/record_schema.h"
#include "pipette/stats.h"
#include "platform/bandwidth.h"
#include "platform/noise_floor.h"
#include "platform/device.h"
#include "platform/device_names.h"
#include "runtimes/llamacpp_stock/llama_bench_file.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kRuntime[] = "llamacpp-stock";
constexpr double kCiTarget = 0.02;  // pipette's default (HarnessPolicy::ci_target)

int64_t IntField(const json& f, const char* name, int64_t fallback = 0) {
  const auto it = f.find(name);
  return it != f.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}
std::string TextField(const json& f, const char* name) {
  const auto it = f.find(name);
  return it != f.end() && it->is_string() ? it->get<std::string>() : "";
}

// The test as llama-bench's table names it: "pp512", "tg128", "pp512+tg128", "tg128 @ d256".
std::string TestName(const json& f) {
  const int64_t p = IntField(f, "n_prompt"), g = IntField(f, "n_gen"), d = IntField(f, "n_depth");
  std::string name = p > 0 && g > 0 ? fmt::format("pp{}+tg{}", p, g)
                                    : (p > 0 ? fmt::format("pp{}", p) : fmt::format("tg{}", g));
  if (d > 0) name += fmt::format(" @ d{}", d);
  return name;
}

std::string RowWhere(const std::string& path, const LlamaBenchRow& row) {
  return fmt::format("{}:{}: test {} ({})", path, row.line, row.index, TestName(row.fields));
}

// The pipette benchmark that is exactly the row's measurement, or why there is none.
Result<BenchmarkSpec> BenchmarkOf(const json& f) {
  const int64_t p = IntField(f, "n_prompt"), g = IntField(f, "n_gen"), d = IntField(f, "n_depth");
  std::string id;
  if (p > 0 && g == 0 && d == 0) id = fmt::format("prefill_throughput_{}", p);
  if (p == 0 && g > 0 && d > 0) id = fmt::format("decode_throughput_{}_{}", d, g);
  if (!id.empty()) return ParseBenchmarkId(id);
  if (p == 0) {
    return MakeError(fmt::format(
        "matches no pipette benchmark: it generates {} tokens from an empty context, while "
        "decode_throughput_<P>_<D> generates after a context of P >= 1 tokens; run llama-bench "
        "with a depth (-n {} -d 256 is decode_throughput_256_{})",
        g, g, g));
  }
  if (g > 0) {
    return MakeError(
        "matches no pipette benchmark: it times the prompt and the generation together (-pg); "
        "run them as separate tests (-p and -n with -d)");
  }
  return MakeError(fmt::format(
      "matches no pipette benchmark: it times a prompt after a context of {} tokens, while "
      "prefill_throughput_<P> starts from an empty one; run llama-bench without -d for prompts",
      d));
}

// The model file a row measured: a given path whose file name is the row's, the only given path
// when the file has one model, else model_filename as written.
std::string ModelPathOf(const std::string& model_filename, const LlamaBenchImportOptions& o,
                        size_t models_in_file) {
  const std::string name = fs::path(model_filename).filename().string();
  for (const std::string& given : o.model_paths) {
    if (fs::path(given).filename().string() == name) return given;
  }
  if (o.model_paths.size() == 1 && models_in_file == 1) return o.model_paths.front();
  return model_filename;
}

struct ModelFacts {
  json block;  // the record's model block
};

Result<ModelFacts> ReadModel(const std::string& where, const std::string& recorded,
                             const std::string& path, const json& f,
                             const LlamaBenchImportOptions& o) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    const bool given = path != recorded;
    return MakeError(fmt::format(
        "{}: the model file {} {}; give the path of the model file it measured", where, path,
        given ? "does not exist" : "that llama-bench measured no longer exists"));
  }
  auto info = ReadGgufInfo(path);
  if (!info) return MakeError(where + ": " + info.error().message);
  const int64_t params = IntField(f, "model_n_params", -1);
  if (params >= 0 && static_cast<uint64_t>(params) != info->params) {
    return MakeError(fmt::format(
        "{}: the model file {} has {} parameters but llama-bench measured a model of {} ({}); "
        "give the path of the model file it measured",
        where, path, info->params, params, TextField(f, "model_type")));
  }
  auto sha = o.hash_file ? o.hash_file(path) : Sha256OfFile(path);
  if (!sha) return MakeError(where + ": " + sha.error().message);
  ModelFacts m;
  m.block = ToJson(*info);
  m.block["path"] = fs::absolute(path).lexically_normal().string();
  m.block["sha256"] = *sha;
  return m;
}

// llama-bench's settings in llamacpp-stock's names (stock_runtime.h), and the others under their
// own names where they are not at llama-bench's default (they make another configuration).
json Settings(const json& f, std::vector<std::string>& warnings) {
  json s = json::object();
  if (f.contains("n_threads")) s["threads"] = f["n_threads"];
  if (f.contains("n_gpu_layers")) s["n_gpu_layers"] = f["n_gpu_layers"];
  for (const char* same : {"n_batch", "n_ubatch", "type_k", "type_v", "poll"}) {
    if (f.contains(same)) s[same] = f[same];
  }
  if (const auto fa = f.find("flash_attn"); fa != f.end()) {
    if (fa->is_boolean()) {
      s["flash_attn"] = fa->get<bool>() ? "on" : "off";
    } else {
      const int64_t v = fa->get<int64_t>();
      s["flash_attn"] = v < 0 ? "auto" : (v == 0 ? "off" : "on");
    }
  }
  // Weights: mmap or read in (llama_load_mode_name); auto maps them where every device supports
  // it, which a CPU-only run's does.
  const std::string mode = TextField(f, "load_mode");
  if (f.contains("use_mmap")) {
    s["mmap"] = f["use_mmap"];
  } else if (mode == "mmap" || mode == "none") {
    s["mmap"] = mode == "mmap";
  } else if (mode == "auto" && TextField(f, "backends") == "CPU") {
    s["mmap"] = true;
    warnings.push_back("llama-bench loaded the weights with load_mode auto, which memory-maps "
                       "them on the CPU backend: recorded as mmap true");
  } else if (!mode.empty()) {
    s["load_mode"] = mode;
  }
  const std::map<std::string, json> defaults = {
      {"n_cpu_moe", 0},         {"split_mode", "layer"},        {"main_gpu", 0},
      {"no_kv_offload", false}, {"devices", "auto"},            {"tensor_buft_overrides", "none"},
      {"lazy_mode", "auto"},    {"embeddings", false},          {"no_op_offload", 0},
      {"no_host", false},       {"fit_target", 0},              {"fit_min_ctx", 0},
      {"cpu_mask", "0x0"},      {"cpu_strict", false}};
  for (const auto& [name, value] : defaults) {
    const auto it = f.find(name);
    if (it == f.end()) continue;
    const bool same = *it == value || (value.is_number() && it->is_boolean() &&
                                       it->get<bool>() == (value.get<int>() != 0));
    if (same) continue;
    s[name] = *it;
    warnings.push_back(fmt::format("llama-bench ran with {} = {} (its default: {}), which "
                                   "pipette's llamacpp-stock runs do not set",
                                   name, it->dump(), value.dump()));
  }
  if (const std::string split = TextField(f, "tensor_split");
      !split.empty() && split.find_first_not_of("0./") != std::string::npos) {
    s["tensor_split"] = split;
    warnings.push_back("llama-bench ran with tensor_split = " + split +
                       ", which pipette's llamacpp-stock runs do not set");
  }
  return s;
}

// Milliseconds since the Unix epoch of an RFC 3339 UTC time "YYYY-MM-DDTHH:MM:SSZ"; nullopt when
// it is not one.
std::optional<int64_t> EpochMs(const std::string& t) {
  struct tm tm {};
  const char* end = strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  int ms = 0;
  if (*end == '.') {
    int digits = 0;
    for (++end; *end >= '0' && *end <= '9'; ++end, ++digits) {
      if (digits < 3) ms = ms * 10 + (*end - '0');
    }
    for (; digits < 3 && digits > 0; ++digits) ms *= 10;
  }
  if (std::string(end) != "Z") return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// A UUIDv7 of `ms` whose other bits come from `seed`'s SHA-256: the same row of the same file
// always gets the same id, and ids sort by llama-bench's time.
std::string UuidV7Of(int64_t ms, const std::string& seed) {
  const std::string h = Sha256Hex(seed);  // 64 hex digits
  std::string hex = fmt::format("{:012x}", static_cast<uint64_t>(ms) & 0xffffffffffffULL);
  hex += '7';
  hex += h.substr(0, 3);
  const int variant = 8 + (std::stoi(h.substr(3, 1), nullptr, 16) & 3);
  hex += fmt::format("{:x}", variant) + h.substr(4, 15);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

// samples and metrics from samples_ns; or from the means when the row has none.
void AddMeasurements(const json& f, const BenchmarkSpec& b, json& record,
                     std::vector<std::string>& warnings, const std::string& format) {
  const bool prefill = b.type == BenchmarkType::kPrefill;
  const int tokens = prefill ? b.prefill_tokens : b.decode_tokens;
  const std::string metric = prefill ? "prefill_throughput" : "decode_throughput";
  json samples = json::array();
  json metrics = json::object();
  json& harness = record["harness"];
  if (const auto ns = f.find("samples_ns"); ns != f.end()) {
    std::vector<double> rate, ms;
    for (const json& v : *ns) {
      const double t = v.get<double>();
      rate.push_back(tokens * 1e9 / t);
      ms.push_back(t / 1e6);
      json s = {{"rep", samples.size() + 1},
                {metric, rate.back()},
                {"tokens_in", prefill ? b.prefill_tokens : 0},
                {"tokens_out", prefill ? 0 : b.decode_tokens}};
      if (prefill) s["ttft"] = ms.back();
      samples.push_back(std::move(s));
    }
    const Summary headline = Summarize(rate);
    metrics[metric] = ToJson(headline, "tokens/s");
    if (prefill) metrics["ttft"] = ToJson(Summarize(ms), "ms");
    harness["reps"] = rate.size();
    harness["ci_reached"] = rate.size() >= 3 && CiWithinTarget(headline, kCiTarget);
  } else {
    const auto mean_only = [](double mean, double stddev, const char* unit) {
      return json{{"unit", unit},   {"n", 0},
                  {"median", mean}, {"mean", mean},
                  {"stddev", stddev}, {"cv", mean != 0 ? stddev / mean : 0.0},
                  {"min", nullptr}, {"max", nullptr},
                  {"ci95_low", nullptr}, {"ci95_high", nullptr},
                  {"estimate", "mean"}};
    };
    metrics[metric] = mean_only(f["avg_ts"].get<double>(), f.value("stddev_ts", 0.0), "tokens/s");
    if (prefill) {
      metrics["ttft"] = mean_only(f["avg_ns"].get<double>() / 1e6,
                                  static_cast<double>(IntField(f, "stddev_ns")) / 1e6, "ms");
    }
    warnings.push_back(fmt::format(
        "llama-bench's {} output has no per-repetition samples: {} is llama-bench's mean "
        "(avg_ts) over its repetitions, with no confidence interval; import -o json or -o jsonl "
        "output for pipette's statistics",
        format, metric));
  }
  record["samples"] = std::move(samples);
  record["metrics"] = std::move(metrics);
}

Result<std::string> ReadWhole(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return MakeError(path + ": no such file; give llama-bench's output file");
  if (fs::is_directory(path, ec)) return MakeError(path + ": is a folder; give llama-bench's output file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return MakeError(path + ": cannot be read; check its permissions");
  return text.str();
}

// This machine's fingerprint as `pipette run` records it, after checking llama-bench's CPU.
Result<json> ThisDevice(const std::string& where, const json& f) {
  json device = DeviceFingerprint("");
  if (auto name = DeviceNameOf(device.value("id", "")); name) device["name"] = *name;
  AddCachedBandwidth(device);
  AddCachedNoiseFloor(device);
  const std::string cpu = TextField(f, "cpu_info");
  const json& model = device["cpu"]["model"];
  // llama-bench's cpu_info is ggml's CPU description(s), e.g. "AMD EPYC" or "Apple M2, Apple M2
  // Neural Engine"; the fingerprint's model is /proc/cpuinfo's "model name".
  const auto names = [](const std::string& a, const std::string& b) {
    return a.find(b) != std::string::npos || b.find(a) != std::string::npos;
  };
  if (!cpu.empty() && model.is_string() && !model.get<std::string>().empty() &&
      !names(cpu, model.get<std::string>())) {
    return MakeError(fmt::format(
        "{}: llama-bench ran on the CPU \"{}\" but this machine's is \"{}\"; import it without "
        "this device's fingerprint",
        where, cpu, model.get<std::string>()));
  }
  return device;
}

}  // namespace

Result<LlamaBenchImport> ImportLlamaBench(const std::string& path,
                                          const LlamaBenchImportOptions& o) {
  auto text = ReadWhole(path);
  if (!text) return text.error();
  auto file = ParseLlamaBenchFile(*text, path, o.allow_unknown_fields);
  if (!file) return file.error();
  const std::string file_sha = Sha256Hex(*text);
  const std::string format = FormatName(file->format);
  size_t models_in_file = 0;
  {
    std::vector<std::string> names;
    for (const LlamaBenchRow& row : file->rows) {
      const std::string m = TextField(row.fields, "model_filename");
      if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(m);
    }
    models_in_file = names.size();
  }
  LlamaBenchImport out;
  out.format = format;
  std::map<std::string, ModelFacts> models;  // by the path read
  std::optional<json> this_device;
  for (const LlamaBenchRow& row : file->rows) {
    const json& f = row.fields;
    const std::string where = RowWhere(path, row);
    auto benchmark = BenchmarkOf(f);
    if (!benchmark) {
      const std::string line = where + " " + benchmark.error().message;
      if (!o.skip_unmatched) {
        return MakeError(line + "; or skip rows that match no benchmark to import the rest");
      }
      out.skipped.push_back(line);
      continue;
    }
    const std::string test_time = TextField(f, "test_time");
    const auto ms = EpochMs(test_time);
    if (!ms) {
      return MakeError(fmt::format("{}: test_time \"{}\" is not an RFC 3339 UTC time; the file is "
                                   "not as llama-bench writes it",
                                   where, test_time));
    }
    const std::string recorded = TextField(f, "model_filename");
    const std::string model_path = ModelPathOf(recorded, o, models_in_file);
    auto model = models.find(model_path);
    if (model == models.end()) {
      auto read = ReadModel(where, recorded, model_path, f, o);
      if (!read) return read.error();
      model = models.emplace(model_path, std::move(*read)).first;
    }
    std::vector<std::string> warnings;
    const json settings = Settings(f, warnings);
    const int64_t build_number = IntField(f, "build_number");
    json device = {{"label", ""}, {"cpu_info", TextField(f, "cpu_info")},
                   {"gpu_info", TextField(f, "gpu_info")}};
    if (o.this_device) {
      if (!this_device) {
        auto d = ThisDevice(where, f);
        if (!d) return d.error();
        this_device = std::move(*d);
      }
      device = *this_device;
    }
    json imported = {{"tool", "llama-bench"},
                     {"format", format},
                     {"file", fs::absolute(path).lexically_normal().string()},
                     {"file_sha256", file_sha},
                     {"row", row.index},
                     {"line", row.line},
                     {"build", {{"commit", TextField(f, "build_commit")}, {"number", build_number}}},
                     {"model_filename", recorded},
                     {"samples", f.contains("samples_ns")},
                     {"fingerprint", o.this_device},
                     {"fields", f}};
    if (!row.unknown.empty()) {
      imported["unknown_fields"] = row.unknown;
      warnings.push_back("fields this pipette does not know, kept in imported.unknown_fields: " +
                         [&] {
                           std::string names;
                           for (const auto& [k, v] : row.unknown.items()) {
                             names += (names.empty() ? "" : ", ") + k;
                           }
                           return names;
                         }());
    }
    json record = {
        {"schema", "pipette.result/1"},
        {"result_id", UuidV7Of(*ms, file_sha + ":" + std::to_string(row.index))},
        {"status", "ok"},
        {"benchmark", ToJson(*benchmark)},
        {"model", model->second.block},
        {"runtime",
         {{"name", kRuntime},
          {"version", build_number > 0 ? fmt::format("b{}", build_number) : "unknown"},
          {"commit", TextField(f, "build_commit")},
          {"backends", json::array({{{"name", TextField(f, "backends")}}})},
          {"build", {{"build_number", build_number}, {"source", "llama-bench output"}}},
          {"settings", settings}}},
        {"device", device},
        {"harness",
         {{"version", build_info::kVersion},
          {"commit", build_info::kGitCommit},
          {"compiler", build_info::kCompiler},
          {"build_type", build_info::kBuildType},
          {"ci_target", kCiTarget}}},
        {"imported", imported},
        {"started_at", test_time},
        {"finished_at", test_time},
        {"logs", {{"warnings", json::array()}, {"runtime_stderr_tail", ""}}}};
    AddMeasurements(f, *benchmark, record, warnings, format);
    for (const std::string& w : warnings) record["logs"]["warnings"].push_back(w);
    // ConfigId reads device.id, which a result without a fingerprint lacks: null stands for it.
    json keyed = record;
    if (!keyed["device"].contains("id")) keyed["device"]["id"] = nullptr;
    record["config_id"] = ConfigId(keyed);
    if (Status s = ValidateRecord(record); !s) {
      return MakeError(fmt::format("{}: the record made of it is not a valid pipette.result/1 "
                                   "({}); please report this",
                                   where, s.error().message));
    }
    out.records.push_back(std::move(record));
  }
  if (out.records.empty()) {
    return MakeError(fmt::format("{}: none of its {} tests matches a pipette benchmark (first: {})",
                                 path, file->rows.size(), out.skipped.front()));
  }
  return out;
}

}  // namespace pipette
