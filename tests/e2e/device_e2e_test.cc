// Devices beyond the host (DESIGN.md 8a), end to end: a real sshd on 127.0.0.1 stands for a
// board, and pipette measures through it with the statically linked device builds of the driver
// (scripts/build-device.sh; scripts/test.sh makes them): the x86_64 build natively, the aarch64
// build under qemu-user (binfmt), which the probe records as emulated. Timings under emulation
// mean nothing; what these tests show is that every measurement, the memory and the fingerprint
// come from the device side, and that faults are one line and leave nothing running.
#include <elf.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/analysis.h"
#include "pipette/cell.h"
#include "pipette/gguf.h"
#include "pipette/runtimes.h"
#include "pipette/store.h"
#include "platform/device_access.h"
#include "platform/driver_builds.h"
#include "platform/energy.h"
#include "ssh_server.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace testing_models;

std::string Build(const std::string& target, const std::string& level) {
  return DeviceDriverFolder() + "/" + target + "/" + level + "/pipette-llamacpp-driver";
}

bool HostRunsX86V3() {
  std::ifstream in("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.find(" avx2") != std::string::npos && text.find(" fma") != std::string::npos;
}

// Processes whose command line names `needle` (the device folder of a test's sshd).
std::vector<int> ProcessesNaming(const std::string& needle) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // Through operator<<, which turns a read error into failbit: a process that exits between
    // the open and the read makes libstdc++'s filebuf throw (ESRCH) out of an iterator.
    std::ifstream in(e.path() / "cmdline");
    std::stringstream text;
    text << in.rdbuf();
    const std::string cmd = text.str();
    if (cmd.find(needle) != std::string::npos && std::stoi(name) != getpid()) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// What an ELF file's headers say: its machine and the shared libraries it needs (DT_NEEDED).
struct ElfFacts {
  bool elf64 = false;
  uint16_t machine = 0;
  bool interpreter = false;  // PT_INTERP: a dynamic loader is asked for
  int needed = 0;            // DT_NEEDED entries
};

ElfFacts ReadElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ElfFacts f;
  if (bytes.size() < sizeof(Elf64_Ehdr) || bytes.compare(0, 4, ELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64) {
    return f;
  }
  f.elf64 = true;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  f.machine = eh.e_machine;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    const size_t at = eh.e_phoff + static_cast<size_t>(i) * eh.e_phentsize;
    if (at + sizeof ph > bytes.size()) break;
    std::memcpy(&ph, bytes.data() + at, sizeof ph);
    if (ph.p_type == PT_INTERP) f.interpreter = true;
    if (ph.p_type != PT_DYNAMIC) continue;
    for (size_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz &&
                                   off + sizeof(Elf64_Dyn) <= bytes.size();
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) ++f.needed;
    }
  }
  return f;
}

// Every device build there is: the target's machine in the ELF header, and no shared library
// needed (nothing for LD_LIBRARY_PATH to miss on a phone).
TEST(DeviceBuilds, AreStaticBinariesForTheirTarget) {
  const std::pair<std::string, uint16_t> targets[] = {{"aarch64-linux", EM_AARCH64},
                                                      {"x86_64-linux", EM_X86_64}};
  int seen = 0;
  for (const auto& [target, machine] : targets) {
    for (const std::string& level : CpuLevels(target)) {
      const std::string path = Build(target, level);
      if (access(path.c_str(), R_OK) != 0) continue;
      ++seen;
      const ElfFacts f = ReadElf(path);
      ASSERT_TRUE(f.elf64) << path;
      EXPECT_EQ(f.machine, machine) << path;
      EXPECT_FALSE(f.interpreter) << path << " asks for a dynamic loader";
      EXPECT_EQ(f.needed, 0) << path << " needs shared libraries";
    }
  }
  if (seen == 0) {
    GTEST_SKIP() << "no device build in " << DeviceDriverFolder()
                 << " (scripts/build-device.sh --target aarch64-linux; scripts/test.sh makes them)";
  }
}

