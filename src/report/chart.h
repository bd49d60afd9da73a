// SVG charts for reports (DESIGN.md 6 "Reports"): scales with nice ticks, axes, legends and the
// chart kinds a report draws: lines with points and 95% CI error bars, grouped bars with CI
// whiskers, a scatter with its Pareto front highlighted, and compact horizontal bars.
//
// Every chart is one self-contained <svg> element (inline styles, no scripts, no fonts or images
// from anywhere), deterministic for the same input, so a report works offline and diffs cleanly.
// Colours come from the Okabe-Ito palette (safe for the common colour-vision deficiencies). Every
// text from the caller (titles, series and category names) is XML-escaped.
//
// What the chart elements are, for tests and for readers of the markup:
//   <svg class="chart" data-kind="line|bar|hbar|scatter"> one chart
//   <circle class="point" data-x=".." data-y="..">      one data point (line and scatter charts);
//                                                       a Pareto-front point also has class "front"
//   <rect class="bar" data-value="..">                  one bar
//   <path class="ci">                                   one 95% CI error bar or whisker
//   <polyline class="line"> / <polyline class="front">  a series' line / the Pareto front
//   <g class="legend">                                  the legend (one entry per series)
// Non-finite values are not drawn. Everything here is a pure function; thread-safe.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pipette::report {

// `text` with & < > " ' replaced by entities, and control characters that XML 1.0 forbids
// (all below U+0020 except tab, LF and CR) replaced by U+FFFD, so that any name is safe both as
// element text and inside a double- or single-quoted attribute.
std::string XmlEscape(std::string_view text);

// The fixed colour-blind-safe palette (Okabe & Ito 2008) without its yellow, which is unreadable
// on white: blue, orange, bluish green, vermillion, reddish purple, sky blue, black. Series i
// gets Color(i); past the seventh series the colours repeat (and lines are dashed).
std::string_view Color(size_t index);
inline constexpr size_t kPaletteSize = 7;

// How tick labels are written.
enum class Units {
  kPlain,  // 0.25, 1.5, 1200
  kSi,     // decimal prefixes per value: 200, 1k, 1.2k, 3.5M, 2G (throughputs, token counts)
  kBytes,  // binary units, one unit per axis: 0 B .. 512 B, 0.5 MiB, 1 GiB (memory, file sizes)
};

// The 1-2-5 step (1, 2 or 5 times a power of ten) that cuts `span` into about `target` intervals
// (d3's tickIncrement rule: the step whose count is nearest target on a log scale). 1 when span
// is 0 or not finite. REQUIRES: target >= 1.
double NiceStep(double span, int target);

// A closed interval of data values.
struct Domain {
  double lo = 0;
  double hi = 1;
};

// The smallest and largest finite value of `values` widened so that the data does not touch the
// plot's edges: by `pad` times the span on each side (linear), or by the factor (hi/lo)^pad
// (log). `include_zero` extends a linear domain to 0 first (bars, throughputs). A single value or
// equal values give a domain around it: [v - |v|/2, v + |v|/2] linear ([0, 1] for 0; for log,
// [v/2, 2v]). No finite value gives [0, 1] ([1, 10] for log). A log domain ignores values <= 0.
Domain DataDomain(const std::vector<double>& values, double pad, bool include_zero, bool log);

// Maps data values (the domain) to pixels (the range), linearly or on a log10 axis.
class Scale {
 public:
  // REQUIRES for Log: 0 < domain.lo (a non-positive lo is replaced by hi / 1000, or 1).
  // A zero-width domain is widened as DataDomain does for one value, so Map never divides by 0.
  static Scale Linear(Domain domain, double r0, double r1, Units units = Units::kPlain);
  static Scale Log(Domain domain, double r0, double r1, Units units = Units::kPlain);

  // The scale with its domain extended to the nearest ticks outside it (linear: multiples of the
  // tick step for about `target` ticks; log: the decades, or the 1-2-5 ticks, around it), so the
  // axis starts and ends on a labelled tick.
  Scale Nice(int target = 6) const;

  // Uses exactly these ticks (sorted, those inside the domain kept) instead of computed ones;
  // e.g. the prompt lengths a context-scaling chart measured.
  Scale WithTicks(std::vector<double> ticks) const;

  // Pixel position of `v`. Linear: r0 + (v - lo) / (hi - lo) * (r1 - r0); log: the same on
  // log10. Values outside the domain map outside the range; v <= 0 on a log scale maps to r0.
  double Map(double v) const;

  // Tick values inside the domain, ascending. Linear: multiples of NiceStep (in bytes units a
  // step of 1-2-5 times the axis unit: 0.5 MiB, not 524288). Log: each decade when the domain
  // spans 3 or more (thinned to about `target`), else 1, 2 and 5 times each power of ten, else
  // (less than a factor of about 2.5) linear ticks. Explicit ticks when WithTicks gave some.
  std::vector<double> Ticks(int target = 6) const;

  // The label of tick `v` among Ticks(target): Units::kSi "1.2k", kBytes "1.5 MiB", kPlain
  // "0.25"; as many decimals as the tick step needs, trailing zeros dropped.
  std::string Label(double v, int target = 6) const;

