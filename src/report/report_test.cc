// Charts (chart.h): scales, ticks, labels, escaping and the markup of known data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "pipette/report.h"
#include "report/chart.h"

namespace pipette::report {
namespace {

// Attribute `name` of every element matching `element_regex` (its opening tag), in order.
std::vector<double> Attr(const std::string& svg, const std::string& element_regex,
                         const std::string& name) {
  std::vector<double> out;
  const std::regex tag("<" + element_regex + "[^>]*>");
  const std::regex attr(" " + name + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string t = it->str();
    std::smatch m;
    if (std::regex_search(t, m, attr)) out.push_back(std::stod(m[1].str()));
  }
  return out;
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

std::vector<std::string> Labels(const Scale& s, int target = 6) {
  std::vector<std::string> out;
  for (double t : s.Ticks(target)) out.push_back(s.Label(t, target));
  return out;
}

TEST(NiceStep, OneTwoFiveSteps) {
  EXPECT_DOUBLE_EQ(NiceStep(1234, 6), 200);   // 205.7 per interval -> 200
  EXPECT_DOUBLE_EQ(NiceStep(1, 5), 0.2);
  EXPECT_DOUBLE_EQ(NiceStep(100, 10), 10);
  EXPECT_DOUBLE_EQ(NiceStep(94, 5), 20);      // 18.8 -> 20
  EXPECT_DOUBLE_EQ(NiceStep(35, 5), 5);       // 7 -> 5 (7 < sqrt(50))
  EXPECT_DOUBLE_EQ(NiceStep(36, 5), 10);      // 7.2 -> 10 (7.2 >= sqrt(50))
  EXPECT_DOUBLE_EQ(NiceStep(40, 5), 10);      // 8 -> 10
  EXPECT_DOUBLE_EQ(NiceStep(0.07, 5), 0.01);  // 0.014 -> 0.01
  EXPECT_DOUBLE_EQ(NiceStep(0, 5), 1);
  EXPECT_DOUBLE_EQ(NiceStep(std::nan(""), 5), 1);
  EXPECT_DOUBLE_EQ(NiceStep(-3, 5), 1);
}

TEST(LinearScale, MapsDomainToRange) {
  const Scale s = Scale::Linear({0, 100}, 50, 450);
  EXPECT_DOUBLE_EQ(s.Map(0), 50);
  EXPECT_DOUBLE_EQ(s.Map(25), 150);
  EXPECT_DOUBLE_EQ(s.Map(100), 450);
  EXPECT_DOUBLE_EQ(s.Map(150), 650);  // outside the domain: outside the range
  const Scale y = Scale::Linear({0, 10}, 300, 100);  // a y axis: up is smaller
  EXPECT_DOUBLE_EQ(y.Map(5), 200);
  EXPECT_DOUBLE_EQ(y.Map(10), 100);
}

TEST(LinearScale, TicksOfKnownDomains) {
  const Scale s = Scale::Linear({0, 1234}, 0, 600, Units::kSi);
  EXPECT_EQ(s.Ticks(6), (std::vector<double>{0, 200, 400, 600, 800, 1000, 1200}));
  EXPECT_EQ(Labels(s), (std::vector<std::string>{"0", "200", "400", "600", "800", "1k", "1.2k"}));

  const Scale unit = Scale::Linear({0, 1}, 0, 100);
  EXPECT_EQ(unit.Ticks(5), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
  EXPECT_EQ(Labels(unit, 5), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));

  const Scale neg = Scale::Linear({-7, 12}, 0, 100);
  EXPECT_EQ(neg.Ticks(5), (std::vector<double>{-5, 0, 5, 10}));

  const Scale big = Scale::Linear({0, 3.6e6}, 0, 100, Units::kSi);
  EXPECT_EQ(Labels(big, 4), (std::vector<std::string>{"0", "1M", "2M", "3M"}));
  const Scale mid = Scale::Linear({1000, 1500}, 0, 100, Units::kSi);
  EXPECT_EQ(Labels(mid, 5), (std::vector<std::string>{"1k", "1.1k", "1.2k", "1.3k", "1.4k", "1.5k"}));
}

TEST(LinearScale, NiceExtendsToTicks) {
  const Scale s = Scale::Linear({3, 97}, 0, 100).Nice(5);
  EXPECT_DOUBLE_EQ(s.domain().lo, 0);
  EXPECT_DOUBLE_EQ(s.domain().hi, 100);
  EXPECT_EQ(s.Ticks(5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  const Scale t = Scale::Linear({0.13, 0.87}, 0, 100).Nice(5);
  EXPECT_DOUBLE_EQ(t.domain().lo, 0.0);
  EXPECT_DOUBLE_EQ(t.domain().hi, 1.0);
}

TEST(LinearScale, BinaryUnitTicks) {
  constexpr double MiB = 1024.0 * 1024.0;
  const Scale s = Scale::Linear({0, 50 * MiB}, 0, 100, Units::kBytes);
  EXPECT_EQ(s.Ticks(5), (std::vector<double>{0, 10 * MiB, 20 * MiB, 30 * MiB, 40 * MiB, 50 * MiB}));
  EXPECT_EQ(Labels(s, 5), (std::vector<std::string>{"0 MiB", "10 MiB", "20 MiB", "30 MiB", "40 MiB",
                                                    "50 MiB"}));
  const Scale small = Scale::Linear({0, 1.2 * MiB}, 0, 100, Units::kBytes);
  const std::vector<double> ticks = small.Ticks(6);
  ASSERT_EQ(ticks.size(), 7u);
  EXPECT_DOUBLE_EQ(ticks[1], 0.2 * MiB);
  EXPECT_EQ(small.Label(ticks[1], 6), "0.2 MiB");
  EXPECT_EQ(small.Label(ticks[6], 6), "1.2 MiB");
  const Scale bytes = Scale::Linear({0, 600}, 0, 100, Units::kBytes);
  EXPECT_EQ(Labels(bytes, 3), (std::vector<std::string>{"0 B", "200 B", "400 B", "600 B"}));
}

TEST(Formatting, SiAndBytes) {
  EXPECT_EQ(FormatSi(0, 2), "0");
  EXPECT_EQ(FormatSi(950, 0), "950");
  EXPECT_EQ(FormatSi(1234, 1), "1.2k");
  EXPECT_EQ(FormatSi(3456789, 2), "3.46M");
  EXPECT_EQ(FormatSi(2e9, 1), "2G");
  EXPECT_EQ(FormatSi(-1500, 1), "-1.5k");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(20.0 * 1024 * 1024), "20 MiB");
  EXPECT_EQ(FormatBytes(1.25 * 1024 * 1024 * 1024), "1.25 GiB");
  EXPECT_EQ(FormatBytes(123.4 * 1024 * 1024), "123 MiB");
}

TEST(LogScale, DecadesAndOneTwoFive) {
  const Scale s = Scale::Log({1, 10000}, 0, 400);
  EXPECT_DOUBLE_EQ(s.Map(1), 0);
  EXPECT_DOUBLE_EQ(s.Map(100), 200);
  EXPECT_DOUBLE_EQ(s.Map(10000), 400);
  EXPECT_EQ(s.Ticks(), (std::vector<double>{1, 10, 100, 1000, 10000}));

  const Scale narrow = Scale::Log({20, 500}, 0, 100, Units::kSi);
  EXPECT_EQ(narrow.Ticks(), (std::vector<double>{20, 50, 100, 200, 500}));
  EXPECT_EQ(Labels(narrow), (std::vector<std::string>{"20", "50", "100", "200", "500"}));

  const Scale fractions = Scale::Log({0.1, 1}, 0, 100);
  EXPECT_EQ(Labels(fractions), (std::vector<std::string>{"0.1", "0.2", "0.5", "1"}));

  // Twelve decades are thinned to about the target.
  const Scale wide = Scale::Log({1, 1e12}, 0, 100);
  EXPECT_EQ(wide.Ticks(6), (std::vector<double>{1, 100, 1e4, 1e6, 1e8, 1e10, 1e12}));

  const Scale nice = Scale::Log({3, 4000}, 0, 100).Nice();
  EXPECT_DOUBLE_EQ(nice.domain().lo, 1);
  EXPECT_DOUBLE_EQ(nice.domain().hi, 10000);
  const Scale nice125 = Scale::Log({30, 170}, 0, 100).Nice();
  EXPECT_DOUBLE_EQ(nice125.domain().lo, 20);
  EXPECT_DOUBLE_EQ(nice125.domain().hi, 200);

  // Less than a factor of 2.5: linear ticks inside the domain.
  const Scale close = Scale::Log({100, 200}, 0, 100);
  EXPECT_EQ(close.Ticks(5), (std::vector<double>{100, 120, 140, 160, 180, 200}));
}

TEST(LogScale, ExplicitTicksAndNonPositiveValues) {
  const Scale s = Scale::Log({16, 64}, 0, 200).WithTicks({64, 16, 32, 32, 128, -1});
  EXPECT_EQ(s.Ticks(), (std::vector<double>{16, 32, 64}));
  EXPECT_DOUBLE_EQ(s.Map(32), 100);  // halfway on a log axis
  EXPECT_EQ(Labels(s), (std::vector<std::string>{"16", "32", "64"}));
  EXPECT_DOUBLE_EQ(s.Map(0), 0);
  EXPECT_DOUBLE_EQ(s.Map(-5), 0);
  const Scale bad = Scale::Log({0, 1000}, 0, 100);  // lo <= 0 is replaced
  EXPECT_GT(bad.domain().lo, 0);
  EXPECT_TRUE(std::isfinite(bad.Map(10)));
}

TEST(Domains, PaddingAndDegenerateInput) {
  Domain d = DataDomain({10, 30}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.lo, 9);
  EXPECT_DOUBLE_EQ(d.hi, 31);
  d = DataDomain({10, 30}, 0.05, true, false);  // zero baseline: no padding below 0
  EXPECT_DOUBLE_EQ(d.lo, 0);
  EXPECT_DOUBLE_EQ(d.hi, 31.5);
  d = DataDomain({5}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.lo, 2.5);
  EXPECT_DOUBLE_EQ(d.hi, 7.5);
  d = DataDomain({0, 0}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.lo, 0);
  EXPECT_DOUBLE_EQ(d.hi, 1);
  d = DataDomain({}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.lo, 0);
  EXPECT_DOUBLE_EQ(d.hi, 1);
  d = DataDomain({std::nan(""), std::numeric_limits<double>::infinity()}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.hi, 1);
  d = DataDomain({-4, -4}, 0.05, false, false);
  EXPECT_DOUBLE_EQ(d.lo, -6);
  EXPECT_DOUBLE_EQ(d.hi, -2);
  d = DataDomain({8}, 0.05, false, true);
  EXPECT_DOUBLE_EQ(d.lo, 4);
  EXPECT_DOUBLE_EQ(d.hi, 16);
  d = DataDomain({10, 1000}, 0.5, false, true);  // factor (1000/10)^0.5 = 10 each side
  EXPECT_DOUBLE_EQ(d.lo, 1);
  EXPECT_NEAR(d.hi, 10000, 1e-9);
  d = DataDomain({-3, 0}, 0.05, false, true);  // nothing positive: a default log domain
  EXPECT_DOUBLE_EQ(d.lo, 1);

  // A zero-width scale never divides by zero.
  const Scale z = Scale::Linear({3, 3}, 0, 100);
  EXPECT_DOUBLE_EQ(z.Map(3), 50);
  EXPECT_FALSE(z.Ticks().empty());
  const Scale zl = Scale::Log({4, 4}, 0, 100);
  EXPECT_DOUBLE_EQ(zl.Map(4), 50);
}

TEST(Xml, EscapesMarkupQuotesAndControls) {
  EXPECT_EQ(XmlEscape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(XmlEscape("x\x01y\tz"), "x\uFFFDy\tz");
  EXPECT_EQ(XmlEscape("mod\xC3\xA8le"), "mod\xC3\xA8le");  // UTF-8 passes through
  EXPECT_EQ(XmlEscape(""), "");
}

TEST(Palette, OkabeItoWithoutYellow) {
  EXPECT_EQ(Color(0), "#0072B2");
  EXPECT_EQ(Color(1), "#E69F00");
  EXPECT_EQ(Color(kPaletteSize), Color(0));
  for (size_t i = 0; i < kPaletteSize; ++i) EXPECT_NE(Color(i), "#F0E442");
}

// Plot 50..530 x 30..280 (480 x 250 pixels) with a 100-pixel legend.
ChartSpec KnownSpec() {
  ChartSpec spec;
  spec.title = "throughput <vs> context";
  spec.id = "chart-1";
  spec.width = 640;
  spec.height = 320;
  spec.margins = {50, 10, 30, 40, 100};
  return spec;
}

TEST(LineChartMarkup, PointsAndErrorBarsAtExpectedCoordinates) {
  ChartSpec spec = KnownSpec();
  spec.x.include_zero = true;  // x: [0, 105] -> nice [0, 120] (step 20)
  spec.y.include_zero = true;  // y: [0, 42] -> [0, 45] (step 5) -> nice [0, 50] (step 10)
  const PlotArea p = Plot(spec, true);
  EXPECT_DOUBLE_EQ(p.left, 50);
  EXPECT_DOUBLE_EQ(p.right, 530);
  EXPECT_DOUBLE_EQ(p.top, 30);
  EXPECT_DOUBLE_EQ(p.bottom, 280);
  const std::string svg = LineChart(
      spec, {{"A", {{100, 40, {}, {}, ""}, {0, 10, {}, {}, ""}, {50, 20, 15, 25, "P=50"}}},
             {"B & <C>", {{50, 30, {}, {}, ""}}}});
  EXPECT_EQ(Count(svg, "<svg "), 1u);
  EXPECT_NE(svg.find("data-kind=\"line\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"chart-1\""), std::string::npos);
  // Points, in series order, each series in x order.
  EXPECT_EQ(Attr(svg, "circle class=\"point\"", "cx"), (std::vector<double>{50, 250, 450, 250}));
  EXPECT_EQ(Attr(svg, "circle class=\"point\"", "cy"), (std::vector<double>{230, 180, 80, 130}));
  EXPECT_EQ(Attr(svg, "circle class=\"point\"", "data-y"), (std::vector<double>{10, 20, 40, 30}));
  // One CI bar, at x = 250 from y(15) = 205 to y(25) = 155.
  EXPECT_EQ(Count(svg, "class=\"ci\""), 1u);
  EXPECT_NE(svg.find("d=\"M250.0 205.0V155.0"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline class=\"line\""), 1u);  // B has one point: no line
  EXPECT_NE(svg.find("points=\"50.0,230.0 250.0,180.0 450.0,80.0\""), std::string::npos);
  // Axis ticks: x 0..120 step 20, y 0..50 step 10.
  EXPECT_NE(svg.find(">120</text>"), std::string::npos);
  EXPECT_NE(svg.find(">50</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">45</text>"), std::string::npos);
  // Names escaped, never raw.
  EXPECT_NE(svg.find("B &amp; &lt;C&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<C>"), std::string::npos);
  EXPECT_NE(svg.find("throughput &lt;vs&gt; context"), std::string::npos);
  EXPECT_EQ(Count(svg, "<g class=\"legend\">"), 1u);
  EXPECT_NE(svg.find("stroke=\"#0072B2\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#E69F00\""), std::string::npos);
}

// Issue 27: legend names were cut to the legend's width ("stories260K-Q8_0.gguf ll..."), so two
// runtimes of one model read alike. A long name wraps onto lines of the legend's column, whole.
TEST(LineChartMarkup, LegendWrapsLongNamesInsteadOfCuttingThem) {
  ChartSpec spec = KnownSpec();  // a 100-pixel legend: 9 characters a line
  const std::string a = "model-Q8_0.gguf llamacpp t=2";
  const std::string b = "model-Q8_0.gguf llamacpp-stock t=2";
  const std::string svg = LineChart(spec, {{a, {{1, 1, {}, {}, ""}}}, {b, {{2, 2, {}, {}, ""}}}});
  const std::string legend = svg.substr(svg.find("<g class=\"legend\">"));
  EXPECT_EQ(legend.find("\u2026"), std::string::npos) << legend;
  // "model-Q8_0.gguf" is wider than a line: broken inside; the rest at spaces.
  EXPECT_NE(legend.find(">model-Q8_<tspan x=\"568.0\" dy=\"14.0\">0.gguf</tspan>"
                        "<tspan x=\"568.0\" dy=\"14.0\">llamacpp</tspan>"
                        "<tspan x=\"568.0\" dy=\"14.0\">t=2</tspan></text>"),
            std::string::npos)
      << legend;
  EXPECT_NE(legend.find("<tspan x=\"568.0\" dy=\"14.0\">llamacpp-</tspan>"
                        "<tspan x=\"568.0\" dy=\"14.0\">stock t=2</tspan>"),
            std::string::npos)
      << legend;
  // The second entry starts below the first one's four lines: 36 + 18 + 3 x 14.
  EXPECT_NE(legend.find("cy=\"96.0\""), std::string::npos) << legend;
}

// An explicit y tick is inside the domain even far from the data (a percent axis from 0 to 100
// with every value at 0: not a domain of [0, 1]).
TEST(ScatterMarkup, ExplicitYTicksSetTheDomain) {
  ChartSpec spec = KnownSpec();
  spec.y.ticks = {0, 20, 40, 60, 80, 100};
  const std::string svg = ParetoScatter(spec, {{"a", 10, 0, true}, {"b", 20, 0, false}});
  EXPECT_NE(svg.find(">100</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">0</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find(">0.2</text>"), std::string::npos) << svg;
}

TEST(LineChartMarkup, LogAxisWithExplicitTicks) {
  ChartSpec spec = KnownSpec();
  spec.x.log = true;
  spec.x.ticks = {16, 32, 64};
  spec.y.include_zero = true;
  const std::string svg = LineChart(spec, {{"s", {{16, 10, {}, {}, ""}, {32, 20, {}, {}, ""}, {64, 40, {}, {}, ""}}}});
  const std::vector<double> cx = Attr(svg, "circle class=\"point\"", "cx");
  ASSERT_EQ(cx.size(), 3u);
  // Equal steps on a log axis for doubling x.
  EXPECT_NEAR(cx[1] - cx[0], cx[2] - cx[1], 0.11);
  EXPECT_NE(svg.find(">32</text>"), std::string::npos);
}

TEST(LineChartMarkup, SinglePointAndNoData) {
  ChartSpec spec = KnownSpec();
  const std::string one = LineChart(spec, {{"only", {{32, 5, 5, 5, ""}}}});
  EXPECT_EQ(Attr(one, "circle class=\"point\"", "cx").size(), 1u);
  EXPECT_EQ(one.find("nan"), std::string::npos);
  EXPECT_EQ(one.find("inf"), std::string::npos);
  const std::vector<double> cx = Attr(one, "circle class=\"point\"", "cx");
  EXPECT_GT(cx[0], 50);
  EXPECT_LT(cx[0], 530);
  const std::string none = LineChart(spec, {});
  EXPECT_NE(none.find("no data"), std::string::npos);
  EXPECT_EQ(none.find("class=\"point\""), std::string::npos);
  const std::string bad = LineChart(spec, {{"x", {{std::nan(""), 1, {}, {}, ""}, {1, 2, {}, {}, ""}}}});
  EXPECT_EQ(Attr(bad, "circle class=\"point\"", "cx").size(), 1u);
  EXPECT_EQ(bad.find("nan"), std::string::npos);
}

TEST(BarChartMarkup, GroupedBarsWithWhiskers) {
  const ChartSpec spec = KnownSpec();
  // Two groups in 480 pixels: bands of 240; 80% of a band for 2 series: bars 96 wide.
  const std::string svg = BarChart(spec, {"Q8_0", "Q4_0"},
                                   {{"P=16", {BarValue{10, 8, 12}, BarValue{20, {}, {}}}},
                                    {"P=32", {BarValue{40, {}, {}}, std::nullopt}}});
  EXPECT_NE(svg.find("data-kind=\"bar\""), std::string::npos);
  EXPECT_EQ(Attr(svg, "rect class=\"bar\"", "x"), (std::vector<double>{74, 170, 314}));
  EXPECT_EQ(Attr(svg, "rect class=\"bar\"", "width"), (std::vector<double>{96, 96, 96}));
  // y: [0, 42] -> [0, 50] over 250 pixels: 5 pixels per unit, 0 at y = 280.
  EXPECT_EQ(Attr(svg, "rect class=\"bar\"", "y"), (std::vector<double>{230, 180, 80}));
  EXPECT_EQ(Attr(svg, "rect class=\"bar\"", "height"), (std::vector<double>{50, 100, 200}));
  EXPECT_EQ(Attr(svg, "rect class=\"bar\"", "data-value"), (std::vector<double>{10, 20, 40}));
  EXPECT_EQ(Count(svg, "class=\"ci\""), 1u);
  EXPECT_NE(svg.find("d=\"M122.0 240.0V220.0"), std::string::npos);  // centre 74 + 48
  EXPECT_EQ(Count(svg, "class=\"category\""), 2u);
  EXPECT_NE(svg.find(">P=16</text>"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#E69F00\" data-value=\"20\""), std::string::npos);  // series 2 colour
}

TEST(BarChartMarkup, LongCategoryNamesAreTurned) {
  ChartSpec spec = KnownSpec();
  std::vector<BarGroup> groups;
  for (int i = 0; i < 8; ++i) groups.push_back({"decode_throughput_" + std::to_string(i) + "_16", {BarValue{1.0 + i, {}, {}}}});
  const std::string svg = BarChart(spec, {"only"}, groups);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 8u);
  EXPECT_EQ(Count(svg, "rotate(-30"), 8u);
}

TEST(ScatterMarkup, ParetoFrontHighlighted) {
  ChartSpec spec = KnownSpec();
  const std::string svg = ParetoScatter(
      spec, {{"F32", 10, 100, true}, {"Q8_0", 20, 99, true}, {"bad<one>", 15, 90, false}});
  EXPECT_NE(svg.find("data-kind=\"scatter\""), std::string::npos);
  EXPECT_EQ(Count(svg, "<circle class=\"point"), 3u);
  EXPECT_EQ(Count(svg, "<circle class=\"point front\""), 2u);
  EXPECT_EQ(Count(svg, "<polyline class=\"front\""), 1u);
  // The front line joins the front points in x order: F32 (x 10) then Q8_0 (x 20).
  const std::vector<double> cx = Attr(svg, "circle class=\"point[^\"]*\"", "cx");
  const std::vector<double> cy = Attr(svg, "circle class=\"point[^\"]*\"", "cy");
  ASSERT_EQ(cx.size(), 3u);
  EXPECT_LT(cx[0], cx[2]);
  EXPECT_LT(cx[2], cx[1]);
  EXPECT_LT(cy[0], cy[2]);  // higher quality is higher up
  const std::regex front("points=\"([0-9.]+),([0-9.]+) ([0-9.]+),([0-9.]+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, front));
  EXPECT_NEAR(std::stod(m[1].str()), cx[0], 0.05);
  EXPECT_NEAR(std::stod(m[3].str()), cx[1], 0.05);
  EXPECT_NE(svg.find("bad&lt;one&gt;"), std::string::npos);
}

}  // namespace
}  // namespace pipette::report

// ---- the report (pipette/report.h) ----------------------------------------------------------------

namespace pipette::report {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;

// A minimal ok record of `pipette.result/1` for benchmark `id` with one metric.
json Record(const std::string& file, const std::string& quant, const std::string& id,
            const std::string& metric, const std::string& unit, double median, double low,
            double high, double size_bytes, bool synthetic) {
  static int counter = 0;
  ++counter;
  std::string type;
  int p = 0, d = 0;
  if (id.rfind("prefill_throughput_", 0) == 0) {
    type = "prefill";
    p = std::stoi(id.substr(19));
  } else if (id.rfind("decode_throughput_", 0) == 0) {
    type = "decode";
    const std::string rest = id.substr(18);
    p = std::stoi(rest.substr(0, rest.find('_')));
    d = std::stoi(rest.substr(rest.find('_') + 1));
  } else if (id.rfind("max_memory_usage_", 0) == 0) {
    type = "memory";
    p = std::stoi(id.substr(17));
  } else {
    type = "kl_divergence";
    p = std::stoi(id.substr(14));
  }
  json r = {
      {"schema", "pipette.result/1"},
      {"result_id", fmt::format("0190a000-0000-7000-8000-{:012d}", counter)},
      {"config_id", "c"},
      {"status", "ok"},
      {"benchmark", {{"id", id}, {"type", type}, {"prefill_tokens", p}, {"decode_tokens", d},
                     {"methodology", "pipette-method/1"}}},
      {"model", {{"file_name", file}, {"sha256", std::string(64, quant == "Q8_0" ? 'a' : 'b')},
                 {"quant", quant}, {"size_bytes", size_bytes}, {"synthetic", synthetic}}},
      {"runtime", {{"name", "llamacpp"}, {"version", "llama.cpp@80fb11a"},
                   {"commit", "80fb11ac73e66d89eae2c6a91d8a77428fa733ed"},
                   {"settings", {{"threads", 1}}}}},
      {"device", {{"id", std::string(64, 'd')}, {"label", "bench-box"},
                  {"cpu", {{"model", "AMD EPYC"}, {"logical_cores", 2}}},
                  {"memory_bytes", 16.0 * 1024 * kMiB}}},
      {"harness", {{"version", "0.1.0"}, {"commit", "1234567890abcdef"}, {"reps", 5},
                   {"ci_reached", true}}},
      {"metrics", {{metric, {{"unit", unit}, {"n", 5}, {"median", median}, {"ci95_low", low},
                             {"ci95_high", high}}}}},
      {"started_at", fmt::format("2026-11-29T10:{:02d}:00Z", counter % 60)},
      {"finished_at", fmt::format("2026-11-29T10:{:02d}:30Z", counter % 60)},
      {"logs", {{"warnings", synthetic ? json::array({"synthetic model: its performance stands "
                                                      "for its shape, not for any quality"})
                                       : json::array()}}}};
  return r;
}

// Two quantizations of one model, every chart's data.
std::vector<json> FullSet(const std::string& stem, bool synthetic) {
  std::vector<json> out;
  const struct {
    std::string quant;
    double size, prefill[3], decode[3], memory, top1;
  } q[] = {{"Q8_0", 30 * kMiB, {1000, 1500, 1800}, {100, 90, 80}, 50 * kMiB, 0.99},
           {"Q4_0", 20 * kMiB, {1100, 1600, 2000}, {120, 110, 95}, 40 * kMiB, 0.95}};
  const int ps[] = {16, 32, 64};
  for (const auto& c : q) {
    const std::string file = stem + "-" + c.quant + ".gguf";
    for (int i = 0; i < 3; ++i) {
      out.push_back(Record(file, c.quant, fmt::format("prefill_throughput_{}", ps[i]),
                           "prefill_throughput", "tokens/s", c.prefill[i], c.prefill[i] * 0.98,
                           c.prefill[i] * 1.02, c.size, synthetic));
      out.push_back(Record(file, c.quant, fmt::format("decode_throughput_{}_16", ps[i]),
                           "decode_throughput", "tokens/s", c.decode[i], c.decode[i] * 0.97,
                           c.decode[i] * 1.03, c.size, synthetic));
    }
    out.push_back(Record(file, c.quant, "max_memory_usage_32", "max_host_usage", "bytes", c.memory,
                         c.memory * 0.99, c.memory * 1.01, c.size, synthetic));
    json kl = Record(file, c.quant, "kl_divergence_64", "kl_divergence", "nats", 0.01, 0.005, 0.02,
                     c.size, synthetic);
    kl["metrics"]["top1_agreement"] = {{"unit", "ratio"}, {"n", 1}, {"median", c.top1},
                                       {"ci95_low", c.top1}, {"ci95_high", c.top1}};
    out.push_back(kl);
  }
  return out;
}

// The <svg ...>...</svg> whose id is `id`, or "".
std::string SvgById(const std::string& html, const std::string& id) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = html.rfind("<svg", at);
  const size_t end = html.find("</svg>", at);
  return html.substr(start, end + 6 - start);
}

TEST(HtmlReport, EveryChartOfAFullSet) {
  ReportOptions o;
  o.title = "quant sweep";
  o.source = "store test.db";
  o.generated_at = "2026-11-29T12:00:00Z";
  const std::vector<json> records = FullSet("m&<x>", true);
  const std::string html = RenderHtml(records, o);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<svg "), 7u);  // decode, prefill, 2 x bars, memory, retention, quality
  // Decode throughput vs context: 2 configurations x 3 context lengths, each with a CI bar.
  const std::string decode = SvgById(html, "decode-scaling-chart");
  EXPECT_EQ(Count(decode, "<circle class=\"point\""), 6u);
  EXPECT_EQ(Count(decode, "class=\"ci\""), 6u);
  EXPECT_EQ(Count(decode, "<polyline class=\"line\""), 2u);
  EXPECT_EQ(Attr(decode, "circle class=\"point\"", "data-y"),
            (std::vector<double>{120, 110, 95, 100, 90, 80}));  // Q4_0 sorts first
  EXPECT_EQ(Count(SvgById(html, "prefill-scaling-chart"), "<circle class=\"point\""), 6u);
  EXPECT_EQ(Count(SvgById(html, "decode-bars"), "<rect class=\"bar\""), 6u);
  EXPECT_EQ(Count(SvgById(html, "prefill-bars"), "<rect class=\"bar\""), 6u);
  // Memory: file size and peak per configuration.
  const std::string memory = SvgById(html, "memory-chart");
  EXPECT_EQ(Attr(memory, "rect class=\"bar\"", "data-value"),
            (std::vector<double>{20 * kMiB, 40 * kMiB, 30 * kMiB, 50 * kMiB}));
  // Retention: 110/120, 95/120 and 90/100, 80/100.
  const std::string retention = SvgById(html, "retention-chart");
  const std::vector<double> r = Attr(retention, "circle class=\"point\"", "data-y");
  ASSERT_EQ(r.size(), 6u);
  EXPECT_DOUBLE_EQ(r[0], 1);
  EXPECT_NEAR(r[2], 95.0 / 120, 1e-12);
  EXPECT_NEAR(r[5], 0.8, 1e-12);
  // Quality vs speed: Q4_0 faster, Q8_0 agrees more: both on the front.
  const std::string quality = SvgById(html, "quality-chart");
  EXPECT_EQ(Count(quality, "<circle class=\"point front\""), 2u);
  EXPECT_EQ(Count(quality, "<polyline class=\"front\""), 1u);
  EXPECT_EQ(Attr(quality, "circle class=\"point front\"", "data-y"), (std::vector<double>{95, 99}));
  // Speed ratios against the larger file (Q8_0): decode at P=64 95/80, prefill at 16 1100/1000,
  // memory 40/50.
  const size_t ratios = html.find("id=\"speed-ratios\"");
  ASSERT_NE(ratios, std::string::npos);
  const std::string table = html.substr(ratios, html.find("</table>", ratios) - ratios);
  EXPECT_NE(table.find("Q8_0 (reference)"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("{:.3f}x", 95.0 / 80)), std::string::npos) << table;
  EXPECT_NE(table.find("1.100x"), std::string::npos) << table;
  EXPECT_NE(table.find("0.800x"), std::string::npos) << table;
  // Escaped everywhere, never raw.
  EXPECT_NE(html.find("m&amp;&lt;x&gt;-Q8_0.gguf"), std::string::npos);
  EXPECT_EQ(html.find("m&<x>"), std::string::npos);
  // Summary, notice, provenance.
  EXPECT_NE(html.find("2 configurations"), std::string::npos);
  EXPECT_NE(html.find("class=\"notice\""), std::string::npos);
  EXPECT_NE(html.find("not for any model&#39;s quality"), std::string::npos);
  EXPECT_NE(html.find("dddddddddddd (bench-box)"), std::string::npos);
  EXPECT_NE(html.find("<td>aaaaaaaaaaaa</td>"), std::string::npos);  // sha256 prefix
  EXPECT_NE(html.find("80fb11ac73e6"), std::string::npos);
  EXPECT_NE(html.find("0.1.0 (1234567890ab)"), std::string::npos);
  // The synthetic warning every configuration logged is said once, not in every row (issue 7).
  EXPECT_NE(html.find("Every configuration logged: "), std::string::npos);
  EXPECT_EQ(html.find("(8 of 8)"), std::string::npos);
  EXPECT_NE(html.find("99.00%"), std::string::npos);   // top1 agreement in the results table
  EXPECT_EQ(html.find("not shown"), std::string::npos);
  // Self-contained: no scripts, nothing fetched.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(Count(html, "http://"), Count(html, "http://www.w3.org/2000/svg"));
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Deterministic.
  EXPECT_TRUE(html == RenderHtml(records, o));
}

TEST(HtmlReport, SectionsWithoutDataAreNotes) {
  std::vector<json> records = {
      Record("real-Q8_0.gguf", "Q8_0", "decode_throughput_32_16", "decode_throughput", "tokens/s",
             50, 49, 51, 1e6, false),
      Record("real-Q4_0.gguf", "Q4_0", "decode_throughput_32_16", "decode_throughput", "tokens/s",
             60, 59, 61, 0.6e6, false)};
  json failed = Record("real-Q4_0.gguf", "Q4_0", "prefill_throughput_64", "prefill_throughput",
                       "tokens/s", 1, 1, 1, 0.6e6, false);
  failed["status"] = "failed";
  failed.erase("metrics");
  failed["failure"] = {{"stage", "load"}, {"message", "model <file> is truncated"}};
  records.push_back(failed);
  const std::string html = RenderHtml(records, {});
  EXPECT_EQ(Count(html, "<svg "), 1u);  // the decode bars only
  EXPECT_EQ(Count(SvgById(html, "decode-bars"), "<rect class=\"bar\""), 2u);
  EXPECT_NE(html.find("<b>Decode throughput vs context length</b>: not shown, every "
                      "configuration was measured at one context length only"),
            std::string::npos);
  EXPECT_NE(html.find("<b>Prefill throughput vs context length</b>: not shown, no "
                      "prefill_throughput results"),
            std::string::npos);
  EXPECT_NE(html.find("<b>Peak memory vs model file size</b>: not shown"), std::string::npos);
  EXPECT_NE(html.find("<b>Context-scaling retention</b>: not shown"), std::string::npos);
  EXPECT_NE(html.find("<b>Quality vs speed</b>: not shown, no quality metrics"), std::string::npos);
  EXPECT_EQ(html.find("class=\"notice\""), std::string::npos);  // no synthetic model
  EXPECT_NE(html.find("1 failed"), std::string::npos);
  EXPECT_NE(html.find("<td>load</td><td>model &lt;file&gt; is truncated</td>"), std::string::npos);
}

TEST(HtmlReport, OnlyFailedResults) {
  json failed = Record("x-Q8_0.gguf", "Q8_0", "decode_throughput_32_16", "decode_throughput",
                       "tokens/s", 1, 1, 1, 1e6, false);
  failed["status"] = "failed";
  failed.erase("metrics");
  failed["failure"] = {{"stage", "decode"}, {"message", "driver crashed"}};
  const std::string html = RenderHtml({failed}, {});
  EXPECT_EQ(Count(html, "<svg "), 0u);
  EXPECT_NE(html.find("<b>Charts</b>: not shown, no ok results to chart."), std::string::npos);
  EXPECT_EQ(Count(html, "id=\"results\""), 1u);
  EXPECT_NE(html.find("<td>decode</td><td>driver crashed</td>"), std::string::npos);
  EXPECT_NE(html.find("0 configurations"), std::string::npos);
  const std::string md = RenderMarkdown({failed}, {});
  EXPECT_NE(md.find("| x-Q8_0.gguf | Q8_0 | decode_throughput_32_16 | decode | driver crashed |"),
            std::string::npos);
}

TEST(HtmlReport, QualityFrontIsAmongTheDrawnConfigurations) {
  // A third configuration, faster and smaller but without a quality score, is not drawn and does
  // not push the drawn ones off their front.
  std::vector<json> records = FullSet("m", false);
  for (const char* id : {"decode_throughput_16_16", "decode_throughput_32_16", "decode_throughput_64_16"}) {
    records.push_back(Record("fast-Q2_K.gguf", "Q2_K", id, "decode_throughput", "tokens/s", 500, 490,
                             510, 5 * kMiB, false));
  }
  records.push_back(Record("fast-Q2_K.gguf", "Q2_K", "max_memory_usage_32", "max_host_usage",
                           "bytes", 10 * kMiB, 10 * kMiB, 10 * kMiB, 5 * kMiB, false));
  const std::string html = RenderHtml(records, {});
  const std::string quality = SvgById(html, "quality-chart");
  EXPECT_EQ(Count(quality, "<circle class=\"point"), 2u);
  EXPECT_EQ(Count(quality, "<circle class=\"point front\""), 2u);
  EXPECT_NE(html.find("<td>not drawn</td>"), std::string::npos);
}

TEST(HtmlReport, LimitsOpenWithADecisionAndGreyTheFailingConfigurations) {
  // Q8_0 peaks at 50 MiB [49.5, 50.5], Q4_0 at 40 MiB: a 45 MiB limit fails Q8_0 only.
  ReportOptions o;
  o.limits.max_memory_bytes = 45 * kMiB;
  o.limits_text = "--max-memory 45MiB";
  const std::vector<json> records = FullSet("m", false);
  const std::string html = RenderHtml(records, o);
  const size_t decision = html.find("<section id=\"decision\">");
  ASSERT_NE(decision, std::string::npos) << html.substr(0, 3000);
  EXPECT_LT(decision, html.find("<section id=\"summary\">"));
  EXPECT_NE(html.find("1 pass, 0 borderline, 1 fail. On the Pareto front of those that do not "
                      "fail: Q4_0."),
            std::string::npos);
  EXPECT_NE(html.find("Limits: --max-memory 45MiB."), std::string::npos);
  EXPECT_NE(html.find("fail, needs 0.900x the peak memory"), std::string::npos);
  EXPECT_NE(html.find("pass, margin +11.1%"), std::string::npos);
  // Charts: the failing configuration is grey, and the quality front is drawn over Q4_0 only.
  const std::string quality = SvgById(html, "quality-chart");
  EXPECT_EQ(Count(quality, "<circle class=\"point excluded\""), 1u);
  EXPECT_EQ(Count(quality, "<circle class=\"point front\""), 1u);
  EXPECT_NE(quality.find("fails the limits"), std::string::npos);
  EXPECT_GE(Count(quality, "class=\"ci\""), 2u);  // decode intervals on the x axis
  EXPECT_NE(SvgById(html, "decode-scaling-chart").find("class=\"series excluded\" data-series=\"Q8_0\""),
            std::string::npos);
  EXPECT_NE(SvgById(html, "decode-bars").find("<rect class=\"bar excluded\""), std::string::npos);
  EXPECT_NE(html.find("Q8_0 (fails the limits)"), std::string::npos);  // memory chart category
  // The memory chart greys the failing configuration's bars and draws the limit.
  const std::string memory = SvgById(html, "memory-chart");
  EXPECT_EQ(Count(memory, "<rect class=\"bar excluded\""), 2u) << memory;
  EXPECT_NE(memory.find("<g class=\"limit\">"), std::string::npos);
  EXPECT_NE(memory.find(">limit 45 MiB</text>"), std::string::npos) << memory;
  // Without limits there is no decision and nothing is grey.
  ReportOptions decode_limit;
  decode_limit.limits.min_decode_throughput = 100;
  decode_limit.limits_text = "--min-decode-throughput 100";
  const std::string with_decode = RenderHtml(records, decode_limit);
  EXPECT_NE(SvgById(with_decode, "decode-bars").find(">limit 100 tokens/s</text>"),
            std::string::npos);
  EXPECT_NE(SvgById(with_decode, "decode-scaling-chart").find("<g class=\"limit\">"),
            std::string::npos);
  const std::string plain = RenderHtml(records, {});
  EXPECT_EQ(plain.find("id=\"decision\""), std::string::npos);
  EXPECT_EQ(plain.find("excluded"), std::string::npos);
}

TEST(HtmlReport, QualityChartSaysWhenDifferencesAreInsideTheNoise) {
  std::vector<json> records;
  for (const char* quant : {"Q8_0", "Q4_0"}) {
    const std::string file = std::string("m-") + quant + ".gguf";
    const double speed = quant == std::string("Q8_0") ? 377 : 374;
    records.push_back(Record(file, quant, "decode_throughput_64_16", "decode_throughput",
                             "tokens/s", speed, 355, 395, 10 * kMiB, false));
    json kl = Record(file, quant, "kl_divergence_64", "kl_divergence", "nats", 0.01, 0.005, 0.02,
                     10 * kMiB, false);
    kl["metrics"]["top1_agreement"] = {{"unit", "ratio"}, {"n", 1}, {"median", 0.96},
                                       {"ci95_low", 0.95}, {"ci95_high", 0.97}};
    records.push_back(kl);
  }
  const std::string html = RenderHtml(records, {});
  EXPECT_NE(html.find("All differences lie inside the noise"), std::string::npos);
  EXPECT_EQ(Count(SvgById(html, "quality-chart"), "class=\"ci\""), 4u);  // both axes, 2 points
}

TEST(MarkdownReport, SameContentAsTables) {
  std::vector<json> records = FullSet("m|x", true);
  const std::string md = RenderMarkdown(records, {"sweep", "store s.db", "", ""});
  EXPECT_EQ(md.rfind("# sweep\n", 0), 0u);
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  for (const char* h : {"## Summary", "## Decode throughput vs context length",
                        "## Prefill throughput vs context length", "## Throughput per quantization",
                        "## Peak memory vs model file size", "## Context-scaling retention",
                        "## Quality vs speed", "## Results", "## Provenance"}) {
    EXPECT_NE(md.find(std::string(h) + "\n"), std::string::npos) << h;
  }
  EXPECT_NE(md.find("| configuration | P | D | decode_throughput (tokens/s) | 95% CI | retention |\n"
                    "|---|---:|---:|---:|---:|---:|\n"),
            std::string::npos);
  EXPECT_NE(md.find("| Q8_0 | 64 | 16 | 80.0 | 77.6 .. 82.4 | 0.800 |"), std::string::npos);
  EXPECT_NE(md.find("| Q8_0 | 30 MiB | 50 MiB | 49.5 MiB .. 50.5 MiB | 1.67 | 20 MiB | max_memory_usage_32 |"),
            std::string::npos);
  EXPECT_NE(md.find("m\\|x-Q8_0.gguf"), std::string::npos);  // a pipe in a name is escaped
  EXPECT_NE(md.find("> **Synthetic models"), std::string::npos);
}

// ---- the Funnel section (pipette decide's state) ----------------------------------------------

// A state file as src/decide/funnel.cc writes it: stories260K's four quantizations, F32 out at
// screen on memory, Q8_0 out at measure on decode, Q4_K_M a finalist and Q4_0 chosen after the
// soak. `cells` per stage: screen 7 (53.18 s), measure 6 (85.61 s), stabilize 2 (61.2 s).
json FunnelState(bool with_verdict = true) {
  const std::string dir = "/work/out/stories260k/";
  auto key = [&](const std::string& quant) {
    return dir + "stories260K-" + quant + ".gguf|llamacpp|{\"cpus\":\"0\",\"threads\":1}|local";
  };
  json cells = json::array();
  auto cell = [&](const std::string& stage, const std::string& quant, const std::string& benchmark,
                  double seconds) {
    cells.push_back({{"key", stage + "/0/" + benchmark + "/" + key(quant)},
                     {"stage", stage},
                     {"round", 0},
                     {"config", key(quant)},
                     {"configuration", "stories260K-" + quant},
                     {"benchmark", benchmark},
                     {"status", "ok"},
                     {"result_id", fmt::format("01a24a38-0000-7000-8000-{:012d}", cells.size())},
                     {"config_id", "c"},
                     {"reason", ""},
                     {"seconds", seconds}});
  };
  for (const char* q : {"F32", "Q8_0", "Q4_0", "Q4_K_M"}) {
    cell("screen", q, "max_memory_usage_256", 7.5);
  }
  for (const char* q : {"Q8_0", "Q4_0", "Q4_K_M"}) {
    cell("screen", q, "decode_throughput_100_100", 7.06);
  }
  // 4 x 7.5 + 3 x 7.06 = 51.18 s, and 2 s of the first cell's readiness wait.
  cells[0]["seconds"] = 9.5;
  for (const char* q : {"Q8_0", "Q4_0", "Q4_K_M"}) {
    cell("measure", q, "decode_throughput_256_100", 12.0);
    cell("measure", q, "decode_throughput_256_256", 16.536666667);
  }
  cell("stabilize", "Q4_0", "soak_256_256_1", 30.5);
  cell("stabilize", "Q4_K_M", "soak_256_256_1", 30.7);
  json state = {
      {"schema", "pipette.funnel/1"},
      {"name", "stories260k-decide"},
      {"decision_file", "/work/examples/suites/stories260k-decide.toml"},
      {"store", "/work/out/results.db"},
      {"started_at", "2026-12-06T07:19:36.139Z"},
      {"updated_at", "2026-12-06T07:24:01.624Z"},
      {"file", {{"decision", {{"objectives", {"decode", "memory", "quality"}}}}}},
      {"cells", cells},
      {"left",
       {{key("F32"),
         {{"stage", "screen"},
          {"reason", "fails max_memory: max_host_usage 13.68 MiB [13.41, 13.80] "
                     "(max_memory_usage_256) at 99.94% > 13.30 MiB"}}},
        {key("Q8_0"),
         {{"stage", "measure"},
          {"reason", "fails min_decode_throughput: decode_throughput 850.7 tokens/s [730.0, "
                     "937.0] (decode_throughput_256_256) at 99.94% < 1000.0 tokens/s"}}}}}};
  if (!with_verdict) return state;
  auto config = [&](const std::string& quant, const std::string& stage, bool out,
                    const std::string& reason, json open_limits, bool on_front) {
    return json{{"name", "stories260K-" + quant}, {"key", key(quant)},
                {"model", dir + "stories260K-" + quant + ".gguf"}, {"device", "local"},
                {"settings", {{"cpus", "0"}, {"threads", 1}}}, {"stage", stage}, {"out", out},
                {"reason", reason}, {"open_limits", open_limits}, {"on_front", on_front}};
  };
  state["verdict"] = {
      {"chosen", "stories260K-Q4_0"},
      {"why_none", ""},
      {"interrupted", false},
      {"budget_spent", false},
      {"confidence", 0.999375},
      {"screen_repetitions", 15},
      {"benchmarks", {"decode_throughput_100_100", "decode_throughput_256_100",
                      "decode_throughput_256_256", "max_memory_usage_256"}},
      {"benchmarks_skipped", {"prefill_throughput_100", "end_to_end_latency_100_100"}},
      {"notes", {"the limits changed since the funnel started (limits.max_memory): every "
                 "configuration was judged again on what was measured"}},
      {"configurations",
       {config("F32", "screen", true, state["left"][key("F32")]["reason"], json::array(), false),
        config("Q8_0", "measure", true, state["left"][key("Q8_0")]["reason"],
               {"min_decode_throughput: decode_throughput 1605.2 tokens/s [828.6, 1972.3] "
                "(decode_throughput_100_100) at 99.94% crosses 1000.0 tokens/s"},
               false),
        config("Q4_0", "chosen", false,
               "soak_256_256_1: 412 requests in 60 s, drift -0.8%, memory growth 0.00 MiB",
               json::array(), true),
        config("Q4_K_M", "finalist", false,
               "soak_256_256_1: 398 requests in 60 s, drift -1.2%, memory growth 0.01 MiB",
               {"min_decode_throughput: decode_throughput 1054.6 tokens/s [882.4, 1551.0] "
                "(decode_throughput_256_100) at 99.94% crosses 1000.0 tokens/s"},
               true)}},
      {"stages", {{{"stage", "screen"}, {"cells", 7}, {"seconds", 53.18}},
                  {{"stage", "measure"}, {"cells", 6}, {"seconds", 85.61}},
                  {{"stage", "stabilize"}, {"cells", 2}, {"seconds", 61.2}}}}};
  return state;
}

// The <section id="ID">...</section> of `html`, or "".
std::string SectionById(const std::string& html, const std::string& id) {
  const size_t at = html.find("<section id=\"" + id + "\">");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</section>", at) + 10 - at);
}

// The rows of the table whose data-table is `name`, each as its cells' text (still escaped).
std::vector<std::vector<std::string>> TableRows(const std::string& html, const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  const size_t at = html.find("<table data-table=\"" + name + "\">");
  if (at == std::string::npos) return rows;
  const std::string body =
      html.substr(html.find("<tbody>", at), html.find("</tbody>", at) - html.find("<tbody>", at));
  const std::regex row("<tr>(.*?)</tr>"), cell("<td[^>]*>(.*?)</td>");
  const std::sregex_iterator end;
  for (auto r = std::sregex_iterator(body.begin(), body.end(), row); r != end; ++r) {
    const std::string tr = (*r)[1].str();
    std::vector<std::string> cells;
    for (auto c = std::sregex_iterator(tr.begin(), tr.end(), cell); c != end; ++c) {
      cells.push_back((*c)[1].str());
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST(FunnelState, ParsesTheVerdictAndTheCells) {
  auto f = ParseFunnelState(FunnelState(), "/work/out/decide/stories260k-decide.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->name, "stories260k-decide");
  EXPECT_EQ(f->state_path, "/work/out/decide/stories260k-decide.json");
  EXPECT_EQ(f->store, "/work/out/results.db");
  EXPECT_TRUE(f->has_verdict);
  EXPECT_EQ(f->cells_after_verdict, 0);
  EXPECT_EQ(f->chosen, "stories260K-Q4_0");
  EXPECT_DOUBLE_EQ(f->confidence, 0.999375);
  EXPECT_EQ(f->screen_repetitions, 15);
  ASSERT_EQ(f->configurations.size(), 4u);
  EXPECT_EQ(f->configurations[0].stage, "screen");
  EXPECT_TRUE(f->configurations[0].out);
  EXPECT_EQ(f->configurations[1].open_limits.size(), 1u);
  EXPECT_EQ(f->configurations[3].stage, "finalist");
  EXPECT_EQ(f->configurations[3].settings["threads"], 1);
  ASSERT_EQ(f->stages.size(), 3u);  // from the cells: the same as the verdict's
  EXPECT_EQ(f->stages[0].stage, "screen");
  EXPECT_EQ(f->stages[0].cells, 7);
  EXPECT_NEAR(f->stages[0].seconds, 53.18, 1e-9);
  EXPECT_EQ(f->stages[1].cells, 6);
  EXPECT_NEAR(f->stages[1].seconds, 85.61, 1e-6);
  EXPECT_NEAR(f->stages[2].seconds, 61.2, 1e-9);
  EXPECT_EQ(f->notes.size(), 1u);
  EXPECT_EQ(f->benchmarks_skipped.size(), 2u);
}

TEST(FunnelState, RefusesWhatIsNotAFunnelState) {
  auto array = ParseFunnelState(json::array(), "x.json");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().message, "x.json: not a funnel state (not a JSON object)");
  auto result = ParseFunnelState({{"schema", "pipette.result/1"}}, "r.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "r.json: not a funnel state (schema \"pipette.result/1\", expected "
            "\"pipette.funnel/1\")");
  auto none = ParseFunnelState({{"name", "x"}}, "n.json");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "n.json: not a funnel state (schema missing, expected \"pipette.funnel/1\")");
  json bad = FunnelState();
  bad["verdict"]["configurations"] = "four";
  auto shape = ParseFunnelState(bad, "s.json");
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.error().message,
            "s.json: not a funnel state this pipette reads (\"configurations\" is not a list)");
  json wrong_type = FunnelState();
  wrong_type["verdict"]["chosen"] = 3;
  auto typed = ParseFunnelState(wrong_type, "t.json");
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.error().message.rfind("t.json: not a funnel state this pipette reads (", 0), 0u)
      << typed.error().message;
  EXPECT_EQ(typed.error().message.find('\n'), std::string::npos);
}

TEST(HtmlReport, FunnelSectionShowsWhatLeftWhereAndTheDeviceTime) {
  ReportOptions o;
  auto f = ParseFunnelState(FunnelState(), "/work/out/decide/stories260k-decide.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  o.funnels.push_back(*f);
  const std::string html = RenderHtml(FullSet("m", false), o);
  // First, before the summary, and in the navigation.
  const size_t funnel_at = html.find("<section id=\"funnel\">");
  ASSERT_NE(funnel_at, std::string::npos);
  EXPECT_EQ(funnel_at, html.find("<section id=\""));
  EXPECT_NE(html.find("<a href=\"#funnel\">Funnel: stories260k-decide</a>"), std::string::npos);
  const std::string s = SectionById(html, "funnel");
  EXPECT_NE(s.find("<h2>Funnel: stories260k-decide</h2>"), std::string::npos);
  EXPECT_NE(s.find("<p class=\"notice\">Chosen: stories260K-Q4_0.</p>"), std::string::npos) << s;
  EXPECT_NE(
      s.find("<p>4 configurations: 1 left at screen, 1 at measure, 1 finalist, 1 chosen.</p>"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("The decision funnel of /work/examples/suites/stories260k-decide.toml (state "
                   "/work/out/decide/stories260k-decide.json), last written "
                   "2026-12-06T07:24:01.624Z"),
            std::string::npos);
  EXPECT_NE(s.find("Each interval at 99.94% confidence"), std::string::npos);
  EXPECT_NE(s.find("screen cells of 15 repetitions"), std::string::npos);
  EXPECT_NE(s.find("Not measured (no limit or objective reads them): prefill_throughput_100, "
                   "end_to_end_latency_100_100."),
            std::string::npos);
  EXPECT_NE(s.find("<li>Note: the limits changed since the funnel started"), std::string::npos);
  EXPECT_NE(s.find("Device time 3 min 20 s over 15 cells"), std::string::npos) << s;
  // One row per configuration: where it left or that it stayed, and the evidence.
  const auto rows = TableRows(s, "funnel-configurations");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{
                         "stories260K-F32", "left at screen",
                         "fails max_memory: max_host_usage 13.68 MiB [13.41, 13.80] "
                         "(max_memory_usage_256) at 99.94% &gt; 13.30 MiB"}));
  EXPECT_EQ(rows[1][1], "left at measure");
  EXPECT_EQ(rows[1][2].find("fails min_decode_throughput"), 0u);
  // Out: its open limits no longer matter.
  EXPECT_EQ(rows[1][2].find("borderline"), std::string::npos);
  EXPECT_EQ(rows[2], (std::vector<std::string>{
                         "stories260K-Q4_0", "chosen",
                         "soak_256_256_1: 412 requests in 60 s, drift -0.8%, memory growth 0.00 "
                         "MiB; on the Pareto front of the survivors"}));
  EXPECT_EQ(rows[3][1], "finalist");
  EXPECT_NE(rows[3][2].find("; borderline: min_decode_throughput: decode_throughput 1054.6"),
            std::string::npos);
  // The configurations table comes before the chart; the stage table is the chart's data.
  EXPECT_LT(s.find("data-table=\"funnel-configurations\""), s.find("<svg"));
  const auto stages = TableRows(s, "funnel-stages");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0], (std::vector<std::string>{"screen", "1", "7", "53.2 s", "27%"}));
  EXPECT_EQ(stages[1], (std::vector<std::string>{"measure", "1", "6", "85.6 s", "43%"}));
  EXPECT_EQ(stages[2], (std::vector<std::string>{"stabilize", "0", "2", "61.2 s", "31%"}));
  EXPECT_EQ(stages[3], (std::vector<std::string>{"total", "2", "15", "3 min 20 s", "100%"}));
  EXPECT_GT(s.find("<details><summary>the chart's data</summary>"), s.find("<svg"));
  // Device time per stage: one bar each, as long as its seconds, labelled with seconds and cells.
  const std::string chart = SvgById(s, "funnel-time");
  EXPECT_NE(chart.find("data-kind=\"hbar\""), std::string::npos);
  const std::vector<double> values = Attr(chart, "rect class=\"bar\"", "data-value");
  ASSERT_EQ(values.size(), 3u);
  EXPECT_NEAR(values[0], 53.18, 1e-9);
  EXPECT_NEAR(values[1], 85.61, 1e-6);
  const std::vector<double> widths = Attr(chart, "rect class=\"bar\"", "width");
  ASSERT_EQ(widths.size(), 3u);
  EXPECT_NEAR(widths[0] / widths[1], 53.18 / 85.61, 0.01);
  EXPECT_NEAR(widths[2] / widths[1], 61.2 / 85.61, 0.01);
  EXPECT_NE(chart.find(">53.2 s, 7 cells</text>"), std::string::npos) << chart;
  EXPECT_NE(chart.find(">device time (s)</text>"), std::string::npos);
  // Self-contained still.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Without funnels, no section.
  EXPECT_EQ(RenderHtml(FullSet("m", false), {}).find("funnel"), std::string::npos);
}

TEST(HtmlReport, FunnelWithoutVerdictOrChoiceSaysSo) {
  // Still running: two configurations measured so far, one already out.
  json running = FunnelState(false);
  running["cells"].erase(running["cells"].begin() + 1, running["cells"].end());
  running["cells"].push_back(FunnelState(false)["cells"][1]);  // Q8_0's memory cell
  const std::string f32 = running["cells"][0]["config"];
  running["left"] = {{f32, running["left"][f32]}};  // only F32 has left so far
  auto f = ParseFunnelState(running, "run.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->has_verdict);
  ReportOptions o;
  o.funnels.push_back(*f);
  std::string html = RenderHtml(FullSet("m", false), o);
  std::string s = SectionById(html, "funnel");
  EXPECT_NE(s.find("<p class=\"notice\">No verdict yet: the funnel is still running"),
            std::string::npos);
  EXPECT_NE(s.find("<p>2 configurations: 1 left at screen, 1 still in.</p>"), std::string::npos)
      << s;
  auto rows = TableRows(s, "funnel-configurations");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], "left at screen");
  EXPECT_EQ(rows[1], (std::vector<std::string>{"stories260K-Q8_0", "still in (screen)", "-"}));
  EXPECT_EQ(s.find("confidence"), std::string::npos);  // unknown before the verdict
  const std::string chart = SvgById(s, "funnel-time");
  EXPECT_EQ(Count(chart, "<rect class=\"bar\""), 1u);  // screen only
  EXPECT_EQ(Count(chart, ">not run</text>"), 2u);

  // None chosen, and a resume under way: two cells after the verdict.
  json none = FunnelState();
  none["verdict"]["chosen"] = "";
  none["verdict"]["why_none"] = "no configuration meets the limits";
  none["cells"].push_back(none["cells"][13]);
  none["cells"].push_back(none["cells"][14]);
  auto g = ParseFunnelState(none, "none.json");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->cells_after_verdict, 2);
  o.funnels = {*f, *g};
  html = RenderHtml(FullSet("m", false), o);
  s = SectionById(html, "funnel-2");
  EXPECT_NE(s.find("<p class=\"notice\">No configuration chosen: no configuration meets the "
                   "limits.</p>"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("<li>2 cells ran after this verdict was written"), std::string::npos);
  EXPECT_EQ(TableRows(s, "funnel-stages")[2][2], "4");  // the stabilize cells counted
  EXPECT_LT(html.find("<section id=\"funnel\">"), html.find("<section id=\"funnel-2\">"));

  // Interrupted (Ctrl-C) in measure: who stayed is still in, where it was.
  json stopped = FunnelState();
  stopped["verdict"]["chosen"] = "";
  stopped["verdict"]["interrupted"] = true;
  for (json& c : stopped["verdict"]["configurations"]) {
    if (!c["out"].get<bool>()) c["stage"] = "measure";
  }
  auto h = ParseFunnelState(stopped, "stopped.json");
  ASSERT_TRUE(h.ok()) << h.error().message;
  o.funnels = {*h};
  s = SectionById(RenderHtml(FullSet("m", false), o), "funnel");
  EXPECT_NE(s.find("<p class=\"notice\">Interrupted before a choice: run the same `pipette "
                   "decide` command to resume.</p>"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("<p>4 configurations: 1 left at screen, 1 at measure, 2 still in.</p>"),
            std::string::npos)
      << s;
  rows = TableRows(s, "funnel-configurations");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2][1], "still in (measure)");
}

TEST(MarkdownReport, FunnelAsTables) {
  json state = FunnelState();
  state["verdict"]["configurations"][0]["name"] = "F32 <big> | x";
  auto f = ParseFunnelState(state, "state.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ReportOptions o;
  o.funnels.push_back(*f);
  const std::string md = RenderMarkdown(FullSet("m", false), o);
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  const size_t at = md.find("## Funnel: stories260k-decide\n");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_LT(at, md.find("## Summary"));
  EXPECT_NE(md.find("> **Chosen: stories260K-Q4_0.**"), std::string::npos);
  EXPECT_NE(md.find("4 configurations: 1 left at screen, 1 at measure, 1 finalist, 1 chosen.\n"),
            std::string::npos);
  EXPECT_NE(md.find("| configuration | outcome | why |\n|---|---|---|\n"
                    "| F32 &lt;big&gt; \\| x | left at screen | fails max_memory: max_host_usage "
                    "13.68 MiB \\[13.41, 13.80\\] (max_memory_usage_256) at 99.94% &gt; 13.30 "
                    "MiB |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| stories260K-Q4_0 | chosen | soak_256_256_1: 412 requests"),
            std::string::npos);
  EXPECT_NE(md.find("| stage | left here | cells | device time | share |\n"
                    "|---|---:|---:|---:|---:|\n"
                    "| screen | 1 | 7 | 53.2 s | 27% |\n"
                    "| measure | 1 | 6 | 85.6 s | 43% |\n"
                    "| stabilize | 0 | 2 | 61.2 s | 31% |\n"
                    "| total | 2 | 15 | 3 min 20 s | 100% |\n"),
            std::string::npos)
      << md;
}

TEST(HorizontalBarChartMarkup, BarsFromZeroWithLabels) {
  ChartSpec spec;
  spec.id = "t";
  spec.title = "time";
  spec.x.title = "seconds";
  const std::string svg = HorizontalBarChart(
      spec,
      {{"screen", 40, "40 s"}, {"measure", 80, "80 s"}, {"a <long> stage name", 0, "not run"}});
  EXPECT_NE(svg.find("data-kind=\"hbar\""), std::string::npos);
  EXPECT_EQ(Count(svg, "<g class=\"row\""), 3u);
  const std::vector<double> x = Attr(svg, "rect class=\"bar\"", "x");
  const std::vector<double> w = Attr(svg, "rect class=\"bar\"", "width");
  ASSERT_EQ(w.size(), 2u);  // no bar for 0
  EXPECT_DOUBLE_EQ(x[0], x[1]);  // both from 0
  EXPECT_NEAR(w[1] / w[0], 2, 1e-3);
  EXPECT_NE(svg.find("data-row=\"a &lt;long&gt; stage name\""), std::string::npos);
  EXPECT_NE(svg.find(">not run</text>"), std::string::npos);
  EXPECT_NE(svg.find(">seconds</text>"), std::string::npos);
  const std::vector<double> heights = Attr(svg, "svg", "height");
  ASSERT_EQ(heights.size(), 1u);
  EXPECT_DOUBLE_EQ(heights[0], 36 + 3 * 28 + 46);
}

}  // namespace
}  // namespace pipette::report
