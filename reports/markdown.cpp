// render_markdown (markdown.hpp): status counts and per-family headline tables, with fewer rows per family until the
// report fits GitHub's 65,536-character comment limit.
#include "reports/markdown.hpp"

#include <fmt/format.h>
#include <limits>

#include "reports/escape.hpp"
#include "reports/html.hpp"
#include "reports/render.hpp"

namespace gcb::report {

namespace {

std::string value_text(const Result* r) {
  if (!r) return "—";
  if (r->status != Status::pass && r->status != Status::fail) return std::string(status_name(r->status));
  const Metric* m = headline(r);
  if (!m) return "null";
  std::string text = fmt::format("{} {}", format_value(*m->value), m->unit);
  if (const auto p = m->percent_of_peak()) text += fmt::format(" ({}%)", fixed_text(*p, 1));
  if (r->status == Status::fail) text += " FAIL";
  if (r->throttled) text += "*";
  return text;
}

// The document with at most `max_rows` rows per family table.
std::string render(const std::vector<Run>& runs, std::span<const ReportSection> sections, const MarkdownOptions& o,
                   size_t max_rows) {
  std::string out = fmt::format("# {}\n\n", markdown_text(o.title));
  out += "| run | host | GPU | results |\n| --- | --- | --- | --- |\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto f = environment_fields(runs[i].doc.context);
    std::string host = "-", gpu = "-";
    for (const auto& [k, v] : f) {
      if (k == "host") host = v;
      if (k == "GPU") gpu = v;
    }
    out += fmt::format("| {}{} | {} | {} | {} |\n", markdown_text(runs[i].label),
                       i == 0 && runs.size() > 1 ? " (baseline)" : "", markdown_text(host), markdown_text(gpu),
                       status_summary(runs[i].doc.results));
  }
  const auto diff = environment_diff(runs);
  if (!diff.empty()) {
    out += "\n> **Environments differ** — ratios compare different conditions:\n";
    for (const auto& e : diff) {
      out += fmt::format(">\n> - {}: ", markdown_text(e.name));
      for (size_t i = 0; i < e.values.size(); ++i)
        out += fmt::format("{}{} = `{}`", i ? ", " : "", markdown_text(runs[i].label), markdown_code(e.values[i]));
      out += "\n";
    }
  }
  bool truncated = false;
  for (const auto& family : families(runs)) {
    const ReportSection* section = find_section(sections, family);
    if (section && section->view->markdown) {
      out += fmt::format("\n## {}\n", markdown_text(family)) + section->view->markdown(runs);
      continue;
    }
    const auto rows = section_rows(runs, family, section);
    out += fmt::format("\n## {}\n\n| case | params |", markdown_text(family));
    for (const auto& run : runs) out += fmt::format(" {} |", markdown_text(run.label));
    for (size_t i = 1; i < runs.size(); ++i) out += fmt::format(" {} / base |", markdown_text(runs[i].label));
    out += "\n| --- | --- |";
    for (size_t i = 0; i < 2 * runs.size() - 1; ++i) out += " ---: |";
    out += "\n";
    const size_t shown = std::min(rows.size(), max_rows);
    for (size_t k = 0; k < shown; ++k) {
      const Row& row = rows[k];
      out += fmt::format("| {} | {} |", markdown_text(row.key), markdown_text(params_summary(row.params)));
      for (size_t i = 0; i < runs.size(); ++i) out += fmt::format(" {} |", markdown_text(value_text(row.per_run[i])));
      for (size_t i = 1; i < runs.size(); ++i) {
        const auto q = ratio_to_baseline(row, i);
        out += q ? fmt::format(" {}× |", fixed_text(*q, 3)) : std::string(" — |");
      }
      out += "\n";
    }
    if (shown < rows.size()) {
      out += fmt::format("\n_{} of {} rows shown; the HTML report has all of them._\n", shown, rows.size());
      truncated = true;
    }
  }
  if (truncated) out += "\n_Summarised to stay under the PR-comment size limit._\n";
  return out;
}

}  // namespace

std::string render_markdown(const std::vector<Run>& runs, std::span<const ReportSection> sections,
                            const MarkdownOptions& o) {
  // Fewer rows per family until the document fits.
  for (size_t rows :
       {std::numeric_limits<size_t>::max(), size_t{50}, size_t{20}, size_t{10}, size_t{5}, size_t{2}, size_t{0}}) {
    std::string md = render(runs, sections, o, rows);
    if (md.size() <= o.max_bytes) return md;
  }
  // Even headers alone are too large (thousands of families or runs): cut at a line boundary.
  std::string md = render(runs, sections, o, 0);
  const std::string note = "\n_Report cut to fit the size limit._\n";
  const size_t keep = o.max_bytes > note.size() ? o.max_bytes - note.size() : 0;
  md.resize(std::min(md.size(), keep));
  const auto nl = md.rfind('\n');
  md.resize(nl == std::string::npos ? 0 : nl + 1);
  return md + note.substr(0, std::min(note.size(), o.max_bytes - md.size()));
}

}  // namespace gcb::report