  Domain domain() const { return domain_; }
  bool log() const { return log_; }

 private:
  double Step(int target) const;  // linear tick step (data units)
  double ByteUnit() const;        // kBytes: 1024^k for the axis' largest |value|

  Domain domain_;
  double r0_ = 0, r1_ = 1;
  bool log_ = false;
  Units units_ = Units::kPlain;
  std::vector<double> explicit_ticks_;
};

// A value for people with SI prefixes above 1000: "0", "950", "1.2k", "3.46M" with `decimals`
// digits after the point at the prefix's scale, trailing zeros dropped.
std::string FormatSi(double v, int decimals);
// Bytes in binary units: "512 B", "1.5 KiB", "20 MiB", "1.25 GiB" (3 significant digits at most
// above 1 KiB, trailing zeros dropped).
std::string FormatBytes(double bytes);

// One axis of a chart.
struct Axis {
  std::string title;  // e.g. "decode throughput (tokens/s)"
  Units units = Units::kPlain;
  bool log = false;           // log10 mapping (positive data only; falls back to linear)
  bool include_zero = false;  // start a linear axis at 0
  std::vector<double> ticks;  // explicit ticks, inside the axis' domain; empty: computed
};

// Plot margins in pixels; the legend takes `legend_width` on the right when a chart has one.
struct Margins {
  double left = 76, right = 16, top = 36, bottom = 52;
  double legend_width = 210;
};

struct ChartSpec {
  std::string title;
  // Series (line and bar charts) and points (scatter) with these names are drawn in grey with
  // class "excluded": the configurations that fail a report's limits stay visible but recede.
  std::set<std::string> muted;
  // Horizontal reference lines (line and bar charts), e.g. a limit: dashed, labelled, class
  // "limit", inside the y domain.
  struct ReferenceLine {
    double y = 0;
    std::string label;  // e.g. "limit 11.5 MiB"
  };
  std::vector<ReferenceLine> y_lines;
  std::string id;  // the svg's id attribute (letters, digits, '-' and '_'; others dropped)
  double width = 760, height = 360;
  Margins margins;
  Axis x, y;
};

// The plot area of `spec` in pixels: x from left to right, y from top (max) to bottom (min).
struct PlotArea {
  double left, right, top, bottom;
};
PlotArea Plot(const ChartSpec& spec, bool legend);

// --- line chart: one polyline per series, a point per value, 95% CI error bars -----------------
struct LinePoint {
  double x = 0, y = 0;
  std::optional<double> low, high;  // 95% CI of y; a bar is drawn when both are finite
  std::string note;                 // tooltip text (e.g. the benchmark id); optional
};
struct LineSeries {
  std::string name;
  std::vector<LinePoint> points;  // drawn in x order
};
// The y domain covers the CI ends as well as the points. A legend when there are >= 1 series.
std::string LineChart(const ChartSpec& spec, const std::vector<LineSeries>& series);

// --- grouped bar chart: categories along x, one bar per series in each, CI whiskers ------------
struct BarValue {
  double value = 0;
  std::optional<double> low, high;  // 95% CI; a whisker is drawn when both are finite
};
struct BarGroup {
  std::string name;                          // the category label under the group
  std::vector<std::optional<BarValue>> bars;  // one per series (by index); nullopt: no bar
  bool muted = false;  // every bar of the group grey, class "excluded" (fails the limits)
};
// Each group gets an equal band of the plot's width; 80% of it holds the bars side by side (one
// slot per series, so bar k of every group is at the same offset). Bars start at 0 (the y axis
// always includes 0). `series` names the legend entries.
std::string BarChart(const ChartSpec& spec, const std::vector<std::string>& series,
                     const std::vector<BarGroup>& groups);

// --- horizontal bars: one labelled row per value (e.g. device time per funnel stage) ----------
struct HBar {
  std::string name;   // the row's label, left of its bar
  double value = 0;   // the bar's length in x units; not > 0 or not finite: no bar drawn
  std::string label;  // text right of the bar's end, e.g. "53.2 s, 7 cells"
};
// Rows of 28 pixels (the spec's height is what the rows, the title and the x axis need; the left
// margin widens for long names, the right one for the end labels); x from 0 with ticks, vertical
// grid lines and spec.x.title below; row i in Color(i). Each bar is <rect class="bar"
// data-value=".."> inside <g class="row" data-row="NAME">.
std::string HorizontalBarChart(const ChartSpec& spec, const std::vector<HBar>& bars);

// --- scatter with a Pareto front -------------------------------------------------------------
struct ScatterPoint {
  std::string name;
  double x = 0, y = 0;
  bool on_front = false;  // drawn filled and larger, and joined by the front line
  // 95% CIs of x and y: horizontal and vertical error bars (class "ci") where both ends are finite.
  std::optional<double> x_low{}, x_high{}, y_low{}, y_high{};
};
// Every point labelled with its name; the front points joined in x order by a polyline. The
// domains cover the error bars. Muted points (ChartSpec::muted) are grey, never on the front.
std::string ParetoScatter(const ChartSpec& spec, const std::vector<ScatterPoint>& points);

}  // namespace pipette::report
