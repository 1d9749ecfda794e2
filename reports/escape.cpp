// escape.hpp's escaping, one function per output: xml_escape (HTML, SVG), markdown_text, markdown_code,
// markdown_fenced, dot_label, mermaid_label and csv_field (no formulas).
#include "reports/escape.hpp"

#include <charconv>

namespace gcb {

namespace {

bool line_break(char c) { return c == '\n' || c == '\r'; }

bool plain_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // from_chars takes no '+'
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f ? ' ' : c;
    }
  }
  return out;
}

std::string markdown_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (line_break(c)) {
      out += ' ';
      continue;
    }
    if (c == '\\' || c == '`' || c == '<' || c == '>' || c == '|' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_code(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (line_break(c))
      out += ' ';
    else if (c == '`')
      out += '\'';
    else if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

std::string markdown_fenced(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '`') c = '\'';
  return out;
}

std::string dot_label(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (line_break(c))
      out += ' ';
    else if (c == '"' || c == '\\')
      (out += '\\') += c;
    else
      out += c;
  }
  return out;
}

std::string mermaid_label(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '"': out += "#quot;"; break;
      case '<': out += "#lt;"; break;
      case '>': out += "#gt;"; break;
      case '&': out += "#amp;"; break;
      case '#': out += "#35;"; break;
      case '\n':
      case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string csv_field(std::string_view s) {
  std::string text(s);
  if (!text.empty() &&
      (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@' || text[0] == '\t' || text[0] == '\r') &&
      !plain_number(text))
    text.insert(text.begin(), '\'');
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace gcb
