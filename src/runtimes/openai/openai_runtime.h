// The `openai` runtime: any OpenAI-compatible HTTP server (llama-server, vLLM, Ollama, LM Studio,
// MLX-LM), at a URL or started by pipette from a command line for each session (so that its pid,
// and with it its memory, is known). Everything is timed on pipette's clock from the stream's
// chunk arrivals (DESIGN.md 4.2 step 3, 4.4): prefill is derived from the time to first token
// and recorded as derived; decode times the D steps after the first token.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipette/runtime.h"
#include "pipette/status.h"

namespace pipette {

// api_model and server: recorded in runtime.settings (part of config_id) when used; given
// through RuntimeChoice, not as settings.
std::vector<SettingDef> OpenAiSettingDefs();

// `url`: where the server answers (for a command with "{port}", may be empty: a free local port
// per session). `server_command`: empty, or the command that starts the server, where "{model}",
// "{port}" and "{ctx}" stand for the cell's model file, the port and its context need in tokens
// plus one.
// A server at a URL is asked who it is now; a command's `--version` is run. Errors: nothing
// listens, not OpenAI-compatible, a command that is not a program, no "{port}" and no URL.
Result<std::shared_ptr<Runtime>> MakeOpenAiRuntime(const std::string& url,
                                                   const std::vector<std::string>& server_command,
                                                   const std::string& api_model);

}  // namespace pipette
