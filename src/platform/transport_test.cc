// Transports (platform/transport.h): device addresses, and the adb transport against a stand-in
// `adb` on PATH, because no phone or emulator is attached here. The stand-in is named so in
// every test: `push`/`pull` copy files, `shell` runs `sh -c` on this machine, and its modes give
// the faults a real adb shows (an exit status that does not come back, a stalled device, no such
// device). The ssh transport is tested against a real sshd (tests/e2e/device_e2e_test.cc).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "platform/driver_builds.h"
#include "platform/transport.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

struct GoodAddress {
  const char* text;
  const char* uri;
};
const GoodAddress kGoodAddresses[] = {
    {"local", "local"},
    {"", "local"},
    {"ssh://board", "ssh://board"},
    {"ssh://pi@board.local:2222", "ssh://pi@board.local:2222"},
    {"ssh://u@10.0.0.7?dir=/data/p", "ssh://u@10.0.0.7?dir=/data/p"},
    {"adb://R58M12345", "adb://R58M12345"},
    {"adb://emulator-5554", "adb://emulator-5554"},
    {"adb://192.168.1.20:5555", "adb://192.168.1.20:5555"},
};
struct BadAddress {
  const char* text;
  const char* why;
};
const BadAddress kBadAddresses[] = {
    {"board", "not a device address"},
    {"http://board", "unknown scheme 'http'"},
    {"ssh://", "the host is empty"},
    {"ssh://-oProxyCommand=x", "the host is empty or not a plain"},
    {"ssh://a b", "the host is empty or not a plain"},
    {"ssh://pi@board:0", "the port '0' is not 1..65535"},
    {"ssh://pi@board:99999", "is not 1..65535"},
    {"ssh://pi@board:", "is not 1..65535"},
    {"ssh://@board", "the user name is empty"},
    {"ssh://pi;rm@board", "the user name is empty or not a plain"},
    {"adb://", "the adb serial is empty"},
    {"adb://-s", "the adb serial is empty or not a plain"},
    {"adb://x'y", "the adb serial is empty or not a plain"},
    {"ssh://board?cwd=/x", "the only query it takes is ?dir=PATH"},
};

void Write(const fs::path& p, const std::string& text, bool executable = false) {
  std::ofstream(p) << text;
  if (executable) fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A stand-in for `adb` (not a phone): ADB_STANDIN_MODE picks the fault.
constexpr const char* kStandInAdb = R"(#!/bin/sh
# STAND-IN for adb, for tests on a machine without a phone: push/pull copy, shell runs sh -c.
[ "$1" = -s ] || { echo "adb: this stand-in expects -s SERIAL" >&2; exit 1; }
serial=$2; shift 2
if [ "$ADB_STANDIN_MODE" = missing ]; then echo "adb: device '$serial' not found" >&2; exit 1; fi
case "$1" in
  push) echo "push $2" >> "$ADB_STANDIN_LOG"; cp "$2" "$3" || exit 1; echo "$2: 1 file pushed." ;;
  pull) cp "$2" "$3" || exit 1 ;;
  shell)
    case "$ADB_STANDIN_MODE" in
      stall) sleep 1000 ;;
      lost) exit 0 ;;
    esac
    sh -c "$2"; rc=$?
    [ "$ADB_STANDIN_MODE" = noexit ] && exit 0
    exit $rc ;;
  *) echo "adb: unknown command $1" >&2; exit 1 ;;
esac
)";

class AdbStandIn : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("pipette-adb-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
    fs::create_directories(root_ / "device");
    Write(root_ / "bin/adb", kStandInAdb, true);
    old_path_ = getenv("PATH") ? getenv("PATH") : "";
    setenv("PATH", ((root_ / "bin").string() + ":" + old_path_).c_str(), 1);
    setenv("ADB_STANDIN_LOG", (root_ / "push.log").c_str(), 1);
    Mode("");
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);
    unsetenv("ADB_STANDIN_MODE");
    fs::remove_all(root_);
  }
  void Mode(const std::string& m) { setenv("ADB_STANDIN_MODE", m.c_str(), 1); }

  std::shared_ptr<Transport> Open(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto a = ParseDeviceAddress("adb://EMULATOR5554?dir=" + (root_ / "device").string());
    EXPECT_TRUE(a.ok());
    TransportOptions o;
    o.command_timeout = timeout;
    o.copy_timeout = timeout;
    auto t = OpenTransport(*a, o);
    EXPECT_TRUE(t.ok()) << t.error().message;
    return *t;
  }

  fs::path root_;
  std::string old_path_;
};