// Energy through the whole path: a real cell whose device readings come from a laptop's fake
// sysfs (a discharging battery at power_now 7.942 W): average_power and energy_per_token per
// repetition. No machine here reports energy; a device without a source has no such metrics.
TEST(EnergyMetrics, ADeviceOnBatteryGetsPowerAndEnergyPerToken) {
  CellSpec spec = QuickCell(TinySynthetic(), "prefill_throughput_8");
  spec.readiness.sys_root = std::string(PIPETTE_DEVICE_TESTDATA) + "/x86_laptop/sys";
  spec.readiness.waive_thermal = true;
  spec.readiness.waive_throttle = true;
  auto r = RunCell(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ((*r)["status"], "ok") << (*r)["failure"].dump();
  const json& m = (*r)["metrics"];
  ASSERT_TRUE(m.contains("average_power")) << m.dump();
  EXPECT_EQ(m["average_power"]["unit"], "W");
  EXPECT_DOUBLE_EQ(m["average_power"]["median"].get<double>(), 7.942);
  EXPECT_EQ(m["energy_per_token"]["unit"], "mJ/token");
  EXPECT_GT(m["energy_per_token"]["median"].get<double>(), 0);
  for (const json& sample : (*r)["samples"]) {
    EXPECT_TRUE(sample.contains("energy_per_token")) << sample.dump();
  }
  // This machine itself reports no energy: the metrics are absent, never 0.
  auto plain = RunCell(QuickCell(TinySynthetic(), "prefill_throughput_8"));
  ASSERT_TRUE(plain.ok());
  if (ReadEnergy().rapl.empty() && !ReadEnergy().battery_watts) {
    EXPECT_FALSE((*plain)["metrics"].contains("average_power"));
  }
  // select's power budget on the real records: 7.942 W fails 5 W and passes 10 W; a device that
  // reported nothing cannot be checked (never read as 0 W).
  Limits limits;
  limits.max_power_w = 5;
  const auto on_battery = GroupConfigurations({*r});
  EXPECT_EQ(Select(on_battery, limits).candidates.at(0).verdict, Verdict::kFail);
  limits.max_power_w = 10;
  EXPECT_EQ(Select(on_battery, limits).candidates.at(0).verdict, Verdict::kPass);
  if (!(*plain)["metrics"].contains("average_power")) {
    const SelectResult s = Select(GroupConfigurations({*plain}), limits);
    ASSERT_EQ(s.candidates.at(0).checks.size(), 1u);
    EXPECT_FALSE(s.candidates.at(0).checks[0].measured);
    EXPECT_EQ(s.candidates.at(0).verdict, Verdict::kFail);
  }
}

class DeviceOverSsh : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = SshServer::Start(&why);
    if (!server_) GTEST_SKIP() << why;
    setenv("PIPETTE_SSH_CONFIG", server_->ClientConfig().c_str(), 1);
  }
  void TearDown() override { unsetenv("PIPETTE_SSH_CONFIG"); }

  std::shared_ptr<DeviceAccess> Open(const std::string& driver = "") {
    auto address = ParseDeviceAddress(server_->Uri());
    EXPECT_TRUE(address.ok());
    auto d = DeviceAccess::Open(*address, {}, driver);
    EXPECT_TRUE(d.ok()) << d.error().message;
    return d.ok() ? *d : nullptr;
  }

  CellSpec Cell(const std::shared_ptr<DeviceAccess>& device, const std::string& model,
                const std::string& benchmark, int reps = 3) {
    RuntimeChoice choice;
    choice.device = device;
    auto runtime = OpenRuntime(choice);
    EXPECT_TRUE(runtime.ok()) << runtime.error().message;
    CellSpec spec = QuickCell(model, benchmark, reps, reps);
    spec.runtime = *runtime;
    spec.device = device;
    return spec;
  }

  // Every timed benchmark type through `device`: ok records whose device block, memory and
  // thermal series came from the device side.
  void MeasureEveryTimedType(const std::shared_ptr<DeviceAccess>& device, const std::string& model,
                             const std::string& arch) {
    for (const std::string id : {"prefill_throughput_8", "decode_throughput_8_8",
                                 "end_to_end_latency_8_8", "max_memory_usage_8"}) {
      auto r = RunCell(Cell(device, model, id));
      ASSERT_TRUE(r.ok()) << id << ": " << r.error().message;
      const json& rec = *r;
      ASSERT_EQ(rec["status"], "ok") << id << ": " << rec["failure"].dump();
      EXPECT_EQ(rec["device"]["transport"], "ssh") << id;
      EXPECT_EQ(rec["device"]["uri"], server_->Uri()) << id;
      EXPECT_EQ(rec["device"]["os"]["arch"], arch) << id;
      EXPECT_EQ(rec["runtime"]["build"]["device_build"]["static"], true);
      EXPECT_EQ(rec["samples"].size(), 3u) << id;
      if (id == "max_memory_usage_8") {
        EXPECT_GT(rec["metrics"]["max_host_usage"]["median"].get<double>(), 1 << 20) << id;
      } else {
        EXPECT_GT(rec["logs"].value("peak_host_bytes_during_cell", 0.0), 1 << 20) << id;
      }
      EXPECT_EQ(rec["config_id"], ConfigId(rec));
    }
  }

  std::unique_ptr<SshServer> server_;
};

