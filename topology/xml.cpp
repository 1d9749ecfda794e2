// Recursive-descent reader behind xml.hpp. Strict where a broken dump would otherwise parse into
// a wrong topology (mismatched or unclosed tags, duplicate attributes, unquoted values, trailing
// garbage), lenient about text content, which NCCL never writes and we ignore.
#include "topology/xml.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb::topo::xml {

const std::string* Element::find(std::string_view attribute) const {
  for (const auto& [key, value] : attributes)
    if (key == attribute) return &value;
  return nullptr;
}

std::string Element::get(std::string_view attribute, std::string_view fallback) const {
  const std::string* value = find(attribute);
  return value ? *value : std::string(fallback);
}

namespace {

class Reader {
 public:
  Reader(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  Element document() {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte order mark
    skip_misc();
    if (at_end()) fail("no root element");
    if (peek() != '<') fail("text before the root element");
    Element root = element();
    skip_misc();
    if (!at_end()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(std::string_view why) {
    throw UsageError(fmt::format("{}: malformed XML at line {}: {}", what_, line_at(pos_), why));
  }
  // Line of byte `pos`, counted from the last position asked for: positions only grow, so a
  // whole document costs one pass (counting from the start for every element was quadratic).
  int line_at(std::size_t pos) {
    pos = std::min(pos, s_.size());
    line_ += static_cast<int>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(line_pos_),
                                         s_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    line_pos_ = pos;
    return line_;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  bool starts(std::string_view token) const { return s_.substr(pos_, token.size()) == token; }
  void expect(std::string_view token) {
    if (!starts(token))
      fail(at_end() ? fmt::format("truncated, expected '{}'", token) : fmt::format("expected '{}'", token));
    pos_ += token.size();
  }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_until(std::string_view terminator, std::string_view construct) {
    const std::size_t end = s_.find(terminator, pos_);
    if (end == std::string_view::npos) fail(fmt::format("truncated {}", construct));
    pos_ = end + terminator.size();
  }
  // Whitespace, comments and processing instructions between elements.
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) {
        skip_until("-->", "comment");
      } else if (starts("<?")) {
        skip_until("?>", "<?...?> declaration");
      } else if (starts("<!")) {
        fail("DTD and CDATA sections are not supported");
      } else {
        return;
      }
    }
  }

  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == ':';
  }
  std::string name() {
    const std::size_t start = pos_;
    if (at_end() || !(std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_'))
      fail(at_end() ? "truncated, expected a name" : "expected a name");
    while (!at_end() && name_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  std::string decode(std::string_view raw) {
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      const std::size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) fail("'&' without ';'");
      const std::string_view entity = raw.substr(i + 1, semi - i - 1);
      if (entity == "lt")
        out += '<';
      else if (entity == "gt")
        out += '>';
      else if (entity == "amp")
        out += '&';
      else if (entity == "quot")
        out += '"';
      else if (entity == "apos")
        out += '\'';
      else if (!entity.empty() && entity[0] == '#') {
        const bool hex = entity.size() > 1 && (entity[1] == 'x' || entity[1] == 'X');
        const std::string digits(entity.substr(hex ? 2 : 1));
        unsigned long code = 0;
        try {
          code = std::stoul(digits, nullptr, hex ? 16 : 10);
        } catch (const std::exception&) {
          fail(fmt::format("bad character reference '&{};'", entity));
        }
        if (code > 0x7f) fail("non-ASCII character references are not supported");
        // XML 1.0 (§2.2 Char) admits no control character but tab, newline and carriage return.
        if ((code < 0x20 && code != '\t' && code != '\n' && code != '\r') || code == 0x7f)
          fail(fmt::format("character reference '&{};' names a control character", entity));
        out += static_cast<char>(code);
      } else {
        fail(fmt::format("unknown entity '&{};'", entity));
      }
      i = semi;
    }
    return out;
  }

  Element element(int depth = 1) {
    Element e;
    e.line = line_at(pos_);
    if (depth > kMaxDepth) fail(fmt::format("elements nested more than {} deep", kMaxDepth));
    expect("<");
    e.name = name();
    for (;;) {
      const std::size_t before = pos_;
      skip_space();
      if (at_end()) fail(fmt::format("truncated inside <{}>", e.name));
      if (starts("/>")) {
        pos_ += 2;
        return e;
      }
      if (peek() == '>') {
        ++pos_;
        break;
      }
      if (pos_ == before) fail(fmt::format("expected whitespace between attributes of <{}>", e.name));
      std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      const char quote = peek();
      if (quote != '"' && quote != '\'') fail(fmt::format("unquoted value of {}", key));
      ++pos_;
      const std::size_t end = s_.find(quote, pos_);
      if (end == std::string_view::npos) fail(fmt::format("truncated value of {}", key));
      const std::string_view raw = s_.substr(pos_, end - pos_);
      if (raw.find('<') != std::string_view::npos) fail(fmt::format("'<' in value of {}", key));
      pos_ = end + 1;
      if (e.find(key)) fail(fmt::format("duplicate attribute {} in <{}>", key, e.name));
      e.attributes.emplace_back(std::move(key), decode(raw));
    }
    // Content: children, comments and ignored text, up to the matching end tag.
    for (;;) {
      if (at_end()) fail(fmt::format("truncated: <{}> from line {} is not closed", e.name, e.line));
      if (starts("</")) {
        pos_ += 2;
        const std::string closing = name();
        if (closing != e.name) fail(fmt::format("</{}> closes <{}> from line {}", closing, e.name, e.line));
        skip_space();
        expect(">");
        return e;
      }
      if (starts("<!--")) {
        skip_until("-->", "comment");
      } else if (starts("<?")) {
        skip_until("?>", "processing instruction");
      } else if (starts("<!")) {
        fail("DTD and CDATA sections are not supported");
      } else if (peek() == '<') {
        e.children.push_back(element(depth + 1));
      } else {
        const std::size_t next = s_.find('<', pos_);
        decode(s_.substr(pos_, next == std::string_view::npos ? s_.size() - pos_ : next - pos_));
        pos_ = next == std::string_view::npos ? s_.size() : next;
      }
    }
  }

  std::string_view s_;
  std::string_view what_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::size_t line_pos_ = 0;
};

}  // namespace

Element parse(std::string_view text, std::string_view what) { return Reader(text, what).document(); }

std::string without_comments_and_doctype(std::string_view text, std::string_view what, int max_depth) {
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  std::size_t pos = 0;
  auto drop_to = [&](std::string_view end) {  // drops up to `end` and the whitespace after it
    const std::size_t at = text.find(end, pos);
    pos = at == std::string_view::npos ? text.size() : at + end.size();
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  while (pos < text.size()) {
    const std::size_t lt = text.find('<', pos);
    out.append(text.substr(pos, lt == std::string_view::npos ? std::string_view::npos : lt - pos));
    if (lt == std::string_view::npos) break;
    pos = lt;
    const std::string_view rest = text.substr(pos);
    if (rest.starts_with("<!--")) {
      drop_to("-->");
      continue;
    }
    if (rest.starts_with("<!DOCTYPE")) {
      const std::size_t bracket = rest.find('['), close = rest.find('>');
      drop_to(bracket != std::string_view::npos && bracket < close ? "]>" : ">");
      continue;
    }
    // Any other markup: copied up to its '>' outside quoted values.
    char quote = 0;
    std::size_t i = pos + 1;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      }
    }
    const std::size_t end = i < text.size() ? i + 1 : text.size();
    const bool start_tag = !rest.starts_with("</") && !rest.starts_with("<?") && !rest.starts_with("<!");
    if (rest.starts_with("</")) --depth;
    if (start_tag && !(i < text.size() && text[i - 1] == '/') && ++depth > max_depth)
      throw UsageError(fmt::format("{}: elements nested more than {} deep", what, max_depth));
    out.append(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

}  // namespace gcb::topo::xml
