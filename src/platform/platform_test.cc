#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "platform/cpu_affinity.h"
#include "platform/device_names.h"
#include "platform/output_path.h"
#include "platform/proc_memory.h"
#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

TEST(CpuList, ParsesTasksetSyntaxAndFormatsCanonically) {
  EXPECT_EQ(*ParseCpuList("0"), (std::vector<int>{0}));
  EXPECT_EQ(*ParseCpuList("3,0-2,2"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*ParseCpuList("4-5,8"), (std::vector<int>{4, 5, 8}));
  EXPECT_EQ(FormatCpuList({5, 0, 1, 2, 8, 9}), "0-2,5,8-9");
  EXPECT_EQ(FormatCpuList({}), "");
  for (const char* bad : {"", "a", "1-", "-1", "2-1", "0,,1", "1 ", "5000", "0x1"}) {
    auto r = ParseCpuList(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  EXPECT_NE(ParseCpuList("2-1").error().message.find("ends below its start"), std::string::npos);
}

TEST(CpuList, RestrictingToAnUnavailableCpuIsRefused) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const Status s = RestrictToCpus({allowed.back() + 1});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is not available"), std::string::npos) << s.error().message;
  EXPECT_EQ(AllowedCpus(), allowed);  // unchanged
}

TEST(ProcMemory, ParsesStatusInBytes) {
  const std::string text =
      "Name:\tpipette\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n"
      "VmSwap:\t      16 kB\n";
  const ProcMemory m = ParseProcStatus(text);
  EXPECT_EQ(m.vm_hwm, 2048u * 1024);
  EXPECT_EQ(m.vm_rss, 1024u * 1024);
  EXPECT_EQ(m.vm_swap, 16u * 1024);
}

// A status file as Linux 6.1 writes it for a process with an mmapped model: VmRSS is exactly
// RssAnon + RssFile + RssShmem; tabs and padding as the kernel writes them.
TEST(ProcMemory, ParsesTheResidentSplit) {
  const std::string text =
      "Name:\tpipette-llamac\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\n"
      "PPid:\t4200\nFDSize:\t64\nVmPeak:\t 1203460 kB\nVmSize:\t 1203460 kB\n"
      "VmLck:\t       0 kB\nVmPin:\t       0 kB\nVmHWM:\t  831488 kB\nVmRSS:\t  812032 kB\n"
      "RssAnon:\t   40960 kB\nRssFile:\t  770048 kB\nRssShmem:\t    1024 kB\n"
      "VmData:\t  120000 kB\nVmStk:\t     132 kB\nVmExe:\t    2048 kB\nVmLib:\t   30000 kB\n"
      "VmPTE:\t    1800 kB\nVmSwap:\t       8 kB\nHugetlbPages:\t       0 kB\n"
      "Threads:\t3\nSigQ:\t0/96363\n";
  const ProcMemory m = ParseProcStatus(text);
  EXPECT_EQ(m.vm_hwm, 831488ull * 1024);
  EXPECT_EQ(m.vm_rss, 812032ull * 1024);
  EXPECT_EQ(m.vm_swap, 8ull * 1024);
  EXPECT_TRUE(m.has_rss_split);
  EXPECT_EQ(m.rss_anon, 40960ull * 1024);
  EXPECT_EQ(m.rss_file, 770048ull * 1024);
  EXPECT_EQ(m.rss_shmem, 1024ull * 1024);
  EXPECT_EQ(m.rss_anon + m.rss_file + m.rss_shmem, m.vm_rss);
  EXPECT_EQ(m.Resident(), (812032ull + 8) * 1024);
}

// A kernel before 4.5 has no Rss* lines: no split, rather than a split of zeros.
TEST(ProcMemory, OldKernelHasNoSplit) {
  const ProcMemory m = ParseProcStatus("VmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n");
  EXPECT_FALSE(m.has_rss_split);
  EXPECT_EQ(m.rss_anon, 0u);
  EXPECT_EQ(m.rss_file, 0u);
  EXPECT_EQ(m.vm_rss, 1024u * 1024);
}

TEST(ProcMemory, ReadsOwnProcess) {
  const auto m = ReadProcMemory(getpid());
  ASSERT_TRUE(m.has_value());
  EXPECT_GT(m->vm_rss, 0u);
  EXPECT_GE(m->vm_hwm, m->vm_rss);
  ASSERT_TRUE(m->has_rss_split);  // Linux 4.5 and later
  EXPECT_GT(m->rss_anon, 0u);
  EXPECT_GT(m->rss_file, 0u);  // this test program's own pages
  EXPECT_EQ(m->rss_anon + m->rss_file + m->rss_shmem, m->vm_rss);
}

// The sampler keeps the whole reading with the largest resident set: here our own process, whose
// resident set grows by a touched 64 MiB buffer between two readings.
TEST(MemorySampler, KeepsTheSplitOfTheLargestResidentSet) {
  MemorySampler sampler(getpid(), 10);
  sampler.Sample();
  const auto before = sampler.AtPeak();
  ASSERT_TRUE(before.has_value());
  std::vector<char> buffer(64u << 20, 1);  // touched: anonymous and resident
  sampler.Sample();
  const auto at_peak = sampler.AtPeak();
  sampler.Stop();
  ASSERT_TRUE(at_peak.has_value());
  EXPECT_GT(at_peak->Resident(), before->Resident());
  EXPECT_GE(at_peak->rss_anon, before->rss_anon + (60u << 20)) << buffer[buffer.size() / 2];
  EXPECT_LE(at_peak->Resident(), sampler.PeakBytes());
  EXPECT_EQ(at_peak->rss_anon + at_peak->rss_file + at_peak->rss_shmem, at_peak->vm_rss);
}

TEST(ChildProcess, EchoesLinesAndReportsExit) {
  auto child = ChildProcess::Start({"/bin/cat"}, "");
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_TRUE(child->WriteLine("hello").ok());
  EXPECT_EQ(child->ReadLine().value_or(""), "hello");
  child->CloseStdin();
  EXPECT_FALSE(child->ReadLine().has_value());
  const auto exit = child->Wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 0);
}

TEST(ChildProcess, SigkillIsDescribedAndWritesFailCleanly) {
  auto child = ChildProcess::Start({"/bin/cat"}, "");
  ASSERT_TRUE(child.ok());
  child->Kill(SIGKILL);
  EXPECT_FALSE(child->ReadLine().has_value());
  const auto exit = child->Wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->Describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_FALSE(child->WriteLine("more").ok());  // no SIGPIPE crash
}

TEST(ChildProcess, MissingProgramIsNamed) {
  auto child = ChildProcess::Start({"/nonexistent/pipette-driver"}, "");
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.error().message.find("/nonexistent/pipette-driver"), std::string::npos);
}

