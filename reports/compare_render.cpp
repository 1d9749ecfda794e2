// Renderers of a compare report: console table, Markdown for PR comments (size-budgeted, GitHub
// caps a comment at 65,536 characters — GitHub's comment limit), a self-contained HTML page and
// JUnit XML.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "reports/compare.hpp"
#include "reports/escape.hpp"
#include "reports/render.hpp"

namespace gcb {

namespace {

std::string value_text(const std::optional<double>& v) { return v ? format_value(*v) : "-"; }

std::string change_text(const Comparison& c) {
  if (!c.change || !std::isfinite(*c.change)) return "-";
  const double change = *c.change == 0 ? 0.0 : *c.change;  // -0 reads "+0.00%"
  return fmt::format("{}{}", change >= 0 ? "+" : "", percent_text(change));
}

std::string p_text(const Comparison& c) { return c.p_adjusted ? fmt::format("{:.3g}", *c.p_adjusted) : "-"; }

std::string n_text(const Comparison& c) { return fmt::format("{}/{}", c.base_samples, c.new_samples); }

// Most urgent first: a reader of a PR comment sees the regressions before the noise.
int severity(Verdict v) {
  switch (v) {
    case Verdict::failed: return 0;
    case Verdict::slower: return 1;
    case Verdict::suspect: return 2;
    case Verdict::noisy: return 3;
    case Verdict::ambiguous: return 3;
    case Verdict::faster: return 4;
    case Verdict::missing: return 5;
    case Verdict::added: return 6;
    case Verdict::skipped: return 7;
    case Verdict::same: return 8;
  }
  return 9;
}

std::string headline(const CompareReport& r) {
  return r.regressed()                 ? "REGRESSION"
         : r.count(Verdict::noisy) > 0 ? "no regression found, some cases NOISY"
                                       : "no regression";
}

std::string case_name(const Comparison& c) {
  const std::string params = params_summary(c.params);
  return params.empty() ? c.key : c.key + " [" + params + "]";
}

std::string family_of(const Comparison& c) { return c.key.substr(0, c.key.find('/')); }

bool shown(const Comparison& c, const CompareOptions& o) { return o.all_rows || c.verdict != Verdict::same; }

// ": coll busbw x15 (sd 0.69 in ln over 63 cases), mem bandwidth x2.3 (...)": the factor a change
// of each family had to exceed — what this host could judge at all.
std::string run_spread_text(const CompareReport& r) {
  std::string out;
  for (const auto& s : r.run_spreads)
    out += fmt::format("{}{} {} x{:.3g} (sd {:.2g} in ln over {} cases)", out.empty() ? ": " : ", ", s.family, s.metric,
                       s.factor, s.sd, s.cases);
  return out;
}

}  // namespace

std::string render_compare_console(const CompareReport& r, const CompareOptions& o, bool with_table) {
  const std::string verdict_line = wrap_lines(fmt::format("compare: {} ({}; threshold {:g}%, alpha {:g})\n",
                                                          headline(r), compare_summary(r), 100 * o.threshold, o.alpha));
  std::string out = verdict_line;
  if (r.base_runs > 1)
    out += fmt::format(
        "BASE pools {} runs: a change must also clear their slowest (or fastest) run by the threshold and its "
        "family's run-to-run spread{}\n",
        r.base_runs, run_spread_text(r));
  if (!r.environment.empty()) {
    out += "environment differences (BASE -> NEW):\n";
    for (const auto& d : r.environment)
      out += fmt::format("  {:<18} {} -> {}\n", d.field, d.base.empty() ? "(absent)" : d.base,
                         d.contender.empty() ? "(absent)" : d.contender);
  }
  for (const auto& w : r.warnings) out += fmt::format("WARNING: {}\n", w);
  if (!with_table) return out;
  // Columns as wide as their cells; each row's params in full on a line of their own under it (a
  // column of them was cut at 36 characters), then the reason, wrapped at 100 columns.
  std::vector<const Comparison*> rows_shown;
  for (const auto& c : r.comparisons)
    if (shown(c, o)) rows_shown.push_back(&c);
  const size_t rows = rows_shown.size();
  size_t case_w = 4, metric_w = 6, unit_w = 4, n_w = 1;
  for (const Comparison* c : rows_shown) {
    case_w = std::max(case_w, c->key.size());
    metric_w = std::max(metric_w, c->metric.size());
    unit_w = std::max(unit_w, c->unit.size());
    n_w = std::max(n_w, n_text(*c).size());
  }
  auto row = [&](const std::string& verdict, const std::string& key, const std::string& metric, const std::string& base,
                 const std::string& contender, const std::string& unit, const std::string& change, const std::string& p,
                 const std::string& n) {
    return fmt::format("{:<9} {:<{}} {:<{}} {:>10} {:>10} {:<{}} {:>8} {:>8} {:>{}}\n", verdict, key, case_w, metric,
                       metric_w, base, contender, unit, unit_w, change, p, n, n_w);
  };
  std::string table;
  for (const Comparison* c : rows_shown) {
    table += row(std::string(verdict_name(c->verdict)), c->key, c->metric, value_text(c->base),
                 value_text(c->contender), c->unit, change_text(*c), p_text(*c), n_text(*c));
    const std::string params = params_summary(c->params);
    if (!params.empty()) table += wrap_lines(fmt::format("          {}\n", params));
    if (c->verdict != Verdict::same) table += wrap_lines(fmt::format("          {}\n", c->reason));
  }
  if (rows > 0) {
    const std::string header = row("verdict", "case", "metric", "base", "new", "unit", "change", "p(Holm)", "n");
    out += header + std::string(header.size() - 1, '-') + "\n" + table;
  }
  const size_t hidden = r.comparisons.size() - rows;
  if (hidden > 0) out += fmt::format("({} SAME rows not shown; --all shows every row)\n", hidden);
  if (rows >= 10) out += verdict_line;  // again, under a long table
  return out;
}

std::string render_compare_markdown(const CompareReport& r, const CompareOptions& o, size_t max_bytes) {
  std::string head = fmt::format(
      "## gcbench compare: {}\n\n{}. Threshold {:g}%, alpha {:g} (Holm-corrected U test "
      "on >= {} samples per side, else 3 x noise; NOISY: too noisy to judge a change of the threshold's size).\n\n",
      headline(r), compare_summary(r), 100 * o.threshold, o.alpha, o.min_utest_samples);
  if (r.base_runs > 1)
    head += fmt::format(
        "BASE pools {} runs: a change must also clear their slowest (or fastest) run by the "
        "threshold and its family's run-to-run spread{}.\n\n",
        r.base_runs, markdown_text(run_spread_text(r)));
  for (const auto& w : r.warnings) head += fmt::format("> [!WARNING]\n> {}\n\n", markdown_text(w));
  if (!r.environment.empty()) {
    head += "**Environment differences**\n\n| field | BASE | NEW |\n| --- | --- | --- |\n";
    for (const auto& d : r.environment)
      head +=
          fmt::format("| {} | {} | {} |\n", markdown_text(d.field), markdown_text(d.base.empty() ? "(absent)" : d.base),
                      markdown_text(d.contender.empty() ? "(absent)" : d.contender));
    head += "\n";
  }
  const std::string table_head =
      "| verdict | case | params | metric | BASE | NEW | unit | change | p (Holm) | n | why |\n"
      "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |\n";
  auto row = [](const Comparison& c) {
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       c.verdict == Verdict::slower || c.verdict == Verdict::failed
                           ? fmt::format("**{}**", verdict_name(c.verdict))
                           : std::string(verdict_name(c.verdict)),
                       markdown_text(c.key), markdown_text(params_summary(c.params)), markdown_text(c.metric),
                       value_text(c.base), value_text(c.contender), markdown_text(c.unit), change_text(c), p_text(c),
                       n_text(c), c.verdict == Verdict::same ? "" : markdown_text(c.reason));
  };
  // Families in order of first appearance; in each, its shown rows by severity.
  std::vector<std::string> families;
  for (const auto& c : r.comparisons)
    if (std::find(families.begin(), families.end(), family_of(c)) == families.end()) families.push_back(family_of(c));
  std::string body, quiet_families;
  size_t kept = 0, candidates = 0;
  bool cut = false;
  for (const auto& family : families) {
    CompareReport part;
    std::vector<const Comparison*> rows;
    for (const auto& c : r.comparisons) {
      if (family_of(c) != family) continue;
      part.comparisons.push_back(c);
      if (shown(c, o)) rows.push_back(&c);
    }
    candidates += rows.size();
    if (rows.empty()) {
      quiet_families += fmt::format("- **{}**: {}\n", markdown_text(family), compare_summary(part));
      continue;
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Comparison* a, const Comparison* b) {
      return severity(a->verdict) < severity(b->verdict);
    });
    std::string block =
        fmt::format("<details{}>\n<summary><b>{}</b>: {}</summary>\n\n{}", part.regressed() ? " open" : "",
                    markdown_text(family), compare_summary(part), table_head);
    size_t in_block = 0;
    for (const auto* c : rows) {
      const std::string line = row(*c);
      // Room for this block's closing and the line about the rows cut.
      if (cut || head.size() + body.size() + block.size() + line.size() + 200 > max_bytes) {
        cut = true;
        break;
      }
      block += line;
      ++in_block;
    }
    kept += in_block;
    if (in_block > 0) body += block + "\n</details>\n\n";
  }
  std::string tail;
  if (!quiet_families.empty() && head.size() + body.size() + quiet_families.size() + 200 <= max_bytes)
    tail += "Families with every row SAME:\n\n" + quiet_families + "\n";
  if (kept < candidates)
    tail += fmt::format(
        "_{} more rows (not SAME) are not shown (comment size limit): see the console log or the "
        "JUnit report._\n",
        candidates - kept);
  return head + body + tail;
}

