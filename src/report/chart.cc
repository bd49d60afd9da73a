#include "report/chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace pipette::report {
namespace {

constexpr double kEps = 1e-9;
constexpr double kLegendRow = 18;   // from one legend entry to the next
constexpr double kLegendLine = 14;  // from one line of a wrapped legend entry to the next
constexpr const char* kMutedColor = "#b8b8b8";

// Drops trailing zeros after a decimal point, and the point; "-0" becomes "0".
std::string Trim(std::string s) {
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string Fixed(double v, int decimals) {
  return Trim(fmt::format("{:.{}f}", v, std::clamp(decimals, 0, 9)));
}

// Digits after the point that a tick step (in display units) needs: 0.2 -> 1, 0.05 -> 2, 5 -> 0.
int DecimalsForStep(double step) {
  if (!(step > 0) || !std::isfinite(step)) return 0;
  return std::max(0, static_cast<int>(-std::floor(std::log10(step) + kEps)));
}

// A pixel coordinate as written into the SVG.
std::string Px(double v) { return fmt::format("{:.1f}", v); }

// Adds "x,y" to an SVG points list.
void AppendPoint(std::string& points, double x, double y) {
  if (!points.empty()) points += ' ';
  points += Px(x);
  points += ',';
  points += Px(y);
}

// A data value as written into data-* attributes: shortest exact form.
std::string Num(double v) { return fmt::format("{}", v); }

// Only [A-Za-z0-9_-] survive in an id.
std::string SafeId(const std::string& id) {
  std::string out;
  for (char c : id) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_') {
      out += c;
    }
  }
  return out;
}

// Text longer than `max` characters is cut, with an ellipsis (UTF-8 aware: never splits a
// multi-byte character).
std::string Shorten(const std::string& s, size_t max) {
  size_t chars = 0, cut = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max - 1) cut = i;
    ++chars;
  }
  if (chars <= max || cut == std::string::npos) return s;
  return s.substr(0, cut) + "\u2026";
}

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// `name` in lines of at most `max` characters, broken at spaces; a word longer than a line is
// broken inside (UTF-8 aware). Every character is kept but the spaces broken at.
std::vector<std::string> LegendLines(const std::string& name, size_t max) {
  std::vector<std::string> lines(1);
  size_t length = 0;  // of lines.back(), in characters
  std::stringstream words(name);
  std::string word;
  while (words >> word) {
    size_t n = Utf8Length(word);
    if (length > 0 && length + 1 + n <= max) {
      lines.back() += " " + word;
      length += 1 + n;
      continue;
    }
    if (length > 0) {
      lines.emplace_back();
      length = 0;
    }
    while (n > max) {  // a word wider than a line: whole lines of it
      size_t cut = 0;  // where character max + 1 starts
      for (size_t chars = 0; cut < word.size(); ++cut) {
        if ((static_cast<unsigned char>(word[cut]) & 0xC0) != 0x80 && chars++ == max) break;
      }
      lines.back() = word.substr(0, cut);
      lines.emplace_back();
      word = word.substr(cut);
      n -= max;
    }
    lines.back() = word;
    length = n;
  }
  return lines;
}

// Characters of legend text that fit a line of the legend's column (6.6 pixels each).
size_t LegendChars(const ChartSpec& spec) {
  return static_cast<size_t>(std::max(6.0, (spec.margins.legend_width - 40) / 6.6));
}

bool Finite(const std::optional<double>& v) { return v && std::isfinite(*v); }

