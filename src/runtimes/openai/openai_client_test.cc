// The openai runtime's client against a real llama-server (the pinned build, serving stories260K
// converted in the test), and against a fault server for what a real server cannot be made to do.
#include "runtimes/openai/openai_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "platform/process.h"
#include "runtimes/openai/fault_server.h"
#include "runtimes/openai/server_process.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kLlamaBin = std::string(PIPETTE_LLAMA_PREFIX) + "/bin";
const std::string kStoriesDir = pipette::testing::DataDir() + "/models/stories260K";

// Every user-facing error: one line, naming no command-line flag.
void ExpectOneLine(const Error& e) {
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("--"), std::string::npos) << e.message;
}

// True while `pid` exists and is not a zombie.
bool Running(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');  // "pid (comm) S ...": the state follows the name
  return paren == std::string::npos || line.substr(paren + 2, 1) != "Z";
}

// A folder for this test process, removed at exit.
const std::string& WorkDir() {
  static const struct Dir {
    std::string path;
    Dir() {
      path = (fs::temp_directory_path() / "pipette-openai-XXXXXX").string();
      if (!mkdtemp(path.data())) std::abort();
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

// stories260K as an F32 GGUF, converted once per process as tests/e2e/model_fixtures.cc does;
// "" when ../shared is absent (*why says so) or conversion failed (a test failure).
std::string StoriesModel(std::string* why) {
  if (!fs::exists(kStoriesDir + "/stories260K.bin")) {
    *why = pipette::testing::NeedData("stories260K");
    return "";
  }
  static const std::string path = [] {
    const std::string out = WorkDir() + "/stories260K.gguf";
    std::string log;
    auto exit = RunTool({kLlamaBin + "/llama-convert-llama2c-to-ggml", "--copy-vocab-from-model",
                         kStoriesDir + "/tok512.bin", "--llama2c-model",
                         kStoriesDir + "/stories260K.bin", "--llama2c-output-model", out},
                        &log);
    if (!exit.ok() || !exit->exited || exit->code != 0) {
      ADD_FAILURE() << "converting stories260K failed: " << log;
      return std::string();
    }
    return out;
  }();
  if (path.empty()) *why = "stories260K could not be converted";
  return path;
}

// llama-server on stories260K at a free port. The converter writes a context length of 128; the
// checkpoint was trained at 512, which the override restores (the server caps -c at it).
Result<ServerProcess> StartLlamaServer(const std::string& model, std::string* url) {
  Result<int> port = FreeLocalPort();
  if (!port.ok()) return port.error();
  *url = "http://127.0.0.1:" + std::to_string(*port);
  return ServerProcess::Start({kLlamaBin + "/llama-server", "-m", model, "-c", "512", "--port",
                               std::to_string(*port), "--host", "127.0.0.1", "-t", "1", "-np", "1",
                               "--override-kv", "llama.context_length=int:512"},
                              *url, WorkDir() + "/llama-server-" + std::to_string(*port) + ".log",
                              milliseconds(30000));
}

constexpr char kPrompt[] = "Once upon a time";

// One llama-server for the tests that leave it running.
class LlamaServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = StoriesModel(&skip_reason_);
    if (model_.empty()) return;
    auto server = StartLlamaServer(model_, &url_);
    if (!server.ok()) {
      skip_reason_ = "llama-server did not start: " + server.error().message;
      return;
    }
    server_.emplace(std::move(*server));
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!server_) GTEST_SKIP() << skip_reason_;
    auto client = OpenAiClient::Connect(url_, milliseconds(5000));
    ASSERT_TRUE(client.ok()) << client.error().message;
    client_.emplace(std::move(*client));
  }

  static inline std::optional<ServerProcess> server_;
  static inline std::string model_;
  static inline std::string url_;
  static inline std::string skip_reason_;
  std::optional<OpenAiClient> client_;
};