namespace {

const char* kCompareCss = R"(
body { font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
.verdict { font-size: 16px; padding: 8px 12px; border-radius: 4px; margin: 8px 0 12px 0; display: inline-block; }
.verdict.bad { background: #fde2e1; border: 1px solid #d93025; }
.verdict.noisy { background: #fef7e0; border: 1px solid #f9ab00; }
.verdict.ok { background: #e6f4ea; border: 1px solid #1e8e3e; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.why { color: #555; max-width: 520px; }
tr.SLOWER td, tr.FAILED td { background: #fde2e1; }
tr.FASTER td { background: #e6f4ea; }
tr.NOISY td, tr.AMBIGUOUS td, tr.SUSPECT td { background: #fef7e0; }
details { margin: 4px 0 8px 0; }
summary { cursor: pointer; font-weight: bold; }
.warn { background: #fef7e0; border-left: 4px solid #f9ab00; padding: 4px 8px; margin: 4px 0; }
.note { color: #555; font-size: 13px; }
)";

std::string html_rows(const std::vector<const Comparison*>& rows) {
  std::string out =
      "<table>\n<tr><th>verdict</th><th>case</th><th>params</th><th>metric</th><th>BASE</th><th>NEW</th><th>unit</th>"
      "<th>change</th><th>p (Holm)</th><th>n</th><th>why</th></tr>\n";
  for (const Comparison* c : rows)
    out += fmt::format(
        "<tr class=\"{0}\"><td>{0}</td><td>{1}</td><td>{2}</td><td>{3}</td><td class=\"num\">{4}</td>"
        "<td class=\"num\">{5}</td><td>{6}</td><td class=\"num\">{7}</td><td class=\"num\">{8}</td>"
        "<td class=\"num\">{9}</td><td class=\"why\">{10}</td></tr>\n",
        verdict_name(c->verdict), xml_escape(c->key), xml_escape(params_summary(c->params)), xml_escape(c->metric),
        value_text(c->base), value_text(c->contender), xml_escape(c->unit), change_text(*c), p_text(*c), n_text(*c),
        c->verdict == Verdict::same ? "" : xml_escape(c->reason));
  return out + "</table>\n";
}

}  // namespace

std::string render_compare_html(const CompareReport& r, const CompareOptions& o, const std::string& title) {
  const char* tone = r.regressed() ? "bad" : r.count(Verdict::noisy) > 0 ? "noisy" : "ok";
  std::string body = fmt::format("<h1>{}</h1>\n<div class=\"verdict {}\"><b>{}</b> &mdash; {}</div>\n",
                                 xml_escape(title), tone, xml_escape(headline(r)), xml_escape(compare_summary(r)));
  body += fmt::format(
      "<p class=\"note\">Threshold {:g} %, alpha {:g} (Holm-corrected U test on &ge; {} samples per side, else 3 "
      "&times; noise; NOISY: too noisy to judge a change of the threshold's size){}.</p>\n",
      100 * o.threshold, o.alpha, o.min_utest_samples,
      r.base_runs > 1
          ? fmt::format("; BASE pools {} runs: a change must also clear their slowest (or fastest) run and its "
                        "family's run-to-run spread{}",
                        r.base_runs, xml_escape(run_spread_text(r)))
          : "");
  for (const auto& w : r.warnings) body += fmt::format("<div class=\"warn\">{}</div>\n", xml_escape(w));
  if (!r.environment.empty()) {
    body += "<h2>Environment differences</h2>\n<table>\n<tr><th>field</th><th>BASE</th><th>NEW</th></tr>\n";
    for (const auto& d : r.environment)
      body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(d.field),
                          xml_escape(d.base.empty() ? "(absent)" : d.base),
                          xml_escape(d.contender.empty() ? "(absent)" : d.contender));
    body += "</table>\n";
  }
  // What changed first, most urgent first; then, folded: SAME rows and the ones with nothing to
  // compare (a side WAIVED, ERROR or absent).
  std::vector<const Comparison*> changed, same, nothing;
  for (const auto& c : r.comparisons) {
    if (c.verdict == Verdict::same)
      same.push_back(&c);
    else if (c.verdict == Verdict::skipped || c.verdict == Verdict::added || c.verdict == Verdict::missing)
      nothing.push_back(&c);
    else
      changed.push_back(&c);
  }
  std::stable_sort(changed.begin(), changed.end(), [](const Comparison* a, const Comparison* b) {
    return severity(a->verdict) < severity(b->verdict);
  });
  body += fmt::format("<h2>Changed ({})</h2>\n", changed.size());
  body += changed.empty() ? "<p>No case changed beyond the threshold.</p>\n" : html_rows(changed);
  if (!same.empty())
    body += fmt::format("<details{}><summary>SAME ({})</summary>\n{}</details>\n", o.all_rows ? " open" : "",
                        same.size(), html_rows(same));
  if (!nothing.empty())
    body += fmt::format(
        "<details><summary>Nothing to compare: a side WAIVED, ERROR or absent ({})</summary>\n{}</details>\n",
        nothing.size(), html_rows(nothing));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n{}</body>\n</html>\n",
      xml_escape(title), kCompareCss, body);
}

std::string render_compare_junit(const CompareReport& r) {
  size_t failures = 0, skipped = 0;
  for (const auto& c : r.comparisons) {
    if (c.verdict == Verdict::slower || c.verdict == Verdict::failed) ++failures;
    if (c.verdict == Verdict::skipped || c.verdict == Verdict::added || c.verdict == Verdict::missing) ++skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gcbench compare\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
                     r.comparisons.size(), failures, skipped);
  out +=
      fmt::format("  <testsuite name=\"gcbench compare\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
                  r.comparisons.size(), failures, skipped);
  if (!r.environment.empty() || !r.warnings.empty()) {
    out += "    <properties>\n";
    for (const auto& d : r.environment)
      out += fmt::format("      <property name=\"env.{}\" value=\"{} -> {}\"/>\n", xml_escape(d.field),
                         xml_escape(d.base), xml_escape(d.contender));
    for (const auto& w : r.warnings)
      out += fmt::format("      <property name=\"warning\" value=\"{}\"/>\n", xml_escape(w));
    out += "    </properties>\n";
  }
  for (const auto& c : r.comparisons) {
    const std::string summary =
        fmt::format("{}: {} {} -> {} {} ({}); {}", verdict_name(c.verdict), c.metric, value_text(c.base),
                    value_text(c.contender), c.unit, change_text(c), c.reason);
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n", xml_escape(c.key),
                       xml_escape(c.metric.empty() ? case_name(c) : c.metric + " " + case_name(c)));
    if (c.verdict == Verdict::slower || c.verdict == Verdict::failed)
      out += fmt::format("      <failure type=\"{}\" message=\"{}\"/>\n", verdict_name(c.verdict), xml_escape(summary));
    else if (c.verdict == Verdict::skipped || c.verdict == Verdict::added || c.verdict == Verdict::missing)
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(summary));
    else
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(summary));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace gcb
