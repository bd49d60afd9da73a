// `pipette run`'s runtime options: which runtime (--runtime, --runtime-dir, --url, --server,
// --api-model) and its settings as flags (--threads, --ctx-size, ...). Each flag stands for one
// setting of pipette/runtime.h; the runtime's own definition checks the value, so the CLI, suite
// files and the record share one definition. Only flags given on the command line are passed on:
// the others take the runtime's defaults.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "pipette/runtime.h"
#include "pipette/runtimes.h"
#include "pipette/status.h"

namespace pipette::cli {

struct RuntimeArgs {
  std::string device = "local";  // --device: where the runtime runs (platform/transport.h)
  std::string driver;            // --driver: the driver binary (a device build for --device)
  std::string name = "llamacpp";
  std::string dir, url, server, api_model;
  std::map<std::string, std::string> values;  // setting -> the flag's text, flags given only
  bool mmap = false;
};

void AddRuntimeOptions(CLI::App* app, RuntimeArgs& args);

struct ChosenRuntime {
  std::shared_ptr<Runtime> runtime;
  std::shared_ptr<DeviceAccess> device;  // null: this machine
  nlohmann::json settings = nlohmann::json::object();  // the settings given, typed
};

// Opens the device (--device: connects, installs the driver build there) and the runtime on it,
// and types the given settings by its definitions. Errors: the device's (unreachable, no driver
// for its architecture, ...), as OpenRuntime; a
// flag for a setting the runtime does not take ("runtime openai does not take --cache-type-k");
// a value that is not of the setting's type.
Result<ChosenRuntime> ChooseRuntime(const RuntimeArgs& args);

}  // namespace pipette::cli