TEST_F(LlamaServerTest, IdentityHasTheModelAndTheBuild) {
  const ServerIdentity& id = client_->identity();
  EXPECT_EQ(id.base_url, url_);
  ASSERT_EQ(id.model_ids.size(), 1u);
  EXPECT_EQ(id.model_ids[0], model_);  // llama-server's id is the path it was given
  EXPECT_EQ(id.server_header, "llama.cpp");
  std::ifstream commit_file(std::string(PIPETTE_LLAMA_PREFIX) + "/COMMIT");
  std::string commit;
  std::getline(commit_file, commit);
  EXPECT_THAT(id.build_info, ::testing::MatchesRegex("b[0-9]+-[0-9a-f]+"));
  EXPECT_THAT(id.build_info, HasSubstr(commit.substr(0, 7)));
  EXPECT_EQ(id.model_path, model_);
  EXPECT_EQ(id.n_ctx, 512);
  EXPECT_EQ(id.total_slots, 1);
  EXPECT_TRUE(id.models_json.contains("data"));
  EXPECT_TRUE(id.props_json.contains("build_info"));
}

TEST_F(LlamaServerTest, ConnectAcceptsTheUrlWithSlashOrV1) {
  for (const char* suffix : {"/", "/v1", "/v1/"}) {
    auto client = OpenAiClient::Connect(url_ + suffix, milliseconds(5000));
    ASSERT_TRUE(client.ok()) << client.error().message;
    EXPECT_EQ(client->identity().base_url, url_);
  }
}

// llama-server prepends BOS (id 1 in this vocabulary) only when asked to add special tokens.
TEST_F(LlamaServerTest, TokenizeAddsBosOnlyWithAddSpecial) {
  auto with = client_->Tokenize(kPrompt, true);
  auto without = client_->Tokenize(kPrompt, false);
  ASSERT_TRUE(with.ok()) << with.error().message;
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_EQ(*without, (std::vector<int32_t>{403, 407, 261, 378}));  // "Once", " upon", " a", ...
  ASSERT_EQ(with->size(), without->size() + 1);
  EXPECT_EQ(with->front(), 1);
  EXPECT_TRUE(std::equal(without->begin(), without->end(), with->begin() + 1));
}

// With ignore_eos, llama-server streams exactly max_tokens tokens, one event each (this text is
// ASCII: no token is held back for an unfinished UTF-8 character), then usage and its timings.
// cache_prompt=false makes the second request evaluate the whole prompt again.
TEST_F(LlamaServerTest, CompleteStreamsExactlyMaxTokensWithTimes) {
  auto tokens = client_->Tokenize(kPrompt, true);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  HttpCompletionRequest request;
  request.prompt = kPrompt;
  request.max_tokens = 16;
  request.timeout = milliseconds(20000);
  std::string first_text;
  for (int rep = 0; rep < 2; ++rep) {
    auto c = client_->Complete(request);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->completion_tokens, 16);
    EXPECT_EQ(c->prompt_tokens, static_cast<int64_t>(tokens->size()));
    EXPECT_EQ(c->finish_reason, "length");
    ASSERT_EQ(c->chunks.size(), 16u);
    double previous = 0;
    for (const CompletionChunk& chunk : c->chunks) {
      EXPECT_FALSE(chunk.text.empty());
      EXPECT_GE(chunk.arrival_ms, previous);
      previous = chunk.arrival_ms;
    }
    EXPECT_GT(c->chunks.front().arrival_ms, 0);
    EXPECT_GE(c->end_ms, c->chunks.back().arrival_ms);
    EXPECT_LT(c->end_ms, 20000);
    ASSERT_TRUE(c->has_server_timings);
    EXPECT_EQ(c->server_timings.predicted_n, 16);
    EXPECT_EQ(c->server_timings.prompt_n, static_cast<int64_t>(tokens->size()));
    EXPECT_GT(c->server_timings.predicted_ms, 0);
    if (rep == 0) first_text = c->Text();
    EXPECT_EQ(c->Text(), first_text);  // greedy: the same text every time
  }
}

