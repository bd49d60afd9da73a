// scripts/fetch-data.sh against a local HTTP server (issue 27 item 1): the server serves the data
// folder the tests read (pipette::testing::DataDir(), ../shared/data here) with the manifest's
// layout, as PIPETTE_DATA_MIRROR; the script fetches into a fresh folder. Every file arrives with
// its manifest digest; a corrupted file, a 404 and a body cut short are one line each and leave
// nothing of that file behind. Skips, saying so, without the data folder: it is what is served.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "platform/process.h"
#include "runtimes/openai/fault_server.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(PIPETTE_SOURCE_DIR) + "/scripts/fetch-data.sh";
const std::string kManifest = std::string(PIPETTE_SOURCE_DIR) + "/scripts/data-manifest.txt";

struct Entry {
  std::string path;
  size_t size = 0;
  std::string sha256;
};

std::vector<Entry> Manifest() {
  std::vector<Entry> entries;
  std::ifstream in(kManifest);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Entry e;
    fields >> e.path >> e.size >> e.sha256;
    entries.push_back(e);
  }
  return entries;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Serves DataDir()'s files by their manifest paths; the paths in `corrupt` with one byte changed,
// those in `missing` as 404, those in `cut` as a Content-Length of the whole file and half its
// bytes before the connection closes.
class Mirror {
 public:
  std::set<std::string> corrupt, missing, cut;

  bool Start() {
    server_.server().Get(R"(/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string path = req.matches[1];
      std::string bytes = ReadAll(testing::DataDir() + "/" + path);
      if (missing.count(path) || bytes.empty()) {
        res.status = 404;
        return;
      }
      if (corrupt.count(path)) bytes[bytes.size() / 2] ^= 0x20;
      if (!cut.count(path)) {
        res.set_content(bytes, "application/octet-stream");
        return;
      }
      const size_t size = bytes.size();
      res.set_content_provider(size, "application/octet-stream",
                               [bytes](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset > 0) return false;  // the rest never comes
                                 sink.write(bytes.data(), bytes.size() / 2);
                                 return true;
                               });
    });
    return server_.Start();
  }
  std::string Url() const { return server_.url(); }

 private:
  testing::FaultServer server_;
};

// Runs fetch-data.sh DIR with the mirror's URL.
CommandRun Fetch(const Mirror& mirror, const std::string& dir) {
  auto run = RunCommand(
      {"/usr/bin/env", "PIPETTE_DATA_MIRROR=" + mirror.Url(), "bash", kScript, dir},
      std::chrono::minutes(5));
  EXPECT_TRUE(run.ok()) << run.error().message;
  return run.ok() ? *run : CommandRun{};
}

class FetchData : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const Entry& e : Manifest()) {
      if (!fs::exists(testing::DataDir() + "/" + e.path)) {
        GTEST_SKIP() << testing::NeedData("every file of scripts/data-manifest.txt, to serve");
      }
    }
    char tmpl[] = "/tmp/pipette-fetch-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    work_ = tmpl;
    ASSERT_TRUE(mirror_.Start());
  }
  void TearDown() override {
    std::error_code ec;
    if (!work_.empty()) fs::remove_all(work_, ec);
  }
  // Every regular file under `dir`, as paths relative to it.
  static std::set<std::string> FilesUnder(const std::string& dir) {
    std::set<std::string> files;
    for (const auto& f : fs::recursive_directory_iterator(dir)) {
      if (!f.is_directory()) files.insert(fs::relative(f.path(), dir).string());
    }
    return files;
  }

  std::string work_;
  Mirror mirror_;
};

TEST_F(FetchData, EveryFileArrivesWithItsDigestAndTheTestsAreToldWhere) {
  const std::string dir = work_ + "/data";
  const CommandRun run = Fetch(mirror_, dir);
  ASSERT_EQ(run.exit.code, 0) << run.err;
  const std::vector<Entry> manifest = Manifest();
  std::set<std::string> expected;
  for (const Entry& e : manifest) {
    expected.insert(e.path);
    const std::string bytes = ReadAll(dir + "/" + e.path);
    EXPECT_EQ(bytes.size(), e.size) << e.path;
    EXPECT_EQ(Sha256Hex(bytes), e.sha256) << e.path;
  }
  EXPECT_EQ(FilesUnder(dir), expected);  // nothing else: no temporary file left
  EXPECT_NE(run.out.find("fetch-data: " + std::to_string(manifest.size()) + " fetched, 0 already"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("export PIPETTE_DATA_DIR=" + dir), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "");

  // Again: nothing fetched, the files kept.
  const CommandRun again = Fetch(mirror_, dir);
  ASSERT_EQ(again.exit.code, 0) << again.err;
  EXPECT_NE(again.out.find("0 fetched, " + std::to_string(manifest.size()) + " already there"),
            std::string::npos)
      << again.out;
}

TEST_F(FetchData, WrongDigestMissingFileAndCutDownloadAreOneLineEachAndNothingIsKept) {
  const std::string corrupt = "models/stories260K/tok512.bin";
  const std::string missing = "evals/math500/test.jsonl";
  const std::string cut = "evals/ifbench/IFBench_test.jsonl";
  mirror_.corrupt = {corrupt};
  mirror_.missing = {missing};
  mirror_.cut = {cut};
  const std::string dir = work_ + "/data";
  const CommandRun run = Fetch(mirror_, dir);
  EXPECT_EQ(run.exit.code, 1) << run.out << run.err;

  const std::vector<std::string> err = Lines(run.err);
  ASSERT_EQ(err.size(), 4u) << run.err;  // one line per file, then what to do
  EXPECT_EQ(err[0].rfind("fetch-data: " + corrupt + ": wrong SHA-256 ", 0), 0u) << err[0];
  EXPECT_NE(err[0].find("nothing kept"), std::string::npos) << err[0];
  EXPECT_EQ(err[1].rfind("fetch-data: " + missing + ": HTTP 404 from " + mirror_.Url() + "/" +
                             missing + "; nothing kept",
                         0),
            0u)
      << err[1];
  EXPECT_EQ(err[2].rfind("fetch-data: " + cut + ": download cut short after ", 0), 0u) << err[2];
  EXPECT_EQ(err[3], "fetch-data: 3 files failed; rerun to fetch them (the rest is kept)");

  // The three are absent, nothing half-written anywhere; the rest arrived whole.
  std::set<std::string> expected;
  for (const Entry& e : Manifest()) {
    if (e.path == corrupt || e.path == missing || e.path == cut) continue;
    expected.insert(e.path);
    EXPECT_EQ(Sha256Hex(ReadAll(dir + "/" + e.path)), e.sha256) << e.path;
  }
  EXPECT_EQ(FilesUnder(dir), expected);

  // Served right, a rerun fetches just the three.
  mirror_.corrupt.clear();
  mirror_.missing.clear();
  mirror_.cut.clear();
  const CommandRun again = Fetch(mirror_, dir);
  ASSERT_EQ(again.exit.code, 0) << again.err;
  EXPECT_NE(again.out.find("fetch-data: 3 fetched, "), std::string::npos) << again.out;
}

TEST(FetchDataScript, NeedsOneFolder) {
  auto run = RunCommand({"/usr/bin/env", "bash", kScript}, std::chrono::seconds(30));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit.code, 2);
  EXPECT_NE(run->err.find("usage: scripts/fetch-data.sh"), std::string::npos) << run->err;
}

}  // namespace
}  // namespace pipette
