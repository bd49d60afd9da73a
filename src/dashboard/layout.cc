#include "dashboard/layout.h"

#include "dashboard/html.h"

namespace pipette::dashboard {
namespace {

constexpr std::string_view kCss = R"(*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;
padding:12px 20px;color:#1b1b1b;background:#fff;line-height:1.45}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2em 1.2em;border-bottom:1px solid #ddd;
padding-bottom:.4em}header .brand{font-weight:700;color:#1b1b1b;text-decoration:none}
nav{display:flex;flex-wrap:wrap;gap:0 .9em}nav a{color:#0a5ca8;text-decoration:none}nav a.active{font-weight:700;color:#1b1b1b}
h1{font-size:1.45em;margin:.5em 0 .3em}h2{font-size:1.15em;margin-top:1.4em;border-bottom:1px solid #eee}
a{color:#0a5ca8}.meta{color:#555;margin:.2em 0}.empty{color:#555;font-style:italic}
.notice{background:#fff6e0;border-left:4px solid #E69F00;padding:.5em .8em;margin:.8em 0}
svg.chart{width:100%;max-width:900px;height:auto;display:block;margin:.6em 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;margin:.5em 0;font-size:.88em}
th,td{border:1px solid #d5d5d5;padding:3px 7px;text-align:left;vertical-align:top;white-space:nowrap}
th{background:#f3f3f3}th a{color:inherit}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:12em}td.words{white-space:normal}
tr:nth-child(even) td{background:#fafafa}.noisy{color:#D55E00;font-weight:700}
.mismatch{color:#D55E00}.state-done{color:#009E73}.state-failed,.state-expired{color:#D55E00}
.state-leased{color:#0072B2}form.filters{display:flex;flex-wrap:wrap;gap:.4em .8em;align-items:flex-end;
margin:.6em 0;padding:.5em;background:#f7f7f7;border:1px solid #e3e3e3}
form.filters label{display:flex;flex-direction:column;font-size:.8em;color:#444}
form.filters input,form.filters select{font-size:1rem;padding:2px 4px;width:9.5em;max-width:100%}
form.filters button{font-size:1rem;padding:3px 12px}
.bar{display:inline-flex;width:12em;max-width:50vw;height:.9em;background:#eee;vertical-align:middle;
border-radius:2px;overflow:hidden}.bar span{display:block;height:100%}.bar .done{background:#009E73}
.bar .leased{background:#56B4E9}.bar .failed,.bar .expired{background:#D55E00}
.pager{margin:.8em 0}.pager a{margin-right:1em}
code,.mono{font-family:ui-monospace,monospace;font-size:.92em;overflow-wrap:anywhere}
dl.kv{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15em 1em;margin:.4em 0}
dl.kv dt{color:#555;overflow-wrap:anywhere}dl.kv dd{margin:0;overflow-wrap:anywhere}
@media (max-width:600px){body{padding:8px 10px}h1{font-size:1.2em}table{font-size:.8em}
dl.kv{grid-template-columns:minmax(0,1fr)}dl.kv dd{margin-bottom:.3em}}
)";

struct NavItem {
  const char* key;
  const char* href;
  const char* text;
};
constexpr NavItem kNav[] = {{"leaderboard", "/", "Leaderboard"},
                            {"scaling", "/scaling", "Scaling"},
                            {"quality", "/quality", "Quality"},
                            {"devices", "/devices", "Devices"},
                            {"fleet", "/fleet", "Fleet"}};

}  // namespace

std::string_view Css() { return kCss; }

std::string Layout(const std::string& title, const std::string& active, const std::string& body) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      Esc(title) +
      " - pipette</title>\n<link rel=\"stylesheet\" href=\"/static/dashboard.css\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n</head>\n<body>\n<header><a class=\"brand\" "
      "href=\"/\">pipette fleet</a><nav>";
  for (const NavItem& item : kNav) {
    out += "<a href=\"" + std::string(item.href) + "\"" +
           (active == item.key ? " class=\"active\"" : "") + ">" + item.text + "</a>";
  }
  out += "</nav></header>\n<main>\n<h1>" + Esc(title) + "</h1>\n" + body +
         "</main>\n</body>\n</html>\n";
  return out;
}

std::string ScrollTable(const std::string& table_inner, const std::string& css_class) {
  return "<div class=\"scroll\"><table" +
         (css_class.empty() ? std::string() : " class=\"" + css_class + "\"") + ">" + table_inner +
         "</table></div>\n";
}

std::string ScrollChart(const std::string& svg) {
  return "<div class=\"scroll\">" + svg + "</div>\n";
}

}  // namespace pipette::dashboard
