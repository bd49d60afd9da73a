// Headless Chromium for the tests that render pipette's HTML (the report, the dashboard): finding
// it, running it on one page, and reading what a probe page measured.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette::testing_browser {

// The first of the usual Chromium binary names on $PATH, or "" (tests then skip).
std::string FindChromium();

struct BrowserRun {
  bool finished = false;  // exited 0 within the time allowed
  std::string out, err;   // stdout (the DOM of --dump-dom), and chromium's log
};

// Runs `chromium` headless on `url` with `action` ("--screenshot=FILE" or "--dump-dom") in a
// window of `window` ("WIDTH,HEIGHT") pixels, with `extra` flags, its profile and log under
// `work_dir`, for at most 90 seconds (then killed).
BrowserRun Browse(const std::string& chromium, const std::string& action, const std::string& url,
                  const std::string& work_dir, const std::string& window = "1280,4000",
                  const std::vector<std::string>& extra = {});

// The JSON a probe page wrote into its <pre id="probe">, from Chromium's dump of its DOM; a
// discarded value when there is none or it does not parse.
nlohmann::json ProbeFacts(const std::string& dom);

// How many times `needle` occurs in `s`, without overlaps.
size_t Count(const std::string& s, const std::string& needle);

}  // namespace pipette::testing_browser