// A chat request: the server applies the model's template and samples with the seed given, so
// the same seed gives the same text; a keep_going that says stop cancels the stream early.
TEST_F(LlamaServerTest, ChatIsSeededAndCancellable) {
  HttpCompletionRequest request;
  request.chat = true;
  request.prompt = "Tell me a story.";
  request.max_tokens = 64;
  request.exact_tokens = false;
  request.temperature = 1.0;
  request.seed = 42;
  request.timeout = milliseconds(20000);
  auto a = client_->Complete(request);
  auto b = client_->Complete(request);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_FALSE(a->Text().empty());
  EXPECT_EQ(a->Text(), b->Text());
  EXPECT_GT(a->prompt_tokens, 4);  // the template's own tokens around the message
  EXPECT_GE(a->completion_tokens, 1);
  EXPECT_TRUE(a->finish_reason == "length" || a->finish_reason == "stop") << a->finish_reason;
  EXPECT_FALSE(a->stopped);

  request.max_tokens = 400;
  request.exact_tokens = true;  // ignore_eos: the stream would run to 400 tokens
  int asked = 0;
  request.keep_going = [&](const std::string& text) {
    ++asked;
    EXPECT_FALSE(text.empty());
    return false;
  };
  auto stopped = client_->Complete(request);
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_TRUE(stopped->stopped);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(stopped->chunks.size(), static_cast<size_t>(HttpCompletionRequest::kKeepGoingChunks));
  // The connection is usable afterwards: the next request is answered.
  request.keep_going = {};
  request.max_tokens = 4;
  EXPECT_TRUE(client_->Complete(request).ok());
}

TEST_F(LlamaServerTest, CompletionErrorCarriesTheServersMessage) {
  HttpCompletionRequest request;
  std::string prompt;
  for (int i = 0; i < 200; ++i) prompt += "Once upon a time ";  // far more than 512 tokens
  request.prompt = prompt;
  request.stage = "prefill";
  auto c = client_->Complete(request);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message,
              StartsWith(url_ + ": POST /v1/completions answered HTTP 400: request ("));
  EXPECT_THAT(c.error().message, HasSubstr("exceeds the available context size (512 tokens)"));
  EXPECT_EQ(c.error().stage, "prefill");
  ExpectOneLine(c.error());
}

// A server killed in the middle of a stream is an error, never a crash or a hang.
TEST(LlamaServerKill, KilledMidStreamIsAnError) {
  std::string why;
  const std::string model = StoriesModel(&why);
  if (model.empty()) GTEST_SKIP() << why;
  std::string url;
  auto server = StartLlamaServer(model, &url);
  ASSERT_TRUE(server.ok()) << server.error().message;
  EXPECT_GT(server->ready_ms(), 0);
  auto client = OpenAiClient::Connect(url, milliseconds(5000));
  ASSERT_TRUE(client.ok()) << client.error().message;
  HttpCompletionRequest request;
  request.prompt = kPrompt;
  request.max_tokens = 400;
  request.timeout = milliseconds(20000);
  int seen = 0;
  const pid_t pid = server->Pid();
  auto c = client->Complete(request, [&](const CompletionChunk&) {
    if (++seen == 3) kill(pid, SIGKILL);
  });
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, StartsWith(url + ": the server closed the stream after "));
  EXPECT_THAT(c.error().message, HasSubstr("chunks without finishing"));
  EXPECT_EQ(c.error().stage, "generate");
  ExpectOneLine(c.error());
  EXPECT_EQ(server->Stop().Describe(), "killed by signal 9 (SIGKILL)");
}

// Stop() ends the server's whole process group: helpers it started go with it.
TEST(ServerProcess, StopEndsHelpersInTheServersGroup) {
  std::string why;
  const std::string model = StoriesModel(&why);
  if (model.empty()) GTEST_SKIP() << why;
  Result<int> port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  const std::string helper_pid_file = WorkDir() + "/helper.pid";
  auto server =
      ServerProcess::Start({"/bin/sh", "-c", "sleep 30 & echo $! > \"$0\"; exec \"$@\"",
                            helper_pid_file, kLlamaBin + "/llama-server", "-m", model, "--port",
                            std::to_string(*port), "--host", "127.0.0.1", "-t", "1", "-np", "1"},
                           url, WorkDir() + "/group.log", milliseconds(30000));
  ASSERT_TRUE(server.ok()) << server.error().message;
  std::ifstream in(helper_pid_file);
  pid_t helper = 0;
  in >> helper;
  ASSERT_GT(helper, 0);
  ASSERT_EQ(kill(helper, 0), 0);
  EXPECT_EQ(server->Stop().Describe(), "exit code 0");  // llama-server ends cleanly on SIGTERM
  // The helper is our grandchild: killed, it stays a zombie until init reaps it, which may be
  // slow.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !Running(helper);
    if (!gone) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone) << "helper " << helper << " outlived the server";
}

