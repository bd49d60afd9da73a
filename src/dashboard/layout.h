// The frame every page shares: the HTML document, the navigation bar and the stylesheet (served
// at /static/dashboard.css from this string; no fonts, scripts or images from anywhere).
#pragma once

#include <string>
#include <string_view>

namespace pipette::dashboard {

// The stylesheet. Narrow screens (375 px): tables scroll sideways inside .scroll, charts scale
// with their viewBox, the filter form wraps.
std::string_view Css();

// A whole HTML page: <title> `title` (escaped here), the nav with `active` ("leaderboard",
// "scaling", "quality", "devices", "fleet" or "") marked, an <h1> with the title, then `body`
// (already HTML).
std::string Layout(const std::string& title, const std::string& active, const std::string& body);

// `svg` (a chart) in a horizontally scrolling box: on a phone the chart keeps a readable width
// (600 px, see the stylesheet) instead of shrinking its text to a few pixels.
std::string ScrollChart(const std::string& svg);

// <div class="scroll"><table>...</table></div> around `table_inner` (thead/tbody rows).
std::string ScrollTable(const std::string& table_inner, const std::string& css_class = "");

}  // namespace pipette::dashboard