// Linear ticks: k * step for every integer k with k * step in [lo, hi]. Steps below 1 are exact
// fractions 1/inv (0.2 = 1/5), so ticks are computed as k / inv to avoid 0.30000000000000004.
std::vector<double> LinearTicks(double lo, double hi, double step) {
  std::vector<double> out;
  if (!(step > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const double inv = std::round(1 / step);
  const bool fraction = step < 1 && inv > 0 && std::abs(inv * step - 1) < 1e-9;
  const double k0 = std::ceil(lo / step - kEps), k1 = std::floor(hi / step + kEps);
  if (k1 - k0 > 1000) return out;
  for (double k = k0; k <= k1; ++k) {
    const double t = fraction ? k / inv : k * step;
    out.push_back(t == 0 ? 0.0 : t);  // no -0
  }
  return out;
}

const char* const kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};

int ByteUnitIndex(double max_abs) {
  int k = 0;
  while (k < 4 && max_abs >= std::pow(1024.0, k + 1)) ++k;
  return k;
}

// How a log domain is ticked.
enum class LogMode { kDecades, kOneTwoFive, kLinear };
LogMode ModeOf(Domain d) {
  const double ratio = d.hi / d.lo;
  if (std::log10(ratio) >= 3 - kEps) return LogMode::kDecades;
  if (ratio >= 2.5) return LogMode::kOneTwoFive;
  return LogMode::kLinear;
}

std::vector<double> OneTwoFive(double lo, double hi) {
  std::vector<double> out;
  const int k0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int k1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int k = k0; k <= k1; ++k) {
    for (double m : {1.0, 2.0, 5.0}) out.push_back(m * std::pow(10.0, k));
  }
  return out;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\uFFFD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string_view Color(size_t index) {
  static constexpr std::array<std::string_view, kPaletteSize> kOkabeIto = {
      "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};
  return kOkabeIto[index % kPaletteSize];
}

double NiceStep(double span, int target) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(1, target);
  const double power = std::floor(std::log10(raw));
  const double base = std::pow(10.0, power);
  const double err = raw / base;
  double factor = 1;
  if (err >= std::sqrt(50.0)) {
    factor = 10;
  } else if (err >= std::sqrt(10.0)) {
    factor = 5;
  } else if (err >= std::sqrt(2.0)) {
    factor = 2;
  }
  // 10^-1 * 2 is 0.2000000000000000111; divide instead so small steps are the nearest doubles.
  return power < 0 ? factor / std::pow(10.0, -power) : factor * base;
}

Domain DataDomain(const std::vector<double>& values, double pad, bool include_zero, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return log ? Domain{1, 10} : Domain{0, 1};
  if (log) {
    if (lo == hi) return {lo / 2, hi * 2};
    const double f = std::pow(hi / lo, pad);
    return {lo / f, hi * f};
  }
  const bool nonnegative = lo >= 0;
  if (include_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (lo == hi) {
    if (lo == 0) return {0, 1};
    const double half = std::abs(lo) / 2;
    return {lo - half, hi + half};
  }
  const double span = hi - lo;
  // A zero baseline stays at zero: bars and throughputs do not go below it.
  if (!(include_zero && nonnegative && lo == 0)) lo -= pad * span;
  hi += pad * span;
  return {lo, hi};
}

Scale Scale::Linear(Domain domain, double r0, double r1, Units units) {
  Scale s;
  if (!std::isfinite(domain.lo) || !std::isfinite(domain.hi)) domain = {0, 1};
  if (domain.lo > domain.hi) std::swap(domain.lo, domain.hi);
  if (domain.lo == domain.hi) domain = DataDomain({domain.lo}, 0, false, false);
  s.domain_ = domain;
  s.r0_ = r0;
  s.r1_ = r1;
  s.units_ = units;
  return s;
}

Scale Scale::Log(Domain domain, double r0, double r1, Units units) {
  Scale s;
  if (!std::isfinite(domain.hi) || domain.hi <= 0) domain = {1, 10};
  if (!std::isfinite(domain.lo) || domain.lo <= 0) domain.lo = domain.hi > 1 ? domain.hi / 1000 : 1;
  if (domain.lo > domain.hi) std::swap(domain.lo, domain.hi);
  if (domain.lo == domain.hi) domain = {domain.lo / 2, domain.hi * 2};
  s.domain_ = domain;
  s.r0_ = r0;
  s.r1_ = r1;
  s.log_ = true;
  s.units_ = units;
  return s;
}

double Scale::ByteUnit() const {
  return std::pow(1024.0, ByteUnitIndex(std::max(std::abs(domain_.lo), std::abs(domain_.hi))));
}

double Scale::Step(int target) const {
  const double unit = units_ == Units::kBytes ? ByteUnit() : 1;
  return NiceStep((domain_.hi - domain_.lo) / unit, target) * unit;
}

Scale Scale::Nice(int target) const {
  Scale s = *this;
  if (!explicit_ticks_.empty()) return s;
  if (log_ && ModeOf(domain_) != LogMode::kLinear) {
    if (ModeOf(domain_) == LogMode::kDecades) {
      s.domain_ = {std::pow(10.0, std::floor(std::log10(domain_.lo) + kEps)),
                   std::pow(10.0, std::ceil(std::log10(domain_.hi) - kEps))};
    } else {
      const std::vector<double> c = OneTwoFive(domain_.lo, domain_.hi);
      double lo = domain_.lo, hi = domain_.hi;
      for (double v : c) {
        if (v <= domain_.lo * (1 + kEps)) lo = v;
      }
      for (auto it = c.rbegin(); it != c.rend(); ++it) {
        if (*it >= domain_.hi * (1 - kEps)) hi = *it;
      }
      s.domain_ = {lo, hi};
    }
    return s;
  }
  // Extending the domain can change the step (d3's nice() loop): repeat until it holds.
  for (int i = 0; i < 10; ++i) {
    const double step = s.Step(target);
    double lo = std::floor(s.domain_.lo / step + kEps) * step;
    const double hi = std::ceil(s.domain_.hi / step - kEps) * step;
    if (log_ && lo <= 0) lo = s.domain_.lo;
    const Domain next = {lo, hi > lo ? hi : s.domain_.hi};
    const bool same = next.lo == s.domain_.lo && next.hi == s.domain_.hi;
    s.domain_ = next;
    if (same) break;
  }
  return s;
}

Scale Scale::WithTicks(std::vector<double> ticks) const {
  Scale s = *this;
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  s.explicit_ticks_.clear();
  for (double t : ticks) {
    if (std::isfinite(t) && t >= domain_.lo - kEps * std::abs(domain_.lo) &&
        t <= domain_.hi + kEps * std::abs(domain_.hi) && (!log_ || t > 0)) {
      s.explicit_ticks_.push_back(t);
    }
  }
  return s;
}

double Scale::Map(double v) const {
  if (log_) {
    if (!(v > 0)) return r0_;
    const double l0 = std::log10(domain_.lo), l1 = std::log10(domain_.hi);
    return r0_ + (std::log10(v) - l0) / (l1 - l0) * (r1_ - r0_);
  }
  return r0_ + (v - domain_.lo) / (domain_.hi - domain_.lo) * (r1_ - r0_);
}

std::vector<double> Scale::Ticks(int target) const {
  if (!explicit_ticks_.empty()) return explicit_ticks_;
  const double lo = domain_.lo, hi = domain_.hi;
  if (!log_ || ModeOf(domain_) == LogMode::kLinear) return LinearTicks(lo, hi, Step(target));
  std::vector<double> out;
  if (ModeOf(domain_) == LogMode::kDecades) {
    const int k0 = static_cast<int>(std::ceil(std::log10(lo) - kEps));
    const int k1 = static_cast<int>(std::floor(std::log10(hi) + kEps));
    const int every = std::max(1, static_cast<int>(std::ceil((k1 - k0 + 1) / (1.5 * target))));
    for (int k = k0; k <= k1; k += every) out.push_back(std::pow(10.0, k));
    return out;
  }
  for (double v : OneTwoFive(lo, hi)) {
    if (v >= lo * (1 - kEps) && v <= hi * (1 + kEps)) out.push_back(v);
  }
  return out;
}

std::string FormatSi(double v, int decimals) {
  static constexpr const char* kPrefix[] = {"", "k", "M", "G", "T", "P"};
  if (!std::isfinite(v)) return "-";
  int e = 0;
  while (e < 5 && std::abs(v) >= std::pow(1000.0, e + 1) * (1 - 1e-12)) ++e;
  return Fixed(v / std::pow(1000.0, e), decimals) + kPrefix[e];
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  const int k = ByteUnitIndex(std::abs(bytes));
  const double v = bytes / std::pow(1024.0, k);
  if (k == 0) return Fixed(v, 0) + " B";
  const int decimals = std::abs(v) >= 100 ? 0 : std::abs(v) >= 10 ? 1 : 2;
  return Fixed(v, decimals) + " " + kByteUnits[k];
}

std::string Scale::Label(double v, int target) const {
  const bool linear_ticks = explicit_ticks_.empty() && (!log_ || ModeOf(domain_) == LogMode::kLinear);
  // The step the label must resolve: the tick step, or (log and explicit ticks) the value's own
  // leading digit, at most 3 decimals.
  auto step_at = [&](double scale) {
    if (linear_ticks) return Step(target) / scale;
    if (v == 0) return 1.0;
    if (!explicit_ticks_.empty()) {
      // Explicit ticks are shown as they are (up to 3 decimals).
      return 0.001;
    }
    return std::pow(10.0, std::floor(std::log10(std::abs(v) / scale) + kEps));
  };
  if (units_ == Units::kBytes) {
    const int k = ByteUnitIndex(std::max(std::abs(domain_.lo), std::abs(domain_.hi)));
    const double unit = std::pow(1024.0, k);
    return Fixed(v / unit, DecimalsForStep(step_at(unit))) + " " + kByteUnits[k];
  }
  if (units_ == Units::kSi) {
    int e = 0;
    while (e < 5 && std::abs(v) >= std::pow(1000.0, e + 1) * (1 - 1e-12)) ++e;
    return FormatSi(v, DecimalsForStep(step_at(std::pow(1000.0, e))));
  }
  return Fixed(v, DecimalsForStep(step_at(1)));
}

PlotArea Plot(const ChartSpec& spec, bool legend) {
  const Margins& m = spec.margins;
  PlotArea p;
  p.left = m.left;
  p.right = spec.width - m.right - (legend ? m.legend_width : 0);
  p.top = m.top;
  p.bottom = spec.height - m.bottom;
  if (p.right < p.left + 10) p.right = p.left + 10;
  if (p.bottom < p.top + 10) p.bottom = p.top + 10;
  return p;
}

namespace {

// The pieces every chart shares: the frame, axes with ticks and grid, titles, the legend.
class Canvas {
 public:
  Canvas(const ChartSpec& spec, const char* kind, bool legend) : spec_(spec), plot_(Plot(spec, legend)) {
    svg_ = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-kind=\"{}\"{} "
        "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<title>{}</title>\n"
        "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
        kind, spec.id.empty() ? "" : " id=\"" + SafeId(spec.id) + "\"", Num(spec.width),
        Num(spec.height), Num(spec.width), Num(spec.height), XmlEscape(spec.title),
        XmlEscape(spec.title), Num(spec.width), Num(spec.height));
    if (!spec.title.empty()) {
      svg_ += fmt::format(
          "<text class=\"title\" x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
          Px(plot_.left), XmlEscape(spec.title));
    }
  }

  const PlotArea& plot() const { return plot_; }
  std::string& svg() { return svg_; }

  // Horizontal grid lines and labels of the y axis, the axis line and its title.
  void YAxis(const Scale& y, int target = 6) {
    svg_ += "<g class=\"axis y\">\n";
    for (double t : y.Ticks(target)) {
      const double py = y.Map(t);
      svg_ += fmt::format(
          "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>"
          "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n",
          Px(plot_.left), Px(plot_.right), Px(py), Px(py), Px(plot_.left - 6), Px(py + 4),
          XmlEscape(y.Label(t, target)));
    }
    svg_ += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>\n", Px(plot_.left),
        Px(plot_.top), Px(plot_.bottom));
    if (!spec_.y.title.empty()) {
      const double cy = (plot_.top + plot_.bottom) / 2;
      svg_ += fmt::format(
          "<text class=\"axis-title\" x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" "
          "text-anchor=\"middle\" fill=\"#333\">{1}</text>\n",
          Px(cy), XmlEscape(spec_.y.title));
    }
    svg_ += "</g>\n";
  }

  // Tick marks and labels of a continuous x axis, the axis line and its title.
  void XAxis(const Scale& x, int target = 6) {
    svg_ += "<g class=\"axis x\">\n";
    for (double t : x.Ticks(target)) {
      const double px = x.Map(t);
      svg_ += fmt::format(
          "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>"
          "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#333\">{4}</text>\n",
          Px(px), Px(plot_.bottom), Px(plot_.bottom + 5), Px(plot_.bottom + 18),
          XmlEscape(x.Label(t, target)));
    }
    BottomLine();
    XTitle(plot_.bottom + 38);
    svg_ += "</g>\n";
  }

  void BottomLine() {
    svg_ += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#333\"/>\n",
                        Px(plot_.left), Px(plot_.right), Px(plot_.bottom));
  }

  void XTitle(double y) {
    if (spec_.x.title.empty()) return;
    svg_ += fmt::format(
        "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
        Px((plot_.left + plot_.right) / 2), Px(y), XmlEscape(spec_.x.title));
  }

  // One entry per name: a swatch (a line with a dot, or a square) and the name, wrapped onto as
  // many lines as it needs (LegendLines), never cut.
  void Legend(const std::vector<std::string>& names, bool squares) {
    svg_ += "<g class=\"legend\">\n";
    const double x = plot_.right + 14;
    double y = plot_.top + 6;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string_view c = SeriesColor(i, names[i]);
      if (squares) {
        svg_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>", Px(x),
                            Px(y - 6), c);
      } else {
        svg_ += fmt::format(
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
            "<circle cx=\"{5}\" cy=\"{2}\" r=\"3.5\" fill=\"{3}\"/>",
            Px(x), Px(x + 18), Px(y), c, Dash(i), Px(x + 9));
      }
      const std::vector<std::string> lines = LegendLines(names[i], LegendChars(spec_));
      std::string text;
      for (size_t l = 0; l < lines.size(); ++l) {
        text += l == 0 ? XmlEscape(lines[l])
                       : fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", Px(x + 24),
                                     Px(kLegendLine), XmlEscape(lines[l]));
      }
      svg_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#222\">{}</text>\n", Px(x + 24),
                          Px(y + 4), text);
      y += kLegendRow + kLegendLine * static_cast<double>(lines.size() - 1);
    }
    svg_ += "</g>\n";
  }

  // A note in the middle of the plot (no data).
  void Note(const std::string& text) {
    svg_ += fmt::format(
        "<text class=\"note\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">{}</text>\n",
        Px((plot_.left + plot_.right) / 2), Px((plot_.top + plot_.bottom) / 2), XmlEscape(text));
  }

  // The reference lines of the spec (ChartSpec::y_lines) on scale `y`.
  void ReferenceLines(const Scale& y) {
    for (const ChartSpec::ReferenceLine& l : spec_.y_lines) {
      if (!std::isfinite(l.y)) continue;
      const double py = y.Map(l.y);
      svg_ += fmt::format(
          "<g class=\"limit\"><line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" "
          "stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
          "<text x=\"{1}\" y=\"{3}\" text-anchor=\"end\" font-size=\"11\" "
          "fill=\"#c0392b\">{4}</text></g>\n",
          Px(plot_.left), Px(plot_.right), Px(py), Px(py - 4), XmlEscape(l.label));
    }
  }

  // Series i's colour: grey when its name is muted (ChartSpec::muted).
  std::string_view SeriesColor(size_t i, const std::string& name) const {
    return spec_.muted.count(name) ? std::string_view(kMutedColor) : Color(i);
  }
  std::string SeriesClass(const std::string& name) const {
    return spec_.muted.count(name) ? " excluded" : "";
  }

  static std::string Dash(size_t series) {
    return series >= kPaletteSize ? " stroke-dasharray=\"5 3\"" : "";
  }

  // An error bar from `low` to `high` at x = px with caps `cap` wide on each side.
  static std::string CiPath(double px, double plow, double phigh, double cap,
                            std::string_view color) {
    return fmt::format(
        "<path class=\"ci\" d=\"M{0} {1}V{2}M{3} {1}H{4}M{3} {2}H{4}\" stroke=\"{5}\" "
        "stroke-width=\"1.5\" fill=\"none\"/>",
        Px(px), Px(plow), Px(phigh), Px(px - cap), Px(px + cap), color);
  }

  std::string Finish() { return svg_ + "</svg>\n"; }

 private:
  const ChartSpec& spec_;
  PlotArea plot_;
  std::string svg_;
};