TEST(ServerProcess, ServerThatEndsEarlyIsNamedWithItsLastLogLine) {
  Result<int> port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string log = WorkDir() + "/early.log";
  auto s =
      ServerProcess::Start({kLlamaBin + "/llama-server", "-m", "/nonexistent/model.gguf", "--port",
                            std::to_string(*port)},
                           "http://127.0.0.1:" + std::to_string(*port), log, milliseconds(30000));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message,
              StartsWith("llama-server ended before it served at "
                         "http://127.0.0.1:" +
                         std::to_string(*port) + " (exit code 1); last log line: '"));
  EXPECT_THAT(s.error().message, ::testing::EndsWith("; see " + log));
  EXPECT_EQ(s.error().stage, "start");
  ExpectOneLine(s.error());
}

// ChildProcess pipes stdout; nobody reads it. 1 MB on stdout must reach the log, not block.
TEST(ServerProcess, ChattyServerWritesStdoutToTheLogWithoutBlocking) {
  const std::string log = WorkDir() + "/chatty.log";
  auto s = ServerProcess::Start(
      {"/bin/sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo last words; exit 3"},
      "http://127.0.0.1:9", log, milliseconds(10000));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("(exit code 3); last log line: 'last words'"));
  EXPECT_GT(fs::file_size(log), 1000000u);
}

TEST(ServerProcess, NotServingInTimeStopsTheServer) {
  Result<int> port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  const auto t0 = std::chrono::steady_clock::now();
  auto s = ServerProcess::Start({"/bin/sleep", "30"}, url, "", milliseconds(300));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "sleep did not serve at " + url + " within 0.3 s (connection refused)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(ServerProcess, MissingProgram) {
  auto s = ServerProcess::Start({"/nonexistent/llama-server"}, "http://127.0.0.1:9", "",
                                milliseconds(1000));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "/nonexistent/llama-server is missing or not executable; check the server's path");
}

TEST(OpenAiUrl, NormalizesSlashAndV1) {
  EXPECT_EQ(*NormalizeBaseUrl("http://h:1"), "http://h:1");
  EXPECT_EQ(*NormalizeBaseUrl("http://h:1/"), "http://h:1");
  EXPECT_EQ(*NormalizeBaseUrl("http://h:1/v1"), "http://h:1");
  EXPECT_EQ(*NormalizeBaseUrl("https://h/proxy/v1/"), "https://h/proxy");
  auto bad = NormalizeBaseUrl("127.0.0.1:8080");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "'127.0.0.1:8080' is not an http:// or https:// URL; give the server's address, "
            "e.g. http://127.0.0.1:8080");
}

// ---- Faults a real server cannot be made to produce ----

// A short request to a fault server.
HttpCompletionRequest Request(milliseconds timeout = milliseconds(2000)) {
  HttpCompletionRequest r;
  r.prompt = "x";
  r.timeout = timeout;
  return r;
}

constexpr char kModels[] = R"({"object":"list","data":[{"id":"m","object":"model"}]})";

class FaultTest : public ::testing::Test {
 protected:
  // Starts the fault server after the test registered its handlers.
  void Serve() { ASSERT_TRUE(fault_.Start()); }
  void ServeModels() {
    fault_.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kModels, "application/json");
    });
  }
  Result<OpenAiClient> Connect(milliseconds timeout = milliseconds(2000)) {
    return OpenAiClient::Connect(fault_.url(), timeout);
  }
  // A /v1/completions answering the SSE `events` (each "data: ...\n\n") and ending the stream.
  void StreamEvents(std::vector<std::string> events) {
    fault_.server().Post("/v1/completions",
                         [events](const httplib::Request&, httplib::Response& res) {
                           res.set_chunked_content_provider(
                               "text/event-stream", [events](size_t, httplib::DataSink& sink) {
                                 for (const auto& e : events) sink.write(e.data(), e.size());
                                 sink.done();
                                 return true;
                               });
                         });
  }

  testing::FaultServer fault_;  // declared first: destroyed after any client of it
};

TEST_F(FaultTest, NothingListening) {
  Result<int> port = FreeLocalPort();
  ASSERT_TRUE(port.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  auto c = OpenAiClient::Connect(url + "/", milliseconds(2000));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "no server answers at " + url + ": connection refused; start it or check the URL");
  EXPECT_EQ(c.error().stage, "start");
}