TEST_F(DeviceOverSsh, X86StaticDriverMeasuresEveryTimedType) {
  if (!HostRunsX86V3()) GTEST_SKIP() << "this CPU lacks AVX2/FMA: the x86-64-v3 build cannot run";
  if (access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no x86_64 device build; scripts/build-device.sh --target x86_64-linux "
                    "(scripts/test.sh makes it)";
  }
  auto device = Open();
  ASSERT_TRUE(device);
  EXPECT_FALSE(device->IsHost());
  EXPECT_EQ(device->DriverBuildJson()["target"], "x86_64-linux");
  EXPECT_EQ(device->DriverBuildJson()["cpu_level"], "x86-64-v3");
  MeasureEveryTimedType(device, TinySynthetic(), "x86_64");
  // CPU lists name the device's CPUs, checked against the device's count.
  CellSpec pinned = Cell(device, TinySynthetic(), "prefill_throughput_8");
  pinned.settings["cpus"] = "4095";
  auto refused = RunCell(pinned);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("cpus 4095: CPU 4095 is not on the device (it has CPUs 0-"),
            std::string::npos)
      << refused.error().message;
}

TEST_F(DeviceOverSsh, Aarch64DriverUnderEmulationIsFlaggedEmulated) {
  if (access("/proc/sys/fs/binfmt_misc/qemu-aarch64", R_OK) != 0) {
    GTEST_SKIP() << "this machine runs no aarch64 binaries (binfmt_misc has no qemu-aarch64: "
                    "apt-get install qemu-user-static binfmt-support, then update-binfmts "
                    "--enable qemu-aarch64; scripts/deps.sh --test does this)";
  }
  const std::string driver = Build("aarch64-linux", "armv8-a");
  if (access(driver.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no aarch64 device build; scripts/build-device.sh --target aarch64-linux "
                    "--cpu armv8-a (scripts/test.sh makes it)";
  }
  auto device = Open(driver);
  ASSERT_TRUE(device);
  EXPECT_EQ(device->DriverBuildJson()["target"], "aarch64-linux");
  EXPECT_EQ(device->DriverBuildJson()["cpu_level"], "armv8-a");
  auto block = device->Fingerprint("");
  ASSERT_TRUE(block.ok()) << block.error().message;
  EXPECT_EQ((*block)["os"]["arch"], "aarch64");
  EXPECT_EQ((*block)["emulated"], true);
  EXPECT_EQ((*block)["emulated_on"], "x86_64");
  std::string model = Stories260K("Q8_0");
  if (model.empty()) model = TinySynthetic();
  MeasureEveryTimedType(device, model, "aarch64");
}

TEST_F(DeviceOverSsh, TheCliRunsAndDescribesTheDevice) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  const CliResult d = RunPipette({"device", "--device", server_->Uri(), "--json"});
  ASSERT_EQ(d.exit.code, 0) << d.err;
  const json block = json::parse(d.out);
  EXPECT_EQ(block["transport"], "ssh");
  EXPECT_EQ(block["emulated"], false);
  const std::string store = WorkDir() + "/device-cli-" + std::to_string(server_->port()) + ".db";
  const CliResult r = RunPipette({"--store", store, "run", "--device", server_->Uri(), "-m",
                                  TinySynthetic(), "-b", "decode_throughput_8_8", "--threads", "1",
                                  "--min-reps", "3", "--max-reps", "3", "--no-readiness-load",
                                  "--json", "-q"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json rec = json::parse(r.out);
  EXPECT_EQ(rec["status"], "ok");
  EXPECT_EQ(rec["device"]["transport"], "ssh");
  EXPECT_EQ(rec["device"]["id"], block["id"]);
}

// Without ?dir=, pipette's folder is .cache/pipette-device under the login's home: a relative
// folder, made absolute on connecting, so that the driver is found wherever a command starts
// (found by the new-user trial: every run failed with "exec: .cache/...: not found").
TEST_F(DeviceOverSsh, TheDefaultFolderUnderTheLoginsHomeWorks) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  auto d = DeviceAccess::Open(*ParseDeviceAddress(server_->UriWithDefaultDir()));
  ASSERT_TRUE(d.ok()) << d.error().message;
  const char* home = getenv("HOME");
  ASSERT_NE(home, nullptr);
  EXPECT_EQ((*d)->transport()->DeviceDir(),
            fs::weakly_canonical(std::string(home) + "/.cache/pipette-device").string());
  auto r = RunCell(Cell(*d, TinySynthetic(), "prefill_throughput_8"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "ok") << (*r)["failure"].dump();
}

// `device probe --device`: the bandwidth and the noise floor are measured on the device (its
// driver's probe), cached under the device's id, and then recorded with every result measured
// there.
TEST_F(DeviceOverSsh, BandwidthIsMeasuredOnTheDeviceAndRecordedWithItsResults) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  const std::string cache = WorkDir() + "/bandwidth-cache-" + std::to_string(server_->port());
  setenv("PIPETTE_DEVICE_DRIVERS", DeviceDriverFolder().c_str(), 1);
  setenv("PIPETTE_CACHE", cache.c_str(), 1);
  const CliResult probe =
      RunPipette({"device", "probe", "--device", server_->Uri(), "--runs", "2", "--json"});
  const CliResult refused =
      RunPipette({"device", "probe", "--device", server_->Uri(), "--runs", "2000"});
  const CliResult run = RunPipette(
      {"--store", cache + "/r.db", "run", "--device", server_->Uri(), "-m", TinySynthetic(), "-b",
       "decode_throughput_8_8", "--threads", "1", "--min-reps", "3", "--max-reps", "3",
       "--no-readiness-load", "--json", "-q"});
  unsetenv("PIPETTE_CACHE");
  unsetenv("PIPETTE_DEVICE_DRIVERS");
  ASSERT_EQ(probe.exit.code, 0) << probe.err;
  const json measured = json::parse(probe.out);
  EXPECT_GT(measured["bytes_per_s"].get<double>(), 1e8);  // any memory moves 100 MB/s
  EXPECT_EQ(measured["runs"], 2);
  EXPECT_EQ(measured["method"], "stream-triad/1");
  EXPECT_EQ(measured["cache_path"], cache + "/bandwidth-" + measured["device_id"].get<std::string>() + ".json");
  EXPECT_NE(probe.err.find("measuring memory bandwidth on " + server_->Uri()), std::string::npos);
  EXPECT_EQ(refused.exit.code, 2) << refused.err;
  EXPECT_NE(refused.err.find(server_->Uri() + ": runs must be between 1 and 1000, not 2000"),
            std::string::npos)
      << refused.err;
  ASSERT_EQ(run.exit.code, 0) << run.err;
  const json rec = json::parse(run.out);
  EXPECT_EQ(rec["device"]["id"], measured["device_id"]);
  EXPECT_DOUBLE_EQ(rec["device"]["memory_bandwidth_bytes_per_s"].get<double>(),
                   measured["bytes_per_s"].get<double>());
  // The noise floor too: measured there (60 runs of each of its three modes), cached beside the bandwidth and
  // recorded with the device's results.
  const json& floor = measured["noise_floor"];
  ASSERT_TRUE(floor.is_object()) << probe.out;
  EXPECT_EQ(floor["pinned"]["run_ms"].size(), 60u);
  EXPECT_EQ(floor["unpinned"]["run_ms"].size(), 60u);
  EXPECT_EQ(floor["memory"]["run_ms"].size(), 60u);
  EXPECT_EQ(measured["noise_floor_cache_path"],
            cache + "/noise-floor-" + measured["device_id"].get<std::string>() + ".json");
  EXPECT_DOUBLE_EQ(rec["device"]["noise_floor"]["pinned"].get<double>(),
                   floor["pinned"]["spread"].get<double>());
  EXPECT_DOUBLE_EQ(rec["device"]["noise_floor"]["unpinned"].get<double>(),
                   floor["unpinned"]["spread"].get<double>());
  EXPECT_DOUBLE_EQ(rec["device"]["noise_floor"]["memory"].get<double>(),
                   floor["memory"]["spread"].get<double>());
}

// --model device:/PATH: a file already on the device is measured where it is: hashed there, its
// header read from a copy of its first bytes, never copied; a missing one is one line.
TEST_F(DeviceOverSsh, AModelAlreadyOnTheDeviceIsHashedThereAndNeverCopied) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  auto device = Open();
  ASSERT_TRUE(device);
  // The "device" is this machine through sshd: a file put in a folder of its own stands for one
  // pushed to a phone beforehand.
  const std::string there = WorkDir() + "/on-device-" + std::to_string(server_->port());
  fs::create_directories(there);
  const std::string file = there + "/pushed.gguf";
  fs::copy_file(TinySynthetic(), file, fs::copy_options::overwrite_existing);
  auto r = RunCell(Cell(device, "device:" + file, "decode_throughput_8_8"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json& rec = *r;
  ASSERT_EQ(rec["status"], "ok") << rec["failure"].dump();
  auto sha = Sha256OfFile(TinySynthetic());
  ASSERT_TRUE(sha.ok());
  EXPECT_EQ(rec["model"]["sha256"], *sha);
  EXPECT_EQ(rec["model"]["path"], "device:" + file);
  EXPECT_EQ(rec["model"]["file_name"], "pushed.gguf");
  EXPECT_EQ(rec["model"]["size_bytes"], fs::file_size(file));
  EXPECT_EQ(rec["model"]["quant"], ReadGgufInfo(TinySynthetic())->quant);
  EXPECT_FALSE(fs::exists(device->transport()->DeviceDir() + "/models/" + *sha))
      << "the model was copied to the device";
  // The same configuration as the host's file copied there: one config_id for one file.
  auto copied = RunCell(Cell(device, TinySynthetic(), "decode_throughput_8_8"));
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_EQ((*copied)["config_id"], rec["config_id"]);

  auto missing = RunCell(Cell(device, "device:" + there + "/never-pushed.gguf", "prefill_throughput_8"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(server_->Uri() + ": device:" + there +
                                         "/never-pushed.gguf: no such file on the device"),
            std::string::npos)
      << missing.error().message;
  EXPECT_EQ(missing.error().message.find('\n'), std::string::npos);
  auto folder = RunCell(Cell(device, "device:" + there, "prefill_throughput_8"));
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message.find("is a directory, not a model file"), std::string::npos)
      << folder.error().message;
  auto relative = RunCell(Cell(device, "device:pushed.gguf", "prefill_throughput_8"));
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.error().message.find("is not an absolute path"), std::string::npos);
  // Through the CLI: exit status 2 and one line.
  const CliResult cli = RunPipette({"--store", WorkDir() + "/device-model.db", "run", "--device",
                                    server_->Uri(), "-m", "device:" + there + "/never-pushed.gguf",
                                    "-b", "prefill_throughput_8", "-q"});
  EXPECT_EQ(cli.exit.code, 2) << cli.err;
  EXPECT_NE(cli.err.find("no such file on the device"), std::string::npos) << cli.err;
}

TEST_F(DeviceOverSsh, AnUnknownHostKeyIsNeverAcceptedSilently) {
  setenv("PIPETTE_SSH_CONFIG", server_->ClientConfig(false, true).c_str(), 1);
  auto d = DeviceAccess::Open(*ParseDeviceAddress(server_->Uri()));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("is not known here and pipette never accepts one silently"),
            std::string::npos)
      << d.error().message;
  EXPECT_NE(d.error().message.find("ssh-keyscan -p " + std::to_string(server_->port())),
            std::string::npos);
  EXPECT_EQ(d.error().message.find('\n'), std::string::npos);
}

