// The frame every page shares: the HTML document, the navigation bar and the stylesheet (served
// at /static/dashboard.css from this string; no fonts, scripts or images from anywhere).
#pragma once

#include <string>
#include <string_view>

namespace pipette::dashboard {

// The stylesheet. Narrow screens (390 px): tables scroll sideways inside .scroll, charts scale
// with their viewBox to the page's width (legend and points with them), the filter form wraps.
// At 1366 px every table fits the page.
std::string_view Css();

// A whole HTML page: <title> `title` (escaped here), the nav with `active` ("leaderboard",
// "scaling", "quality", "devices", "fleet" or "") marked, an <h1> with the title, then `body`
// (already HTML).
std::string Layout(const std::string& title, const std::string& active, const std::string& body);

// `svg` (a chart) in its box; the chart scales to the box's width, so the box never scrolls
// (a chart scrolled sideways hid its legend and its right-hand points on a phone).
std::string ScrollChart(const std::string& svg);

// <div class="scroll"><table>...</table></div> around `table_inner` (thead/tbody rows).
std::string ScrollTable(const std::string& table_inner, const std::string& css_class = "");

}  // namespace pipette::dashboard
