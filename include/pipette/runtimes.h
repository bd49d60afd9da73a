// The runtimes of this build, by name (DESIGN.md 2): what the CLI and suites use to turn a user's
// choice into a pipette::Runtime. The harness never includes this header: it knows runtimes only
// through pipette/runtime.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

class DeviceAccess;  // platform/device_access.h: where a runtime runs

// A user's choice of runtime and where it lives. Only the fields of the named runtime may be set.
struct RuntimeChoice {
  std::string name = "llamacpp";  // one of RuntimeNames()
  // llamacpp: the driver binary; empty = pipette-llamacpp-driver beside pipette ($PIPETTE_DRIVER).
  std::string driver_path;
  // llamacpp-stock: the bin folder of a llama.cpp build holding llama-bench and llama-server.
  std::string dir;
  // openai: the server's base URL ("http://127.0.0.1:8080"), or a command line that starts the
  // server (pipette starts it, knows its pid, and stops it after the cell; the URL is then where
  // it will listen). `api_model` is the model name sent in requests (empty: the server's first).
  std::string url;
  std::vector<std::string> server_command;
  std::string api_model;
  // The device the runtime runs on (null: this machine). Only llamacpp runs elsewhere: its
  // driver is built for devices (scripts/build-device.sh).
  std::shared_ptr<DeviceAccess> device;
};

// "llamacpp", "llamacpp-stock", "openai".
const std::vector<std::string>& RuntimeNames();

// Checks a choice without touching anything: a known name, only that runtime's fields, the
// fields it needs (a directory for llamacpp-stock; a URL or a server command for openai).
Status CheckRuntimeChoice(const RuntimeChoice& choice);

// The settings runtime `name` takes (as Runtime::Settings() of it), without opening it.
// Errors: an unknown name.
Result<std::vector<SettingDef>> RuntimeSettingDefs(const std::string& name);

// Makes the runtime: reads its identity (the stock binaries' version, the server's /v1/models).
// Errors (one line): an unknown name (lists the names), a field the runtime does not take, a
// missing directory or binaries, a URL nothing listens on or that is not OpenAI-compatible.
Result<std::shared_ptr<Runtime>> OpenRuntime(const RuntimeChoice& choice);

}  // namespace pipette