// The spec with room for a legend of `names` (Canvas::Legend).
ChartSpec WithLegendRoom(ChartSpec spec, const std::vector<std::string>& names) {
  double need = spec.margins.top + 6 + 10;
  for (const std::string& name : names) {
    need += kLegendRow +
            kLegendLine * static_cast<double>(LegendLines(name, LegendChars(spec)).size() - 1);
  }
  spec.height = std::max(spec.height, need);
  return spec;
}

Scale XScale(const Axis& axis, const std::vector<double>& xs, const PlotArea& p) {
  bool log = axis.log;
  for (double v : xs) log = log && (v > 0 || !std::isfinite(v));
  std::vector<double> with_ticks = xs;
  if (!axis.ticks.empty()) with_ticks.insert(with_ticks.end(), axis.ticks.begin(), axis.ticks.end());
  const Domain d = DataDomain(axis.ticks.empty() ? xs : with_ticks, 0.05, axis.include_zero, log);
  Scale s = log ? Scale::Log(d, p.left, p.right, axis.units) : Scale::Linear(d, p.left, p.right, axis.units);
  return axis.ticks.empty() ? s.Nice() : s.WithTicks(axis.ticks);
}

Scale YScale(const Axis& axis, const std::vector<double>& ys, const PlotArea& p, bool zero) {
  bool log = axis.log && !zero;
  for (double v : ys) log = log && (v > 0 || !std::isfinite(v));
  std::vector<double> with_ticks = ys;  // explicit ticks are inside the domain, as on x
  with_ticks.insert(with_ticks.end(), axis.ticks.begin(), axis.ticks.end());
  const Domain d = DataDomain(with_ticks, 0.05, axis.include_zero || zero, log);
  Scale s = log ? Scale::Log(d, p.bottom, p.top, axis.units)
                : Scale::Linear(d, p.bottom, p.top, axis.units);
  return axis.ticks.empty() ? s.Nice() : s.WithTicks(axis.ticks);
}

