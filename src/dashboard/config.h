// What the dashboard calls a configuration: model (SHA-256), quantization, runtime, threads and
// device, the columns of a leaderboard row. Read from a ResultRow (cheap: no record JSON) or
// from a full record, so that rows and records of one configuration meet.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dashboard/device_names.h"
#include "pipette/store.h"

namespace pipette::dashboard {

struct Config {
  std::string model_file, model_sha256, quant, runtime, device_id;
  std::string device_name;  // DeviceNames::Of(device_id)
  int threads = 0;

  // Identity (model sha256, quant, runtime, threads, device id) as one string.
  std::string Key() const;
  // For people: "stories260K-Q8_0.gguf Q8_0 llamacpp t=2 @pixel-8".
  std::string Name() const;
  // Name's parts: the model (with its quantization where the file name does not say it), the
  // runtime, "t=2" and "@pixel-8"; a part it lacks is "".
  std::vector<std::string> Parts() const;
};

Config ConfigOf(const ResultRow& row, const DeviceNames& names);
Config ConfigOf(const nlohmann::json& record, const DeviceNames& names);

// "prefill_throughput_512" -> 512, "decode_throughput_256_100" -> 256 (P) and 100 (D); 0 when the
// id is not of that family.
struct Shape {
  int prefill = 0;
  int decode = 0;
};
Shape PrefillShape(const std::string& benchmark_id);  // prefill_throughput_<P>
Shape DecodeShape(const std::string& benchmark_id);   // decode_throughput_<P>_<D>

}  // namespace pipette::dashboard
