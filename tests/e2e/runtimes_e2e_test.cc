// The runtimes behind one interface, end to end on stories260K: `openai` with the pinned build's
// llama-server started by pipette, and the faults of a server (bad answers, a cut stream, a
// wrong token count, a server killed mid-cell), each a clear line or a stored failed result.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "resident_checks.h"
#include "pipette/cell.h"
#include "pipette/runtimes.h"
#include "runtimes/openai/fault_server.h"
#include "runtimes/openai/server_process.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

const std::string kBin = std::string(PIPETTE_LLAMA_PREFIX) + "/bin";

std::shared_ptr<Runtime> OpenAi(std::vector<std::string> command, const std::string& url = "") {
  RuntimeChoice c;
  c.name = "openai";
  c.url = url;
  c.server_command = std::move(command);
  auto r = OpenRuntime(c);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r ? *r : nullptr;
}

std::vector<std::string> LlamaServer() {
  return {kBin + "/llama-server", "-m", "{model}", "--port", "{port}", "-c", "{ctx}", "-t", "1",
          "-np", "1"};
}

CellSpec OpenAiCell(const std::string& model, const std::string& benchmark) {
  CellSpec spec = QuickCell(model, benchmark);
  spec.runtime = OpenAi(LlamaServer());
  spec.settings = json::object();  // a server's settings are its own command line
  return spec;
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void ExpectOneLineError(const CliResult& r, const std::string& must_contain) {
  EXPECT_EQ(r.exit.code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
}

CliResult RunCli(const std::string& model, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--store", WorkDir() + "/runtimes.db", "run", "--model", model,
                                   "--benchmark", "end_to_end_latency_16_8", "--quiet",
                                   "--no-readiness-load", "--min-reps", "3", "--max-reps", "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunPipette(args);
}

TEST(OpenAiRuntime, EveryTimedBenchmarkThroughAStartedLlamaServer) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  for (const std::string id : {"prefill_throughput_64", "decode_throughput_64_16",
                               "end_to_end_latency_64_32", "max_memory_usage_64"}) {
    auto r = RunCell(OpenAiCell(model, id));
    ASSERT_TRUE(r.ok()) << id << ": " << r.error().message;
    const json& rec = *r;
    ASSERT_EQ(rec["status"], "ok") << id << ": " << rec["failure"].dump();
    EXPECT_EQ(rec["runtime"]["name"], "openai");
    EXPECT_EQ(rec["runtime"]["commit"], "80fb11a") << rec["runtime"].dump();
    EXPECT_NE(rec["runtime"]["settings"]["server"].get<std::string>().find("llama-server"),
              std::string::npos);
    EXPECT_EQ(rec["runtime"]["server"]["build_info"], "b1-80fb11a") << rec["runtime"].dump();
    EXPECT_EQ(rec["samples"].size(), 3u) << id;
    if (std::string(id).starts_with("prefill")) {
      EXPECT_TRUE(rec["harness"].contains("prefill_throughput_derived"));
      EXPECT_EQ(rec["samples"][0]["prefill_derived_from_ttft"], true);
    }
    if (std::string(id).starts_with("max_memory")) {
      EXPECT_GT(rec["metrics"]["max_host_usage"]["median"].get<double>(), 1 << 20);
      ExpectResidentSplitWithinPeak(rec, "openai " + std::string(id));
    } else {
      const json& logs = rec["logs"];
      EXPECT_GT(logs.value("peak_host_bytes_during_cell", 0.0), 1 << 20) << id;
      EXPECT_LE(logs.value("rss_anon_bytes_at_peak_during_cell", 0.0) +
                    logs.value("rss_file_bytes_at_peak_during_cell", 0.0) +
                    logs.value("rss_shmem_bytes_at_peak_during_cell", 0.0),
                logs.value("peak_host_bytes_during_cell", 0.0))
          << id;
      EXPECT_GT(logs.value("rss_file_bytes_at_peak_during_cell", 0.0), 0) << logs.dump();
    }
  }
}

TEST(OpenAiRuntime, ServerKilledMidCellIsAStoredFailure) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  CellSpec spec = OpenAiCell(model, "end_to_end_latency_64_32");
  std::atomic<int> pid{-1};
  CellHooks hooks;
  hooks.on_runtime_started = [&](int p) { pid = p; };
  hooks.progress = [&](const std::string& line) {
    if (line.rfind("rep 1:", 0) == 0 && pid > 0) kill(pid, SIGKILL);
  };
  auto r = RunCell(spec, hooks);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_EQ((*r)["failure"]["stage"], "generate") << (*r)["failure"].dump();
  EXPECT_EQ((*r)["samples"].size(), 1u);
}