// A value in a tooltip as the axis writes it, but in full: bytes in binary units, other
// values in fixed notation with four significant digits (10040, not 1.004e+04).
std::string TipValue(double v, Units units) {
  if (units == Units::kBytes) return FormatBytes(v);
  if (std::abs(v) >= 1e4 || v == 0) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

std::string Tip(const std::string& name, const std::string& note, double y,
                const std::optional<double>& low, const std::optional<double>& high,
                Units units) {
  std::string t = name;
  if (!note.empty()) t += " \u2014 " + note;
  t += ": " + TipValue(y, units);
  if (Finite(low) && Finite(high)) {
    t += " (95% CI " + TipValue(*low, units) + " .. " + TipValue(*high, units) + ")";
  }
  return XmlEscape(t);
}

}  // namespace

std::string LineChart(const ChartSpec& in, const std::vector<LineSeries>& series) {
  std::vector<std::string> names;
  for (const LineSeries& s : series) names.push_back(s.name);
  const ChartSpec spec = WithLegendRoom(in, names);
  Canvas c(spec, "line", !series.empty());
  std::vector<double> xs, ys;
  for (const LineSeries& s : series) {
    for (const LinePoint& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      xs.push_back(p.x);
      ys.push_back(p.y);
      if (Finite(p.low) && Finite(p.high)) {
        ys.push_back(*p.low);
        ys.push_back(*p.high);
      }
    }
  }
  for (const ChartSpec::ReferenceLine& l : spec.y_lines) ys.push_back(l.y);
  const PlotArea& plot = c.plot();
  const Scale x = XScale(spec.x, xs, plot);
  const Scale y = YScale(spec.y, ys, plot, false);
  c.YAxis(y);
  c.XAxis(x);
  if (xs.empty()) c.Note("no data");
  c.ReferenceLines(y);
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string_view color = c.SeriesColor(i, series[i].name);
    std::vector<LinePoint> pts;
    for (const LinePoint& p : series[i].points) {
      if (std::isfinite(p.x) && std::isfinite(p.y)) pts.push_back(p);
    }
    std::stable_sort(pts.begin(), pts.end(), [](const LinePoint& a, const LinePoint& b) { return a.x < b.x; });
    c.svg() += fmt::format("<g class=\"series{}\" data-series=\"{}\">\n",
                           c.SeriesClass(series[i].name), XmlEscape(series[i].name));
    if (pts.size() > 1) {
      std::string d;
      for (const LinePoint& p : pts) AppendPoint(d, x.Map(p.x), y.Map(p.y));
      c.svg() += fmt::format(
          "<polyline class=\"line\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", d,
          color, Canvas::Dash(i));
    }
    for (const LinePoint& p : pts) {
      const double px = x.Map(p.x), py = y.Map(p.y);
      if (Finite(p.low) && Finite(p.high)) {
        c.svg() += Canvas::CiPath(px, y.Map(*p.low), y.Map(*p.high), 4, color) + "\n";
      }
      c.svg() += fmt::format(
          "<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" data-x=\"{}\" "
          "data-y=\"{}\"><title>{}</title></circle>\n",
          Px(px), Px(py), color, Num(p.x), Num(p.y), Tip(series[i].name, p.note, p.y, p.low, p.high, spec.y.units));
    }
    c.svg() += "</g>\n";
  }
  if (!names.empty()) c.Legend(names, false);
  return c.Finish();
}