TEST_F(AdbStandIn, ConnectsRunsAndPassesTheExitStatusBack) {
  auto t = Open();
  auto arch = t->Connect();
  ASSERT_TRUE(arch.ok()) << arch.error().message;
  EXPECT_FALSE(arch->empty());
  EXPECT_FALSE(t->IsHost());
  auto r = t->Run({"sh", "-c", "echo \"it's here\"; echo err >&2; exit 7"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->out, "it's here\n");
  EXPECT_EQ(r->err, "err\n");
}

// Older adb (and devices without its shell protocol) always exit 0: the sentinel still carries
// the command's own status.
TEST_F(AdbStandIn, AnAdbThatDropsTheExitStatusStillReportsIt) {
  Mode("noexit");
  auto t = Open();
  auto r = t->Run({"sh", "-c", "exit 3"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
}

TEST_F(AdbStandIn, ALinkThatLosesTheCommandIsAnErrorNotSuccess) {
  Mode("lost");
  auto t = Open();
  auto r = t->Run({"true"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("exit status did not come back"), std::string::npos)
      << r.error().message;
}

TEST_F(AdbStandIn, AStalledDeviceFailsWithinTheTimeout) {
  Mode("stall");
  auto t = Open(std::chrono::milliseconds(1500));
  const auto t0 = std::chrono::steady_clock::now();
  auto r = t->Run({"true"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_LT(s, 10.0);
  EXPECT_NE(r.error().message.find("did not answer within 1 s"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

TEST_F(AdbStandIn, NoSuchDeviceIsOneLineNamingIt) {
  Mode("missing");
  auto t = Open();
  auto r = t->Connect();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no device EMULATOR5554 is attached"), std::string::npos)
      << r.error().message;
}

TEST_F(AdbStandIn, InstallCopiesOnceBySha256AndLeavesNoPartialFile) {
  auto t = Open();
  ASSERT_TRUE(t->Connect().ok());
  Write(root_ / "model.gguf", std::string(100000, 'x'));
  const std::string sha(64, 'a');
  auto first = t->Install((root_ / "model.gguf").string(), sha, "models", "model.gguf", false);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, (root_ / "device/models" / sha / "model.gguf").string());
  EXPECT_EQ(fs::file_size(*first), 100000u);
  auto second = t->Install((root_ / "model.gguf").string(), sha, "models", "model.gguf", false);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  const std::string pushes = Read(root_ / "push.log");
  EXPECT_EQ(std::count(pushes.begin(), pushes.end(), '\n'), 1) << pushes;
  for (const auto& e : fs::recursive_directory_iterator(root_ / "device")) {
    EXPECT_EQ(e.path().string().find(".part-"), std::string::npos) << e.path();
  }
  // Fetch brings a device file back.
  ASSERT_TRUE(t->Fetch(*first, (root_ / "back").string()).ok());
  EXPECT_EQ(fs::file_size(root_ / "back"), 100000u);
}

// A real full disk: a 1 MiB tmpfs as pipette's folder on the "device" (needs root to mount).
TEST_F(AdbStandIn, AFullDeviceIsRefusedBeforeCopying) {
  const fs::path small = root_ / "device";
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (not root?): the full-disk case needs one";
  }
  auto t = Open();
  ASSERT_TRUE(t->Connect().ok());
  Write(root_ / "big.gguf", std::string(4 << 20, 'x'));
  auto r = t->Install((root_ / "big.gguf").string(), std::string(64, 'b'), "models", "big.gguf", false);
  umount(small.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("MiB free in"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("big.gguf needs 4 MiB"), std::string::npos) << r.error().message;
  EXPECT_EQ(Read(root_ / "push.log"), "");
}

TEST_F(AdbStandIn, StartsAProcessWithPipesAndKillsItsGroup) {
  auto t = Open();
  ASSERT_TRUE(t->Connect().ok());
  // A shell that announces its pid (as the driver does), then echoes a line back.
  auto child = t->Start({"sh", "-c", "echo $$; read line; echo got:$line; sleep 1000"},
                        (root_ / "stderr.log").string());
  ASSERT_TRUE(child.ok()) << child.error().message;
  auto pid_line = child->ReadLine(std::chrono::seconds(10));
  ASSERT_TRUE(pid_line.has_value());
  const int pid = std::stoi(*pid_line);
  ASSERT_TRUE(child->WriteLine("hello").ok());
  EXPECT_EQ(child->ReadLine(std::chrono::seconds(10)).value_or(""), "got:hello");
  ASSERT_TRUE(t->KillGroup(pid).ok());
  // The device process is gone (it is on this machine here: kill -0 tells).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    auto r = t->Run({"sh", "-c", "kill -0 " + std::to_string(pid) + " 2>/dev/null"});
    gone = r.ok() && r->exit_code != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone);
  child->Wait(std::chrono::seconds(10));
}

TEST(DeviceAddress, ParsesEveryForm) {
  for (const auto& c : kGoodAddresses) {
    auto a = ParseDeviceAddress(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.error().message;
    EXPECT_EQ(a->Uri(), c.uri) << c.text;
  }
  auto ssh = ParseDeviceAddress("ssh://pi@board.local:2222");
  ASSERT_TRUE(ssh.ok());
  EXPECT_EQ(ssh->kind, TransportKind::kSsh);
  EXPECT_EQ(ssh->user, "pi");
  EXPECT_EQ(ssh->host, "board.local");
  EXPECT_EQ(ssh->port, 2222);
  auto v6 = ParseDeviceAddress("ssh://[::1]:22");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
}

TEST(DeviceAddress, RefusesWhatSshOrAShellWouldMisread) {
  for (const auto& c : kBadAddresses) {
    auto a = ParseDeviceAddress(c.text);
    ASSERT_FALSE(a.ok()) << c.text;
    EXPECT_NE(a.error().message.find(c.why), std::string::npos) << c.text << ": " << a.error().message;
    EXPECT_NE(a.error().message.find("ssh://[user@]host[:port]"), std::string::npos);
  }
}

TEST(ShellQuoteTest, SurvivesQuotesAndSpaces) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(DriverBuilds, ChoosesTheBestLevelTheCpuRuns) {
  const fs::path dir = fs::temp_directory_path() / ("pipette-builds-" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (const char* level : {"armv8.2-a+dotprod+fp16", "armv8-a"}) {
    fs::create_directories(dir / "aarch64-linux" / level);
    Write(dir / "aarch64-linux" / level / "pipette-llamacpp-driver", "x");
  }
  auto pi5 = ChooseDriverBuild(dir.string(), "aarch64", "fp asimd evtstrm aes asimdhp asimddp cpuid");
  ASSERT_TRUE(pi5.ok());
  EXPECT_EQ(pi5->cpu_level, "armv8.2-a+dotprod+fp16");
  auto pi4 = ChooseDriverBuild(dir.string(), "aarch64", "fp asimd evtstrm crc32 cpuid");
  ASSERT_TRUE(pi4.ok());
  EXPECT_EQ(pi4->cpu_level, "armv8-a");
  auto armv7 = ChooseDriverBuild(dir.string(), "armv7l", "");
  ASSERT_FALSE(armv7.ok());
  EXPECT_NE(armv7.error().message.find("no driver for armv7l"), std::string::npos);
  EXPECT_NE(armv7.error().message.find("scripts/build-device.sh --target"), std::string::npos);
  auto x86 = ChooseDriverBuild(dir.string(), "x86_64", "avx2 fma");
  ASSERT_FALSE(x86.ok());
  EXPECT_NE(x86.error().message.find("scripts/build-device.sh --target x86_64-linux"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipette
