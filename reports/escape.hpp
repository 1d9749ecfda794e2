// One escaping helper per output format. Names in result documents and topology files (keys,
// params, labels, GPU and NIC names, hostnames) come from files anyone can craft, and land in
// Markdown (PR comments), HTML/SVG/XML, Graphviz DOT, mermaid and CSV (spreadsheets), where they
// must stay text: no tags, no broken-out strings, no formulas.
#pragma once

#include <string>
#include <string_view>

namespace gcb {

// XML 1.0 and HTML text or attribute values: & < > " ' as entities; control characters other
// than tab, newline and carriage return (which XML 1.0 forbids even as references) become spaces.
std::string xml_escape(std::string_view s);

// Markdown prose and table cells (GitHub Flavored Markdown): \ ` < > | [ ] are backslash-escaped,
// so no HTML tag, link, code span or cell boundary can start; line breaks become spaces.
std::string markdown_text(std::string_view s);

// Inside a Markdown code span: backticks become ', line breaks spaces, | is escaped (GFM splits
// table cells on it even inside code spans).
std::string markdown_code(std::string_view s);

// Inside a fenced code block: backticks become ', so no line can close the fence.
std::string markdown_fenced(std::string_view s);

// Inside a double-quoted Graphviz DOT string (ID or label): " and \ escaped, line breaks spaces.
std::string dot_label(std::string_view s);

// Inside a quoted mermaid node label ["..."]: " < > & # as mermaid's entity codes (#quot; …),
// line breaks spaces, so the label can neither end early nor carry HTML.
std::string mermaid_label(std::string_view s);

// One CSV field (RFC 4180: quoted when it holds , " or a line break, quotes doubled). A text
// that a spreadsheet would run as a formula (first character = + - @ tab or CR, and not a plain
// number) gets a leading ' (OWASP "CSV Injection").
std::string csv_field(std::string_view s);

}  // namespace gcb