std::string BarChart(const ChartSpec& in, const std::vector<std::string>& series,
                     const std::vector<BarGroup>& groups) {
  ChartSpec spec = WithLegendRoom(in, series);
  // Category labels that do not fit their band are turned by 30 degrees; room is made below.
  const PlotArea first = Plot(spec, !series.empty());
  const double band_guess = (first.right - first.left) / std::max<double>(1, groups.size());
  size_t longest = 0;
  for (const BarGroup& g : groups) longest = std::max(longest, Utf8Length(g.name));
  const bool turn = static_cast<double>(std::min<size_t>(longest, 28)) * 6.6 > band_guess * 0.95;
  if (turn) {
    const double extra = std::min(28.0, static_cast<double>(longest)) * 6.6 * 0.5;
    spec.margins.bottom += extra;
    spec.height += extra;
  }
  Canvas c(spec, "bar", !series.empty());
  std::vector<double> ys;
  for (const BarGroup& g : groups) {
    for (const auto& b : g.bars) {
      if (!b || !std::isfinite(b->value)) continue;
      ys.push_back(b->value);
      if (Finite(b->low) && Finite(b->high)) {
        ys.push_back(*b->low);
        ys.push_back(*b->high);
      }
    }
  }
  const bool any_bar = !ys.empty();
  for (const ChartSpec::ReferenceLine& l : spec.y_lines) ys.push_back(l.y);
  const PlotArea& plot = c.plot();
  const Scale y = YScale(spec.y, ys, plot, true);
  c.YAxis(y);
  c.BottomLine();
  if (!any_bar) c.Note("no data");
  const double band = (plot.right - plot.left) / std::max<double>(1, groups.size());
  const double slots = std::max<double>(1, series.size());
  const double bar_w = band * 0.8 / slots;
  const double zero = y.Map(0);
  for (size_t g = 0; g < groups.size(); ++g) {
    const double gx = plot.left + band * static_cast<double>(g);
    const double cx = gx + band / 2;
    c.svg() += fmt::format("<g class=\"group\" data-group=\"{}\">\n", XmlEscape(groups[g].name));
    for (size_t i = 0; i < groups[g].bars.size() && i < std::max<size_t>(series.size(), 1); ++i) {
      const auto& b = groups[g].bars[i];
      if (!b || !std::isfinite(b->value)) continue;
      const double bx = gx + band * 0.1 + bar_w * static_cast<double>(i);
      const double py = y.Map(b->value);
      const std::string name = i < series.size() ? series[i] : std::string();
      c.svg() += fmt::format(
          "<rect class=\"bar{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "data-value=\"{}\"><title>{}</title></rect>\n",
          groups[g].muted ? " excluded" : c.SeriesClass(name), Px(bx), Px(std::min(py, zero)),
          Px(bar_w), Px(std::abs(zero - py)),
          groups[g].muted ? std::string_view(kMutedColor) : c.SeriesColor(i, name),
          Num(b->value), Tip(name, groups[g].name, b->value, b->low, b->high, spec.y.units));
      if (Finite(b->low) && Finite(b->high)) {
        c.svg() += Canvas::CiPath(bx + bar_w / 2, y.Map(*b->low), y.Map(*b->high),
                                  std::min(5.0, bar_w / 3), "#222222") + "\n";
      }
    }
    const std::string label = XmlEscape(Shorten(groups[g].name, 28));
    if (turn) {
      c.svg() += fmt::format(
          "<text class=\"category\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-30 {0} {1})\" "
          "text-anchor=\"end\" fill=\"#333\">{2}</text>\n",
          Px(cx), Px(plot.bottom + 14), label);
    } else {
      c.svg() += fmt::format(
          "<text class=\"category\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
          Px(cx), Px(plot.bottom + 18), label);
    }
    c.svg() += "</g>\n";
  }
  c.ReferenceLines(y);
  c.XTitle(spec.height - 10);
  if (!series.empty()) c.Legend(series, true);
  return c.Finish();
}