TEST_F(DeviceOverSsh, ARefusedKeyAndAnUnreachableHostAreOneLineEach) {
  setenv("PIPETTE_SSH_CONFIG", server_->ClientConfig(true, false).c_str(), 1);
  auto refused = DeviceAccess::Open(*ParseDeviceAddress(server_->Uri()));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("authentication refused by 127.0.0.1"), std::string::npos)
      << refused.error().message;
  setenv("PIPETTE_SSH_CONFIG", server_->ClientConfig().c_str(), 1);
  const int port = server_->port();
  server_->Kill();
  auto gone = DeviceAccess::Open(*ParseDeviceAddress("ssh://root@127.0.0.1:" + std::to_string(port)));
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find("cannot reach 127.0.0.1"), std::string::npos)
      << gone.error().message;
  EXPECT_EQ(gone.error().message.find('\n'), std::string::npos);
}

// `pipette decide --device` (issue 26): the funnel screens and measures two configurations on
// the "board" over ssh; every cell it judged was measured there.
TEST_F(DeviceOverSsh, DecideMeasuresEveryCellOnTheDevice) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  if (Stories260K("Q8_0").empty()) GTEST_SKIP() << SharedMissingReason();
  const std::string dir = WorkDir() + "/decide-device-" + std::to_string(server_->port());
  fs::create_directories(dir);
  const std::string file = dir + "/decide.toml";
  std::ofstream(file) << "name = \"on the board\"\n"
                      << "benchmarks = [\"decode_throughput_8_8\"]\n"
                      << "[[models]]\npath = \"" << Stories260K("Q8_0") << "\"\n"
                      << "[[models]]\npath = \"" << Stories260K("Q4_0") << "\"\n"
                      << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                      << "[harness]\nwarmup_runs = 0\nmin_reps = 3\nmax_reps = 5\nspin_up_ms = 0\n"
                      << "[readiness]\nwaive = [\"load\", \"thermal\", \"throttle\"]\n"
                      // Few repetitions: the point is where the cells run, not what is decided.
                      << "[decision]\nobjectives = [\"decode\"]\n"
                      << "[decision.screen]\nrepetitions = 3\n"
                      << "[decision.measure]\nrounds = 0\n"
                      << "[decision.stabilize]\nfinalists = 0\n";
  const std::string store = dir + "/results.db";
  const CliResult r = RunPipette({"--store", store, "decide", file, "--device", server_->Uri(),
                                  "--state", dir + "/state.json"});
  ASSERT_EQ(r.exit.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("chosen: stories260K-"), std::string::npos) << r.out;
  std::ifstream in(dir + "/state.json");
  const json state = json::parse(in, nullptr, false);
  ASSERT_TRUE(state.is_object());
  ASSERT_EQ(state["cells"].size(), 2u) << state.dump(2);  // 2 configurations x 1 screen cell
  for (const json& cell : state["cells"]) {
    ASSERT_EQ(cell["status"], "ok") << cell.dump();
    const CliResult shown = RunPipette({"--store", store, "--json", "results", "show",
                                        cell["result_id"].get<std::string>()});
    ASSERT_EQ(shown.exit.code, 0) << shown.err;
    const json rec = json::parse(shown.out);
    EXPECT_EQ(rec["device"]["transport"], "ssh") << cell.dump();
    EXPECT_EQ(rec["device"]["uri"], server_->Uri()) << cell.dump();
  }
  for (const json& c : state["verdict"]["configurations"]) EXPECT_EQ(c["device"], server_->Uri());
}

