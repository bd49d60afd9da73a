// Throughput of the PostgreSQL fleet store on a server this program starts (the test fixture:
// fsync off), for the closing notes; run by hand, not a test:
//   pg_fleet_store_bench [rows for the listing, default 1000000]
// Prints claims/s with 4 concurrent claimers, PutResult inserts/s (1 and 4 writers) and the time
// of a first page (100 rows, total) with and without a filter at the given number of rows.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "pipette/fleet_store.h"
#include "tests/support/postgres_server.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

json Record(int i) {
  return {{"schema", "pipette.result/1"},
          {"result_id", pipette::NewUuidV7()},
          {"config_id", "cfg" + std::to_string(i % 50)},
          {"status", "ok"},
          {"started_at", "2026-11-29T10:00:00.000Z"},
          {"benchmark", {{"id", "prefill_throughput_8"}, {"type", "prefill"}}},
          {"model", {{"sha256", std::string(64, 'b')}, {"file_name", "m.gguf"}, {"quant", "Q8_0"}}},
          {"runtime", {{"name", "llamacpp"}, {"settings", {{"threads", 1 + i % 4}}}}},
          {"device", {{"id", "dev" + std::to_string(i % 3)}, {"label", "ci"}}},
          {"samples", json::array({{{"rep", 0}, {"tokens_per_s", 100.0}},
                                   {{"rep", 1}, {"tokens_per_s", 101.0}}})},
          {"metrics",
           {{"prefill_throughput",
             {{"median", 100.0 + i},
              {"unit", "tokens/s"},
              {"ci95_low", 99.0},
              {"ci95_high", 101.5},
              {"n", 5}}}}}};
}

std::unique_ptr<pipette::FleetStore> Open(const std::string& url) {
  auto store = pipette::OpenFleetStore(url);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    std::exit(1);
  }
  return std::move(*store);
}

void Claims(const std::string& url) {
  const int kJobs = 2000, kWorkers = 4;
  const json caps = {{"runtimes", {"llamacpp"}}, {"arch", "x86_64"}, {"memory_bytes", 1 << 30}};
  std::vector<json> specs(kJobs,
                          json{{"benchmark", "b"}, {"requires", {{"runtimes", {"llamacpp"}}}}});
  Open(url)->CreatePlan("bench", specs, 0, 1000);
  std::atomic<int> claimed{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      auto store = Open(url);
      for (;;) {
        auto job = store->Claim("pc_w" + std::to_string(w), caps, 1000, 60);
        if (!job.ok() || !job->has_value()) return;
        ++claimed;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf("claims: %d jobs by %d concurrent claimers in %.2f s: %.0f claims/s\n",
              claimed.load(), kWorkers, Seconds(start), claimed / Seconds(start));
}

void Inserts(const std::string& url, int writers, int per_writer) {
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto store = Open(url);
      for (int i = 0; i < per_writer; ++i) {
        auto put = store->PutResult(Record(w * per_writer + i), "pc_x", 1000);
        if (!put.ok()) {
          std::fprintf(stderr, "%s\n", put.error().message.c_str());
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const int n = writers * per_writer;
  std::printf("PutResult: %d records by %d writer(s) in %.2f s: %.0f inserts/s\n", n, writers,
              Seconds(start), n / Seconds(start));
}

// Copies the stored rows with new ids and times until there are `rows` (SQL, not PutResult: a
// million PutResult calls would take minutes), then times first pages.
void Listing(const std::string& url, int64_t rows) {
  auto store = Open(url);
  const auto fill = Clock::now();
  {
    pqxx::connection c(url);
    pqxx::work tx(c);
    const int64_t have = tx.exec("SELECT count(*) FROM results")[0][0].as<int64_t>();
    tx.exec(
        "INSERT INTO results SELECT "
        "lower(regexp_replace(md5(g::text) || md5((g+1)::text), "
        "'^(.{8})(.{4}).(.{3}).(.{3})(.{12}).*$', '\\1-\\2-7\\3-8\\4-\\5')), "
        "r.client_id, r.received_at, 'cfg' || (g % 5000), r.status, "
        "CASE WHEN g % 10 = 0 THEN 'decode_throughput_8' ELSE r.benchmark_id END, "
        "r.benchmark_type, r.model_file, r.model_sha256, r.quant, r.quant_label, r.runtime, "
        "'dev' || (g % 300), r.label, "
        "to_char(timestamp '2026-01-01' + g * interval '1 second', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.000\"Z\"'), r.threads, r.headline_metric, r.headline_unit, "
        "r.headline, r.ci_low, r.ci_high, r.headline_n, r.ci_reached, r.profile_mismatch, "
        "r.settings, r.record, r.metrics FROM generate_series(1, " +
        std::to_string(rows - have) + ") g, (SELECT * FROM results LIMIT 1) r");
    tx.exec(
        "UPDATE result_counts SET n = CASE WHEN shard = 0 THEN (SELECT count(*) FROM results) "
        "ELSE 0 END");
    tx.commit();
    pqxx::nontransaction(c).exec("VACUUM ANALYZE results");
  }
  std::printf("filled to %lld rows in %.1f s\n", static_cast<long long>(rows), Seconds(fill));
  auto time_page = [&](const char* what, const pipette::ResultFilter& f) {
    for (int round = 0; round < 3; ++round) {
      const auto start = Clock::now();
      auto page = store->ListResults(f, 100, "");
      const double ms = Seconds(start) * 1000;
      if (!page.ok()) {
        std::fprintf(stderr, "%s\n", page.error().message.c_str());
        return;
      }
      auto second = store->ListResults(f, 100, page->next);
      std::printf("first page, %s: %zu rows of %lld in %.1f ms (round %d)%s\n", what,
                  page->rows.size(), static_cast<long long>(page->total), ms, round + 1,
                  second.ok() ? "" : " (second page failed)");
    }
  };
  time_page("no filter", {});
  pipette::ResultFilter by_benchmark;
  by_benchmark.benchmarks = {"decode_throughput_8"};
  time_page("benchmark=decode_throughput_8", by_benchmark);
  pipette::ResultFilter by_device;
  by_device.devices = {"dev12"};
  time_page("device=dev12 (prefix)", by_device);
  pipette::ResultFilter by_setting;
  by_setting.settings = {"threads=2"};
  time_page("setting threads=2", by_setting);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  auto url = pipette::testing::FreshPostgresDatabase();
  if (!url.ok()) {
    std::fprintf(stderr, "%s\n", url.error().message.c_str());
    return 1;
  }
  Claims(*url);
  Inserts(*url, 1, 2000);
  Inserts(*url, 4, 1000);
  if (rows > 0) Listing(*url, rows);
  return 0;
}