TEST(RunTool, CapturesOutputAndExitCode) {
  std::string out;
  auto r = RunTool({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->code, 3);
  EXPECT_NE(out.find("out"), std::string::npos);
  EXPECT_NE(out.find("err"), std::string::npos);
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

TEST(OutputPath, RefusesWhatWouldDestroyData) {
  const std::string dir = testing::TempDir() + "/outpath";
  std::filesystem::create_directories(dir);
  const std::string in = dir + "/in.gguf", store = dir + "/results.db", plain = dir + "/old.csv";
  std::ofstream(in) << "GGUF";
  std::ofstream(plain) << "a,b\n";
  std::ofstream(store, std::ios::binary) << std::string("SQLite format 3\0", 16) << "rest";
  EXPECT_TRUE(CheckOutputPath(dir + "/new.gguf", {in}).ok());
  EXPECT_TRUE(CheckOutputPath(plain).ok());  // -o replaces an ordinary file
  EXPECT_NE(CheckOutputPath(in, {in}).error().message.find("also an input"), std::string::npos);
  EXPECT_NE(CheckOutputPath(store).error().message.find("SQLite database"), std::string::npos);
  EXPECT_NE(CheckOutputPath("/dev/null").error().message.find("not a regular file"),
            std::string::npos);
  EXPECT_NE(CheckOutputPath(dir).error().message.find("not a regular file"), std::string::npos);
  EXPECT_NE(CheckOutputPath(dir + "/no/x.csv").error().message.find("does not exist"),
            std::string::npos);
  EXPECT_FALSE(CheckOutputPath("").ok());
}

TEST(OutputPath, RefusesTheStoreAndItsSqliteSideFiles) {
  const std::string dir = testing::TempDir() + "/outpath-store";
  std::filesystem::create_directories(dir);
  const std::string store = dir + "/results.db";
  std::ofstream(store, std::ios::binary) << std::string("SQLite format 3\0", 16) << "rest";
  std::ofstream(store + "-shm") << "shared memory";  // exists; -wal and -journal do not
  EXPECT_NE(CheckOutputPath(store, {}, store).error().message.find("is the results store"),
            std::string::npos);
  for (const std::string side : {"-wal", "-shm", "-journal"}) {
    for (const std::string& out : {store + side, dir + "/./results.db" + side,
                                   dir + "/../outpath-store/results.db" + side}) {
      auto s = CheckOutputPath(out, {}, store);
      ASSERT_FALSE(s.ok()) << out;
      EXPECT_EQ(s.error().message, out + " is SQLite's " + side + " file of the results store " +
                                       store +
                                       " (writing it would corrupt the store); choose another "
                                       "output path");
    }
  }
  EXPECT_TRUE(CheckOutputPath(dir + "/results.db-wal.html", {}, store).ok());
  EXPECT_TRUE(CheckOutputPath(dir + "/report.html", {}, store).ok());
  EXPECT_TRUE(CheckOutputPath(dir + "/other.db-wal", {}, store).ok());
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// A device names file of its own for each test.
class DeviceNames : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pipette-names-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    const char* before = getenv("PIPETTE_CONFIG");
    if (before != nullptr) saved_ = before;
    setenv("PIPETTE_CONFIG", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_) setenv("PIPETTE_CONFIG", saved_->c_str(), 1);
    else unsetenv("PIPETTE_CONFIG");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::optional<std::string> saved_;
};

TEST_F(DeviceNames, OneNameForOneDeviceKeptOnTheHost) {
  const std::string phone(64, 'a'), board(64, 'b');
  EXPECT_EQ(DeviceShownAs(phone, ReadDeviceNames()), "aaaaaaaa");  // unnamed: its id's start
  ASSERT_TRUE(NameDevice(phone, "pixel-8").ok());
  ASSERT_TRUE(NameDevice(board, "pi 5 lab").ok());
  EXPECT_EQ(DeviceNamesPath(), (dir_ / "device-names.json").string());
  EXPECT_EQ(DeviceNameOf(phone), "pixel-8");
  EXPECT_EQ(DeviceShownAs(board, ReadDeviceNames()), "pi 5 lab");
  // Renaming keeps one name per device; a name taken by another device is refused.
  ASSERT_TRUE(NameDevice(phone, "pixel-8a").ok());
  EXPECT_EQ(ReadDeviceNames().size(), 2u);
  const Status taken = NameDevice(board, "pixel-8a");
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().message,
            "device name 'pixel-8a' is taken by device aaaaaaaaaaaa; one name names one device: "
            "choose another");
  EXPECT_EQ(DeviceNameOf(board), "pi 5 lab");
}

TEST_F(DeviceNames, NamesPeopleCannotTypeOrReadAreRefusedAndABrokenFileIsNeverOverwritten) {
  for (const std::string& bad : std::vector<std::string>{"", " lead", "trail ", "<b>x</b>", "tab\there",
                                                       std::string(65, 'x')}) {
    const Status s = CheckDeviceName(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("give 1 to 64 letters"), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.find('\t'), std::string::npos) << s.error().message;
  }
  EXPECT_TRUE(CheckDeviceName("Pixel 8 (lab #2)").ok());
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "device-names.json") << "{not json";
  EXPECT_TRUE(ReadDeviceNames().empty());
  const Status s = NameDevice(std::string(64, 'c'), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is not a device names file"), std::string::npos);
  std::ifstream in(dir_ / "device-names.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{not json");
  // An entry that is not a name is never dropped by a rewrite; a folder in the file's place is
  // an error, not an abort.
  std::ofstream(dir_ / "device-names.json", std::ios::trunc)
      << R"({"schema":"pipette.device-names/1","names":{"x":5,"y":"ok"}})";
  EXPECT_EQ(ReadDeviceNames().size(), 1u);
  const Status kept = NameDevice(std::string(64, 'c'), "z");
  ASSERT_FALSE(kept.ok());
  EXPECT_NE(kept.error().message.find("holds an entry that is not a device name"), std::string::npos);
  std::filesystem::remove(dir_ / "device-names.json");
  std::filesystem::create_directories(dir_ / "device-names.json");
  EXPECT_TRUE(ReadDeviceNames().empty());
  const Status folder = NameDevice(std::string(64, 'c'), "z");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message.find("is not a file"), std::string::npos);
}

}  // namespace
}  // namespace pipette