TEST_F(FaultTest, NotFound) {
  Serve();
  auto c = Connect();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            fault_.url() + ": GET /v1/models answered HTTP 404: not an OpenAI-compatible server");
  EXPECT_EQ(c.error().stage, "start");
}

TEST_F(FaultTest, HtmlPage) {
  fault_.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body>Welcome to nginx!</body></html>", "text/html");
  });
  Serve();
  auto c = Connect();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, fault_.url() +
                                   ": GET /v1/models answered with text/html, not JSON: not an "
                                   "OpenAI-compatible server");
}

TEST_F(FaultTest, InvalidJson) {
  fault_.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"data\": [", "application/json");
  });
  Serve();
  auto c = Connect();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, fault_.url() +
                                   ": GET /v1/models answered with invalid JSON: not an "
                                   "OpenAI-compatible server");
}

TEST_F(FaultTest, JsonWithoutDataList) {
  fault_.server().Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"models": []})", "application/json");
  });
  Serve();
  auto c = Connect();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, fault_.url() +
                                   ": GET /v1/models answered JSON without a \"data\" list of "
                                   "models: not an OpenAI-compatible server");
}

TEST_F(FaultTest, NeverAnswers) {
  fault_.server().Get("/v1/models",
                      [this](const httplib::Request&, httplib::Response&) { fault_.Hang(); });
  Serve();
  const auto t0 = std::chrono::steady_clock::now();
  auto c = Connect(milliseconds(300));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, fault_.url() + ": GET /v1/models did not answer within 0.3 s");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST_F(FaultTest, IdentityFieldsAbsentStayEmpty) {
  ServeModels();
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->identity().model_ids, std::vector<std::string>{"m"});
  EXPECT_EQ(c->identity().build_info, "");
  EXPECT_EQ(c->identity().n_ctx, -1);
  EXPECT_EQ(c->identity().total_slots, -1);
  EXPECT_TRUE(c->identity().props_json.is_null());
}

TEST_F(FaultTest, StreamClosedWithoutDone) {
  ServeModels();
  const std::string event = R"(data: {"choices":[{"text":"a","index":0,"finish_reason":null}]})"
                            "\n\n";
  StreamEvents({event, event, event});
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto done = c->Complete(Request());
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().message, fault_.url() +
                                      ": the server closed the stream after 3 chunks without "
                                      "finishing; check the server's log");
  EXPECT_EQ(done.error().stage, "generate");
}

TEST_F(FaultTest, EventThatIsNotJson) {
  ServeModels();
  StreamEvents({"data: {oops\n\n", "data: [DONE]\n\n"});
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto done = c->Complete(Request());
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().message,
            fault_.url() + ": the server sent an event that is not a JSON object: '{oops'");
}

TEST_F(FaultTest, CompletionAnswersJsonInsteadOfAStream) {
  ServeModels();
  fault_.server().Post("/v1/completions", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"choices":[{"text":"abc"}]})", "application/json");
  });
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto done = c->Complete(Request());
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().message, fault_.url() +
                                      ": POST /v1/completions answered with application/json, "
                                      "not an event stream: not an OpenAI-compatible server");
}

TEST_F(FaultTest, CompletionErrorMessageIsCutToOneShortLine) {
  ServeModels();
  fault_.server().Post("/v1/completions", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(R"({"error": {"message": "out of memory\n)" + std::string(500, 'x') + "\"}}",
                    "application/json");
  });
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto done = c->Complete(Request());
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.error().message,
              StartsWith(fault_.url() + ": POST /v1/completions answered HTTP 500: out of memory "
                                        "xxx"));
  EXPECT_THAT(done.error().message, ::testing::EndsWith("x..."));
  EXPECT_LT(done.error().message.size(), 300u);
  ExpectOneLine(done.error());
}

TEST_F(FaultTest, CompletionNeverAnswers) {
  ServeModels();
  fault_.server().Post("/v1/completions",
                       [this](const httplib::Request&, httplib::Response&) { fault_.Hang(); });
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto done = c->Complete(Request(milliseconds(300)));
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().message,
            fault_.url() + ": POST /v1/completions did not answer within 0.3 s");
}