// A server that answers like an OpenAI one but counts one token more than it was sent.
TEST(OpenAiRuntime, ServerCountingOtherTokensFailsValidation) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  testing::FaultServer s;
  s.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[{"id":"m"}]})", "application/json");
  });
  s.server().Post("/tokenize", [](const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body);
    json tokens = json::array({1});
    for (size_t i = 0; i < body.value("content", "").size(); ++i) tokens.push_back(100);
    res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
  });
  s.server().Post("/v1/completions", [](const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body);
    const int n = body["max_tokens"];
    std::string out;
    for (int i = 0; i < n; ++i) out += R"(data: {"choices":[{"text":"a","index":0}]})" "\n\n";
    out += "data: " + json{{"choices", {{{"text", ""}, {"finish_reason", "length"}}}},
                           {"usage", {{"prompt_tokens", body["prompt"].get<std::string>().size() + 2},
                                      {"completion_tokens", n}}}}
                          .dump() +
           "\n\ndata: [DONE]\n\n";
    res.set_content(out, "text/event-stream");
  });
  ASSERT_TRUE(s.Start());
  CellSpec spec = QuickCell(model, "end_to_end_latency_16_8");
  spec.runtime = OpenAi({}, s.url());
  spec.settings = json::object();
  auto r = RunCell(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_EQ((*r)["failure"]["stage"], "validate");
  EXPECT_NE((*r)["failure"]["message"].get<std::string>().find("17 prompt and 8 generated"),
            std::string::npos)
      << (*r)["failure"].dump();
}

TEST(OpenAiRuntime, StreamCutMidResponseIsAStoredFailure) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  testing::FaultServer s;
  s.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"data":[{"id":"m"}]})", "application/json");
  });
  s.server().Post("/tokenize", [](const httplib::Request& req, httplib::Response& res) {
    json tokens = json::array({1});
    for (size_t i = 0; i < json::parse(req.body).value("content", "").size(); ++i) tokens.push_back(7);
    res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
  });
  s.server().Post("/v1/completions", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n",
                    "text/event-stream");
  });
  ASSERT_TRUE(s.Start());
  CellSpec spec = QuickCell(model, "end_to_end_latency_16_8");
  spec.runtime = OpenAi({}, s.url());
  spec.settings = json::object();
  auto r = RunCell(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_NE((*r)["failure"]["message"].get<std::string>().find("without finishing"),
            std::string::npos)
      << (*r)["failure"].dump();
}

TEST(StockRuntime, EveryTimedBenchmarkThroughThePinnedBuildsBinaries) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  RuntimeChoice c;
  c.name = "llamacpp-stock";
  c.dir = kBin;
  auto runtime = OpenRuntime(c);
  ASSERT_TRUE(runtime.ok()) << runtime.error().message;
  for (const std::string id : {"prefill_throughput_64", "decode_throughput_64_16",
                               "end_to_end_latency_64_32", "max_memory_usage_64"}) {
    CellSpec spec = QuickCell(model, id);
    spec.runtime = *runtime;
    auto r = RunCell(spec);
    ASSERT_TRUE(r.ok()) << id << ": " << r.error().message;
    const json& rec = *r;
    ASSERT_EQ(rec["status"], "ok") << id << ": " << rec["failure"].dump();
    EXPECT_EQ(rec["runtime"]["name"], "llamacpp-stock");
    EXPECT_EQ(rec["runtime"]["commit"], "80fb11a");
    EXPECT_EQ(rec["runtime"]["settings"]["threads"], 1);
    EXPECT_FALSE(rec["runtime"]["settings"].contains("n_ctx"));
    EXPECT_EQ(rec["samples"].size(), 3u) << id;
    EXPECT_TRUE(rec["runtime"].contains("repetitions")) << rec["runtime"].dump();
    if (!std::string(id).starts_with("end_to_end")) {
      EXPECT_EQ(rec["input"]["token_ids"], "the runtime's own (it takes a count, not ids)");
    }
    // The sampled llama-bench process's split, read after it ended.
    if (std::string(id).starts_with("max_memory")) ExpectResidentSplitWithinPeak(rec, "stock");
  }
}