std::string HorizontalBarChart(const ChartSpec& in, const std::vector<HBar>& bars) {
  constexpr double kRow = 28, kCharWidth = 6.6;
  ChartSpec spec = in;
  size_t longest_name = 0, longest_label = 0;
  for (const HBar& b : bars) {
    longest_name = std::max(longest_name, Utf8Length(Shorten(b.name, 24)));
    longest_label = std::max(longest_label, Utf8Length(b.label));
  }
  // Room for the row names on the left and the end labels on the right: the plot keeps the rest.
  spec.margins.left = std::max(24.0, static_cast<double>(longest_name) * kCharWidth + 16);
  spec.margins.right = std::max(spec.margins.right,
                                static_cast<double>(longest_label) * kCharWidth + 14);
  spec.margins.bottom = spec.x.title.empty() ? 30 : 46;
  spec.height = spec.margins.top + kRow * static_cast<double>(std::max<size_t>(bars.size(), 1)) +
                spec.margins.bottom;
  Canvas c(spec, "hbar", false);
  const PlotArea& plot = c.plot();
  std::vector<double> xs;
  for (const HBar& b : bars) {
    if (std::isfinite(b.value) && b.value > 0) xs.push_back(b.value);
  }
  const Scale x =
      Scale::Linear(DataDomain(xs, 0, true, false), plot.left, plot.right, spec.x.units).Nice(5);
  c.svg() += "<g class=\"axis x\">\n";
  for (double t : x.Ticks(5)) {
    const double px = x.Map(t);
    c.svg() += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e3e3e3\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#333\">{4}</text>\n",
        Px(px), Px(plot.top), Px(plot.bottom), Px(plot.bottom + 16), XmlEscape(x.Label(t, 5)));
  }
  c.BottomLine();
  c.XTitle(plot.bottom + 34);
  c.svg() += "</g>\n";
  if (xs.empty()) c.Note("no data");
  const double zero = x.Map(0);
  for (size_t i = 0; i < bars.size(); ++i) {
    const HBar& b = bars[i];
    const double top = plot.top + kRow * static_cast<double>(i);
    const double mid = top + kRow / 2;
    c.svg() += fmt::format(
        "<g class=\"row\" data-row=\"{}\">\n<text class=\"category\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\" fill=\"#333\">{}</text>\n",
        XmlEscape(b.name), Px(plot.left - 8), Px(mid + 4), XmlEscape(Shorten(b.name, 24)));
    double end = zero;
    if (std::isfinite(b.value) && b.value > 0) {
      end = x.Map(b.value);
      c.svg() += fmt::format(
          "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "data-value=\"{}\"><title>{}</title></rect>\n",
          Px(zero), Px(top + 5), Px(std::max(1.0, end - zero)), Px(kRow - 10), Color(i),
          Num(b.value), XmlEscape(b.name + ": " + (b.label.empty() ? Num(b.value) : b.label)));
    }
    if (!b.label.empty()) {
      c.svg() += fmt::format(
          "<text class=\"value\" x=\"{}\" y=\"{}\" fill=\"#222\">{}</text>\n", Px(end + 6),
          Px(mid + 4), XmlEscape(b.label));
    }
    c.svg() += "</g>\n";
  }
  return c.Finish();
}

