#include "cli/cmd_diff.h"

#include <fmt/format.h>

#include <iostream>
#include <set>

#include "cli/result_source.h"
#include "cli/store_reading.h"
#include "pipette/record.h"
#include "pipette/store.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct Layer {
  std::string name;
  std::vector<std::string> differences;  // "threads: 2 -> 1"
};

std::string Show(const json& v) {
  if (v.is_null()) return "(absent)";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void CompareField(const json& a, const json& b, const std::string& label, const std::string& ptr,
                  Layer& layer) {
  const json va = record::ValueAt(a, ptr), vb = record::ValueAt(b, ptr);
  if (va != vb) layer.differences.push_back(label + ": " + Show(va) + " -> " + Show(vb));
}

// Every key of two objects at `ptr`, compared one by one.
void CompareObject(const json& a, const json& b, const std::string& ptr, Layer& layer) {
  const json oa = record::ValueAt(a, ptr), ob = record::ValueAt(b, ptr);
  std::set<std::string> keys;
  for (const json* o : {&oa, &ob}) {
    if (o->is_object()) {
      for (const auto& [k, v] : o->items()) keys.insert(k);
    }
  }
  for (const std::string& k : keys) CompareField(a, b, k, ptr + "/" + k, layer);
}

std::vector<Layer> Diff(const json& a, const json& b) {
  Layer inputs{"inputs", {}}, env{"environment", {}}, params{"parameters", {}},
      tooling{"tooling", {}}, metrics{"metrics", {}};
  CompareField(a, b, "benchmark", "/benchmark/id", inputs);
  CompareField(a, b, "model file", "/model/file_name", inputs);
  CompareField(a, b, "model sha256", "/model/sha256", inputs);
  CompareField(a, b, "quantization", "/model/quant", inputs);
  CompareField(a, b, "prompt sha256", "/input/prompt_sha256", inputs);
  // An eval's inputs are its data set and subset; how it generated is a parameter.
  CompareField(a, b, "eval data set fingerprint", "/eval/fingerprint", inputs);
  if (const json sa = record::ValueAt(a, "/eval/sample_ids"), sb = record::ValueAt(b, "/eval/sample_ids");
      sa != sb) {
    std::set<std::string> ia, ib;
    for (const json& id : sa) ia.insert(Show(id));
    size_t common = 0;
    for (const json& id : sb) common += ia.count(Show(id));
    inputs.differences.push_back(fmt::format("eval samples: {} -> {} ({} in common)", sa.size(),
                                             sb.size(), common));
  }
  CompareField(a, b, "eval prompt format", "/eval/prompt_format", inputs);
  CompareField(a, b, "eval chat template sha256", "/eval/chat_template_sha256", inputs);
  CompareField(a, b, "runtime", "/runtime/name", env);
  CompareField(a, b, "runtime version", "/runtime/version", env);
  CompareField(a, b, "runtime commit", "/runtime/commit", env);
  CompareField(a, b, "device", "/device/id", env);
  CompareField(a, b, "OS", "/device/os/name", env);
  CompareField(a, b, "kernel", "/device/os/kernel", env);
  CompareField(a, b, "governor", "/device/governor", env);
  CompareField(a, b, "pipette commit", "/harness/commit", env);
  CompareObject(a, b, "/harness/environment", env);
  CompareObject(a, b, "/runtime/settings", params);
  for (const char* key : {"repeats", "temperature", "seed", "max_tokens", "parallel", "scorer"}) {
    CompareField(a, b, std::string("eval ") + key, std::string("/eval/") + key, params);
  }
  CompareObject(a, b, "/eval/doom_loop", params);
  std::set<std::string> wa, wb;
  for (const json& w : record::ValueAt(a, "/logs/warnings")) wa.insert(Show(w));
  for (const json& w : record::ValueAt(b, "/logs/warnings")) wb.insert(Show(w));
  for (const std::string& w : wa) {
    if (!wb.count(w)) tooling.differences.push_back("only A: " + w);
  }
  for (const std::string& w : wb) {
    if (!wa.count(w)) tooling.differences.push_back("only B: " + w);
  }
  const json ma = record::ValueAt(a, "/metrics"), mb = record::ValueAt(b, "/metrics");
  if (ma.is_object() && mb.is_object()) {
    for (const auto& [name, m] : ma.items()) {
      if (!mb.contains(name)) continue;
      const double x = m.value("median", 0.0), y = mb[name].value("median", 0.0);
      if (x != y) {
        metrics.differences.push_back(fmt::format("{}: {:.6g} -> {:.6g} {} (x{:.3f})", name, x, y,
                                                  m.value("unit", ""), x != 0 ? y / x : 0.0));
      }
    }
  }
  return {inputs, env, params, tooling, metrics};
}

int Run(const std::string& ida, const std::string& idb, CliContext& ctx) {
  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  const std::string path = store->where();
  json records[2];
  const std::string ids[2] = {ida, idb};
  for (int i = 0; i < 2; ++i) {
    auto r = store->Get(ids[i]);
    if (!r) return ReportError(ctx, r.error());
    if (!r->has_value()) {
      return ReportError(ctx, MakeError("no result '" + ids[i] + "' in " + path +
                                        "; `pipette results list` shows them"));
    }
    records[i] = **r;
  }
  const std::vector<Layer> layers = Diff(records[0], records[1]);
  std::string first = "none";
  for (const Layer& l : layers) {
    if (!l.differences.empty()) {
      first = l.name;
      break;
    }
  }
  if (ctx.json) {
    json out = {{"a", records[0]["result_id"]}, {"b", records[1]["result_id"]},
                {"first_difference", first}, {"layers", json::object()}};
    for (const Layer& l : layers) out["layers"][l.name] = l.differences;
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }
  if (first == "none") {
    std::cout << "no difference: same inputs, environment, parameters, tooling and metrics\n";
    return kExitOk;
  }
  for (const Layer& l : layers) {
    if (l.name == first) {
      std::cout << "first difference: " << l.name << " (" << l.differences.front() << ")\n";
      break;
    }
  }
  for (const Layer& l : layers) {
    if (l.differences.empty()) {
      std::cout << fmt::format("{:<12} same\n", l.name);
      continue;
    }
    for (size_t i = 0; i < l.differences.size(); ++i) {
      std::cout << fmt::format("{:<12} {}\n", i == 0 ? l.name : "", l.differences[i]);
    }
  }
  return kExitOk;
}

}  // namespace

void AddDiffCommand(CLI::App& app, CliContext& ctx) {
  auto ids = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Explain why two results differ: inputs, environment, parameters, tooling, metrics");
  cmd->add_option("a", ids->first, "result id (or unique prefix)")->required();
  cmd->add_option("b", ids->second, "result id (or unique prefix)")->required();
  AddServerOption(cmd, ctx);
  cmd->callback([ids, &ctx] { Run(ids->first, ids->second, ctx); });
}

}  // namespace pipette::cli