TEST(RuntimeBadInput, RuntimeDirectoryWithoutTheBinaries) {
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "llamacpp-stock", "--runtime-dir",
                                              WorkDir()}),
                     "has no llama-bench");
}

TEST(RuntimeBadInput, ServerAtUrlServesAnotherModel) {
  const std::string served = Stories260K("Q8_0");
  if (served.empty()) GTEST_SKIP() << SharedMissingReason();
  auto port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  auto server = ServerProcess::Start({kBin + "/llama-server", "-m", served, "--port",
                                      std::to_string(*port), "-c", "512", "-t", "1"},
                                     url, WorkDir() + "/served.log", std::chrono::seconds(60));
  ASSERT_TRUE(server.ok()) << server.error().message;
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "openai", "--url", url}),
                     "serves stories260K-Q8_0.gguf, not tiny");
  const CliResult ok = RunCli(served, {"--runtime", "openai", "--url", url});
  EXPECT_EQ(ok.exit.code, 0) << ok.err;
}

TEST(RuntimeBadInput, StartedServerServingAnotherModelOrLosingItsPort) {
  const std::string served = Stories260K("Q8_0");
  if (served.empty()) GTEST_SKIP() << SharedMissingReason();
  CellSpec spec = QuickCell(TinySynthetic(), "end_to_end_latency_16_8");
  spec.settings = json::object();
  spec.runtime = OpenAi({kBin + "/llama-server", "-m", served, "--port", "{port}", "-c", "512"});
  auto r = RunCell(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_NE((*r)["failure"]["message"].get<std::string>().find(
                "the server started serves stories260K-Q8_0.gguf, not tiny"),
            std::string::npos)
      << (*r)["failure"].dump();

  // Another server holds the port: the one pipette starts cannot bind it and must not be mistaken
  // for the one that answers.
  auto port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  auto other = ServerProcess::Start({kBin + "/llama-server", "-m", served, "--port",
                                     std::to_string(*port), "-c", "512", "-t", "1"},
                                    url, WorkDir() + "/other.log", std::chrono::seconds(60));
  ASSERT_TRUE(other.ok()) << other.error().message;
  spec.model_path = served;
  spec.runtime = OpenAi({kBin + "/llama-server", "-m", "{model}", "--port",
                         std::to_string(*port), "-c", "{ctx}"},
                        url);
  auto taken = RunCell(spec);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ((*taken)["status"], "failed");
  EXPECT_NE((*taken)["failure"]["message"].get<std::string>().find("the port is taken"),
            std::string::npos)
      << (*taken)["failure"].dump();
}

TEST(RuntimeBadInput, UnknownRuntime) {
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "mlx"}),
                     "unknown runtime 'mlx'; the runtimes are: llamacpp, llamacpp-stock, openai");
}

TEST(RuntimeBadInput, SettingTheRuntimeDoesNotTake) {
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "openai", "--url", "http://127.0.0.1:9",
                                           "--cache-type-k", "q8_0"}),
                     "runtime openai does not take --cache-type-k (type_k)");
}

TEST(RuntimeBadInput, UrlNothingListensOn) {
  auto port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  ExpectOneLineError(
      RunCli(TinySynthetic(), {"--runtime", "openai", "--url", "http://127.0.0.1:" + std::to_string(*port)}),
      "no server answers at");
}

TEST(RuntimeBadInput, ServerThatIsNotOpenAiCompatible) {
  testing::FaultServer s;
  s.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body>hello</body></html>", "text/html");
  });
  ASSERT_TRUE(s.Start());
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "openai", "--url", s.url()}),
                     "not an OpenAI-compatible server");
}

TEST(RuntimeBadInput, FlagOfAnotherRuntime) {
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime-dir", "/tmp"}),
                     "runtime llamacpp takes no runtime directory");
}

TEST(RuntimeBadInput, OpenAiWithoutUrlOrServer) {
  ExpectOneLineError(RunCli(TinySynthetic(), {"--runtime", "openai"}),
                     "runtime openai needs the server's URL (--url), or a command that starts it (--server)");
}

}  // namespace
}  // namespace pipette