// A chat stream: invalid JSON mid-stream and a connection dropped mid-stream fail the request
// with their reason; a stream that never ends is cut by the timeout or by keep_going.
TEST_F(FaultTest, ChatStreamFaults) {
  ServeModels();
  const std::string chunk =
      R"(data: {"choices":[{"delta":{"content":"ab"},"index":0,"finish_reason":null}]})"
      "\n\n";
  fault_.server().Post("/v1/chat/completions", [chunk](const httplib::Request& req,
                                                       httplib::Response& res) {
    const std::string mode = nlohmann::json::parse(req.body)["messages"][0]["content"];
    res.set_chunked_content_provider(
        "text/event-stream", [chunk, mode](size_t, httplib::DataSink& sink) {
          if (mode == "bad json") {
            sink.write(chunk.data(), chunk.size());
            const std::string bad = "data: {\"choices\": [\n\n";
            sink.write(bad.data(), bad.size());
            sink.done();
            return true;
          }
          if (mode == "drop") {
            sink.write(chunk.data(), chunk.size());
            return false;  // cpp-httplib closes the connection without ending the stream
          }
          for (int i = 0; i < 100000 && sink.is_writable(); ++i) {  // "forever"
            sink.write(chunk.data(), chunk.size());
            std::this_thread::sleep_for(milliseconds(1));
          }
          return false;
        });
  });
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  HttpCompletionRequest r = Request(milliseconds(1500));
  r.chat = true;
  r.prompt = "bad json";
  auto bad = c->Complete(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("an event that is not a JSON object"));
  ExpectOneLine(bad.error());

  r.prompt = "drop";
  auto dropped = c->Complete(r);
  ASSERT_FALSE(dropped.ok());
  EXPECT_THAT(dropped.error().message, HasSubstr("closed the stream after 1 chunks"));
  ExpectOneLine(dropped.error());

  r.prompt = "forever";
  const auto t0 = std::chrono::steady_clock::now();
  auto forever = c->Complete(r);
  ASSERT_FALSE(forever.ok());
  EXPECT_THAT(forever.error().message, HasSubstr("did not finish within 1.5 s"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));

  std::string seen;
  r.keep_going = [&seen](const std::string& text) {
    seen = text;
    return text.size() < 64;
  };
  auto stopped = c->Complete(r);
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_TRUE(stopped->stopped);
  EXPECT_EQ(stopped->Text(), seen);
  EXPECT_EQ(stopped->chunks.size(), 32u);  // 16 chunks of 2 bytes each: 32 bytes, then 64
}

TEST_F(FaultTest, NoTokenizeEndpoint) {
  ServeModels();
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto tokens = c->Tokenize("hello", true);
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.error().message,
            fault_.url() +
                " offers no /tokenize endpoint (HTTP 404), so prompts of an exact token "
                "count cannot be built; use a server that has one (llama-server, vLLM)");
  EXPECT_EQ(tokens.error().stage, "input");
}

// vLLM rejects llama-server's form (422) and takes {"model", "prompt", "add_special_tokens"}.
TEST_F(FaultTest, TokenizeFallsBackToVllmsFormAndKeepsIt) {
  ServeModels();
  std::atomic<int> requests{0};
  fault_.server().Post("/tokenize", [&](const httplib::Request& req, httplib::Response& res) {
    ++requests;
    const auto body = nlohmann::json::parse(req.body);
    if (!body.contains("prompt")) {
      res.status = 422;
      res.set_content(R"({"detail": [{"msg": "Field required"}]})", "application/json");
      return;
    }
    EXPECT_EQ(body["model"], "m");
    const bool special = body["add_special_tokens"];
    res.set_content(special ? R"({"tokens": [1, 7, 8], "count": 3})" : R"({"tokens": [7, 8]})",
                    "application/json");
  });
  Serve();
  auto c = Connect();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto with = c->Tokenize("hi", true);
  ASSERT_TRUE(with.ok()) << with.error().message;
  EXPECT_EQ(*with, (std::vector<int32_t>{1, 7, 8}));
  EXPECT_EQ(requests, 2);
  auto without = c->Tokenize("hi", false);
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_EQ(*without, (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(requests, 3);  // straight to the form that worked
}

}  // namespace
}  // namespace pipette