std::string ParetoScatter(const ChartSpec& spec, const std::vector<ScatterPoint>& points) {
  Canvas c(spec, "scatter", true);
  std::vector<double> xs, ys;
  for (const ScatterPoint& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    xs.push_back(p.x);
    ys.push_back(p.y);
    if (Finite(p.x_low) && Finite(p.x_high)) {
      xs.push_back(*p.x_low);
      xs.push_back(*p.x_high);
    }
    if (Finite(p.y_low) && Finite(p.y_high)) {
      ys.push_back(*p.y_low);
      ys.push_back(*p.y_high);
    }
  }
  const PlotArea& plot = c.plot();
  const Scale x = XScale(spec.x, xs, plot);
  const Scale y = YScale(spec.y, ys, plot, false);
  c.YAxis(y);
  c.XAxis(x);
  if (xs.empty()) c.Note("no data");
  const std::string_view front_color = Color(3), other_color = Color(0);
  const auto muted = [&](const ScatterPoint& p) { return spec.muted.count(p.name) > 0; };
  std::vector<const ScatterPoint*> front;
  for (const ScatterPoint& p : points) {
    if (p.on_front && !muted(p) && std::isfinite(p.x) && std::isfinite(p.y)) front.push_back(&p);
  }
  std::stable_sort(front.begin(), front.end(),
                   [](const ScatterPoint* a, const ScatterPoint* b) { return a->x < b->x; });
  if (front.size() > 1) {
    std::string d;
    for (const ScatterPoint* p : front) AppendPoint(d, x.Map(p->x), y.Map(p->y));
    c.svg() += fmt::format(
        "<polyline class=\"front\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "stroke-dasharray=\"6 3\"/>\n",
        d, front_color);
  }
  bool any_muted = false;
  for (const ScatterPoint& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const bool grey = muted(p);
    const bool on_front = p.on_front && !grey;
    any_muted = any_muted || grey;
    const double px = x.Map(p.x), py = y.Map(p.y);
    const std::string_view stroke = grey ? std::string_view(kMutedColor)
                                    : on_front ? front_color
                                               : other_color;
    if (Finite(p.y_low) && Finite(p.y_high)) {
      c.svg() += Canvas::CiPath(px, y.Map(*p.y_low), y.Map(*p.y_high), 4, stroke) + "\n";
    }
    if (Finite(p.x_low) && Finite(p.x_high)) {  // the same bar, lying down
      const double x0 = x.Map(*p.x_low), x1 = x.Map(*p.x_high);
      c.svg() += fmt::format(
          "<path class=\"ci\" d=\"M{0} {1}H{2}M{0} {3}V{4}M{2} {3}V{4}\" stroke=\"{5}\" "
          "stroke-width=\"1.5\" fill=\"none\"/>\n",
          Px(x0), Px(py), Px(x1), Px(py - 4), Px(py + 4), stroke);
    }
    const std::string tip = XmlEscape(fmt::format("{}: {:.4g}, {:.4g}{}", p.name, p.x, p.y,
                                                  grey       ? " (fails the limits)"
                                                  : on_front ? " (Pareto front)"
                                                             : ""));
    c.svg() += fmt::format(
        "<circle class=\"point{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"{}\" "
        "stroke-width=\"1.5\" data-x=\"{}\" data-y=\"{}\"><title>{}</title></circle>"
        "<text class=\"point-label\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\">{}</text>\n",
        grey ? " excluded" : on_front ? " front" : "", Px(px), Px(py), on_front ? "5.5" : "4",
        on_front ? front_color : "#ffffff", stroke, Num(p.x), Num(p.y), tip, Px(px + 8), Px(py - 7),
        grey ? "#888" : "#222", XmlEscape(Shorten(p.name, 32)));
  }
  // Legend: what the marks mean.
  const double lx = plot.right + 14;
  c.svg() += fmt::format(
      "<g class=\"legend\">\n"
      "<circle cx=\"{0}\" cy=\"{1}\" r=\"5.5\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\" "
      "fill=\"#222\">on the Pareto front</text>\n"
      "<circle cx=\"{0}\" cy=\"{5}\" r=\"4\" fill=\"#ffffff\" stroke=\"{6}\" stroke-width=\"1.5\"/>"
      "<text x=\"{3}\" y=\"{7}\" fill=\"#222\">dominated</text>\n",
      Px(lx + 6), Px(plot.top + 6), front_color, Px(lx + 18), Px(plot.top + 10),
      Px(plot.top + 6 + kLegendRow), other_color, Px(plot.top + 10 + kLegendRow));
  if (any_muted) {
    c.svg() += fmt::format(
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" fill=\"#ffffff\" stroke=\"{2}\" "
        "stroke-width=\"1.5\"/><text x=\"{3}\" y=\"{4}\" fill=\"#222\">fails the limits</text>\n",
        Px(lx + 6), Px(plot.top + 6 + 2 * kLegendRow), kMutedColor, Px(lx + 18),
        Px(plot.top + 10 + 2 * kLegendRow));
  }
  c.svg() += "</g>\n";
  return c.Finish();
}

}  // namespace pipette::report