// One suite over two devices, this machine and the "board" over ssh, interleaved cell by cell;
// the board reboots between its cells (its sshd killed after its first cell, back after its
// second): the suite goes on (the cell it missed fails with the reason, the next one reconnects),
// and a rerun resumes only what is missing. Then `results list` names both devices and
// `compare --a device=NAME --b device=NAME` pairs their benchmarks.
TEST_F(DeviceOverSsh, ASuiteOnTwoDevicesGoesOnThroughARebootAndResumes) {
  // The board is the aarch64 build under qemu-user: another architecture, so another device id
  // than this machine's (the x86_64 build over ssh would be this very machine, one device).
  const std::string driver = Build("aarch64-linux", "armv8-a");
  if (access("/proc/sys/fs/binfmt_misc/qemu-aarch64", R_OK) != 0 || access(driver.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs the aarch64 device build (scripts/build-device.sh --target aarch64-linux "
                    "--cpu armv8-a) and binfmt support for it (scripts/deps.sh --test)";
  }
  const std::string dir = WorkDir() + "/two-devices-" + std::to_string(server_->port());
  fs::create_directories(dir);
  const std::string store = dir + "/results.db";
  ASSERT_EQ(RunPipette({"device", "--name", "this-host"}).exit.code, 0);
  const CliResult named = RunPipette({"device", "--device", server_->Uri(), "--driver", driver,
                                      "--name", "board-x"});
  ASSERT_EQ(named.exit.code, 0) << named.err;
  const std::string suite = dir + "/two.toml";
  std::ofstream(suite) << "name = \"two devices\"\n"
                       << "benchmarks = [\"prefill_throughput_8\", \"decode_throughput_8_8\", "
                          "\"end_to_end_latency_8_8\"]\n"
                       << "[[models]]\npath = \"" << TinySynthetic() << "\"\n"
                       << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                       << "[harness]\nwarmup_runs = 0\nmin_reps = 3\nmax_reps = 3\nspin_up_ms = 0\n"
                       << "[readiness]\nwaive = [\"load\", \"thermal\", \"throttle\"]\n"
                       << "[[devices]]\nuri = \"local\"\n"
                       << "[[devices]]\nuri = \"" << server_->Uri() << "\"\ndriver = \"" << driver
                       << "\"\n";
  // Results stored so far (ok and failed), read while the suite writes them.
  const auto stored = [&]() -> size_t {
    auto st = ResultStore::Open(store, StoreOptions{.create_if_missing = false});
    if (!st.ok()) return 0;
    auto rows = (*st)->List(ResultFilter{});
    return rows.ok() ? rows->size() : 0;
  };
  std::atomic<bool> rebooted{false}, finished{false};
  // The thread that restarts sshd lives to the end of the test: sshd is its child, and a child
  // started with a parent-death signal dies with the thread that started it.
  std::thread reboot([&] {
    const auto wait_for = [&](size_t n) {
      for (int i = 0; i < 2400 && stored() < n; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    };
    wait_for(2);  // the board's first cell is stored: it goes down
    server_->Kill();
    wait_for(4);  // its second cell found it down: it is back
    std::string why;
    rebooted = server_->Restart(&why);
    while (!finished) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  struct Join {  // however the test ends
    std::atomic<bool>& finished;
    std::thread& thread;
    ~Join() {
      finished = true;
      thread.join();
    }
  } join{finished, reboot};
  const CliResult first = RunPipette({"--store", store, "suite", "run", suite, "--logs", dir + "/logs"});
  for (int i = 0; i < 100 && !rebooted; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(rebooted);
  EXPECT_NE(first.exit.code, 0) << "one cell failed: the suite says so";
  auto st = ResultStore::Open(store);
  ASSERT_TRUE(st.ok());
  auto rows = (*st)->List(ResultFilter{});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 6u) << first.out << first.err;
  int failed = 0;
  for (const ResultRow& r : *rows) {
    if (r.status == "failed") {
      ++failed;
      auto rec = (*st)->Get(r.result_id);
      ASSERT_TRUE(rec.ok() && rec->has_value());
      EXPECT_EQ((**rec)["device"]["name"], "board-x");
      EXPECT_NE((**rec)["failure"]["message"].get<std::string>().find("127.0.0.1"), std::string::npos)
          << (**rec)["failure"].dump();
    }
  }
  EXPECT_EQ(failed, 1) << "the cell after the reboot reconnects";
  const CliResult rerun = RunPipette({"--store", store, "suite", "run", suite, "--logs", dir + "/logs"});
  EXPECT_EQ(rerun.exit.code, 0) << rerun.out << rerun.err;
  EXPECT_NE(rerun.out.find("6 ok (1 measured now, 5 stored before)"), std::string::npos) << rerun.out;
  const CliResult list = RunPipette({"--store", store, "results", "list", "--status", "ok"});
  ASSERT_EQ(list.exit.code, 0) << list.err;
  EXPECT_NE(list.out.find("DEVICE"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("this-host"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("board-x"), std::string::npos) << list.out;
  std::cout << list.out;
  const CliResult compare = RunPipette({"--store", store, "compare", "--a", "device=this-host",
                                        "--b", "device=board-x"});
  ASSERT_EQ(compare.exit.code, 0) << compare.err;
  for (const char* b : {"prefill_throughput_8", "decode_throughput_8_8", "end_to_end_latency_8_8"}) {
    EXPECT_NE(compare.out.find(b), std::string::npos) << compare.out;
  }
  std::cout << compare.out;
}

// The link drops in the middle of a cell: the cell fails with its stage, and no driver is left
// running on the device (nobody could stop it there any more: the driver ends itself when its
// input and output are gone).
TEST_F(DeviceOverSsh, ADroppedLinkFailsTheCellAndLeavesNoDriverRunning) {
  if (!HostRunsX86V3() || access(Build("x86_64-linux", "x86-64-v3").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no runnable x86_64 device build (scripts/build-device.sh --target x86_64-linux)";
  }
  auto device = Open();
  ASSERT_TRUE(device);
  CellSpec spec = Cell(device, TinySynthetic(), "decode_throughput_8_8", 100000);
  const std::string needle = server_->dir() + "/device/bin";
  std::atomic<bool> dropped{false};
  std::atomic<int> measured{0};
  CellHooks hooks;
  // A measured repetition's progress line ("rep 1: ..."): the drop comes after one, however long
  // a loaded machine takes to get there (a fixed wait failed under a full parallel test run).
  hooks.progress = [&measured](const std::string& line) {
    if (line.rfind("rep ", 0) == 0) ++measured;
  };
  std::thread dropper([&] {
    for (int i = 0; i < 600 && ProcessesNaming(needle).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int i = 0; i < 1200 && measured < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    server_->Kill();
    dropped = true;
  });
  auto r = RunCell(spec, hooks);
  dropper.join();
  ASSERT_TRUE(dropped);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["status"], "failed");
  const std::string message = (*r)["failure"]["message"];
  EXPECT_NE(message.find("lost the link to the device during"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot reach 127.0.0.1"), std::string::npos) << message;
  EXPECT_GT((*r)["samples"].size(), 0u) << "the repetitions before the drop are kept: " << (*r)["failure"].dump();
  std::vector<int> left;
  for (int i = 0; i < 100; ++i) {
    left = ProcessesNaming(needle);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(left.empty()) << left.size() << " driver process(es) still running on the device";
}

}  // namespace
}  // namespace pipette
