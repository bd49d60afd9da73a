// The resident set's split at the peak on a real model whose weights are large beside the
// program (a stories15M-shaped synthetic model, 47 MiB in F16): with mmap on, the weights are
// file-backed pages of the mapped file; with mmap off, they are read into anonymous memory. The
// peak alone cannot tell the two apart (both about 63 MiB here); the split does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_fixtures.h"
#include "pipette/cell.h"
#include "pipette/synth.h"
#include "resident_checks.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

const std::string& Stories15mShape() {
  static const std::string path = [] {
    SynthOptions o;
    o.preset = "stories15m";
    o.n_ctx = 512;
    o.type = "F16";  // no CPU repacking of F16: mmapped weights stay in the mapping
    o.out_path = WorkDir() + "/stories15m-F16.gguf";
    const Status s = WriteSyntheticModel(o);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return o.out_path;
  }();
  return path;
}

json RunCellOfIt(const std::string& benchmark, bool mmap) {
  CellSpec spec = QuickCell(Stories15mShape(), benchmark);
  spec.settings["mmap"] = mmap;
  auto r = RunCell(spec);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return json::object();
  EXPECT_EQ((*r)["status"], "ok") << (*r)["failure"].dump();
  EXPECT_EQ((*r)["runtime"]["settings"]["mmap"], mmap);
  return *r;
}

double Median(const json& rec, const char* metric) {
  return rec["metrics"][metric]["median"].get<double>();
}

TEST(ResidentSplitE2e, MmappedWeightsAreFileBackedAndReadWeightsAnonymous) {
  const json mapped = RunCellOfIt("max_memory_usage_8", true);
  const json read = RunCellOfIt("max_memory_usage_8", false);
  ASSERT_TRUE(mapped.contains("metrics") && read.contains("metrics"));
  ExpectResidentSplitWithinPeak(mapped, "mmap on");
  ExpectResidentSplitWithinPeak(read, "mmap off");
  const double file_size = mapped["model"]["size_bytes"].get<double>();
  const double weights = mapped["model"]["tensor_bytes"].get<double>();
  ASSERT_GT(weights, 0.9 * file_size);  // the file is almost all weights
  // mmap on: the whole mapped file is resident and file-backed (llama.cpp populates the mapping
  // as it loads), beyond the program's and libraries' own file-backed pages that both runs have.
  EXPECT_GT(Median(mapped, "rss_file_at_peak"), file_size);
  EXPECT_GT(Median(mapped, "rss_file_at_peak") - Median(read, "rss_file_at_peak"), 0.9 * file_size);
  // mmap off: the weights are a copy in anonymous memory instead.
  EXPECT_GT(Median(read, "rss_anon_at_peak"), weights);
  EXPECT_GT(Median(read, "rss_anon_at_peak") - Median(mapped, "rss_anon_at_peak"), 0.9 * weights);
  std::printf("[ measured ] peak / anonymous / file-backed, MiB: mmap on %.2f / %.2f / %.2f, "
              "mmap off %.2f / %.2f / %.2f (file %.2f)\n",
              Median(mapped, "max_host_usage") / 1048576, Median(mapped, "rss_anon_at_peak") / 1048576,
              Median(mapped, "rss_file_at_peak") / 1048576, Median(read, "max_host_usage") / 1048576,
              Median(read, "rss_anon_at_peak") / 1048576, Median(read, "rss_file_at_peak") / 1048576,
              file_size / 1048576);
}

// A cell of one session (no sampling) keeps the split of its reading as the cell ends beside
// logs.peak_host_bytes_during_cell: after a decode with mmap on, the mapped weights are there.
TEST(ResidentSplitE2e, DecodeCellLogsTheSplitBesideItsPeak) {
  const json rec = RunCellOfIt("decode_throughput_8_8", true);
  const json& logs = rec["logs"];
  ASSERT_TRUE(logs.contains("rss_file_bytes_at_peak_during_cell")) << logs.dump();
  const double anon = logs["rss_anon_bytes_at_peak_during_cell"].get<double>();
  const double file = logs["rss_file_bytes_at_peak_during_cell"].get<double>();
  const double shmem = logs["rss_shmem_bytes_at_peak_during_cell"].get<double>();
  EXPECT_GT(anon, 0);
  EXPECT_LE(anon + file + shmem, logs["peak_host_bytes_during_cell"].get<double>());
  EXPECT_GT(file, rec["model"]["size_bytes"].get<double>());
  EXPECT_FALSE(rec["metrics"].contains("rss_file_at_peak"));  // a memory benchmark's metric only
}

}  // namespace
}  // namespace pipette
