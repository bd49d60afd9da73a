// The runtimes of this build by name (pipette/runtimes.h).
#include <algorithm>

#include <fmt/format.h>

#include "pipette/runtimes.h"
#include "platform/device_access.h"
#include "runtimes/llamacpp/llamacpp_runtime.h"
#include "runtimes/llamacpp_stock/stock_runtime.h"
#include "runtimes/openai/openai_client.h"
#include "runtimes/openai/openai_runtime.h"

namespace pipette {
namespace {

// A field set for a runtime that does not take it.
Status OnlyFields(const RuntimeChoice& c) {
  const std::pair<const char*, bool> fields[] = {
      {"driver", !c.driver_path.empty() && c.name != "llamacpp"},
      {"runtime directory", !c.dir.empty() && c.name != "llamacpp-stock"},
      {"URL", !c.url.empty() && c.name != "openai"},
      {"server command", !c.server_command.empty() && c.name != "openai"},
      {"API model name", !c.api_model.empty() && c.name != "openai"}};
  for (const auto& [what, wrong] : fields) {
    if (wrong) return MakeError(fmt::format("runtime {} takes no {}", c.name, what));
  }
  return Status::Ok();
}

Error UnknownName(const std::string& name) {
  return MakeError(fmt::format("unknown runtime '{}'; the runtimes are: {}", name,
                               fmt::join(RuntimeNames(), ", ")));
}

}  // namespace

const std::vector<std::string>& RuntimeNames() {
  static const std::vector<std::string> names = {"llamacpp", "llamacpp-stock", "openai"};
  return names;
}

Status CheckRuntimeChoice(const RuntimeChoice& c) {
  if (std::find(RuntimeNames().begin(), RuntimeNames().end(), c.name) == RuntimeNames().end()) {
    return UnknownName(c.name);
  }
  if (auto s = OnlyFields(c); !s) return s;
  if (c.name == "llamacpp-stock" && c.dir.empty()) {
    return MakeError("runtime llamacpp-stock needs the runtime directory: the bin folder of a "
                     "llama.cpp build with llama-bench and llama-server");
  }
  if (c.name == "openai" && c.url.empty() && c.server_command.empty()) {
    return MakeError("runtime openai needs the server's URL, or a command that starts it");
  }
  if (c.name == "openai" && !c.url.empty()) {
    if (auto url = NormalizeBaseUrl(c.url); !url) return url.error();
  }
  if (c.name == "openai" && !c.server_command.empty() && c.url.empty()) {
    const bool port = std::any_of(c.server_command.begin(), c.server_command.end(),
                                  [](const std::string& a) { return a.find("{port}") != std::string::npos; });
    if (!port) {
      return MakeError("the server command has no {port} and no URL was given: say where the "
                       "server listens");
    }
  }
  return Status::Ok();
}

Result<std::vector<SettingDef>> RuntimeSettingDefs(const std::string& name) {
  if (name == "llamacpp") return LlamaCppSettingDefs();
  if (name == "openai") return OpenAiSettingDefs();
  if (name == "llamacpp-stock") return StockSettingDefs();
  return UnknownName(name);
}

Result<std::shared_ptr<Runtime>> OpenRuntime(const RuntimeChoice& choice) {
  if (auto s = CheckRuntimeChoice(choice); !s) return s.error();
  if (choice.device && !choice.device->IsHost() && choice.name != "llamacpp") {
    return MakeError("runtime " + choice.name + " runs on this machine only; measure " +
                     choice.device->Uri() + " with the llamacpp runtime (its driver is built "
                     "for devices by scripts/build-device.sh)");
  }
  if (choice.name == "llamacpp") return MakeLlamaCppRuntime(choice.driver_path, choice.device);
  if (choice.name == "llamacpp-stock") return MakeStockRuntime(choice.dir);
  if (choice.name == "openai") {
    return MakeOpenAiRuntime(choice.url, choice.server_command, choice.api_model);
  }
  return UnknownName(choice.name);
}

}  // namespace pipette
