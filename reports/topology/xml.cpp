// Recursive-descent reader behind xml.hpp. Strict where a broken dump would otherwise parse into
// a wrong topology (mismatched or unclosed tags, duplicate attributes, unquoted values, trailing
// garbage), lenient about text content, which NCCL never writes and we ignore.
#include "reports/topology/xml.hpp"

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
  [[noreturn]] void fail(std::string_view why) const {
    const auto line = 1 + std::count(s_.begin(), s_.begin() + static_cast<std::ptrdiff_t>(
                                                                  std::min(pos_, s_.size())),
                                     '\n');
    throw UsageError(fmt::format("{}: malformed XML at line {}: {}", what_, line, why));
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  bool starts(std::string_view token) const { return s_.substr(pos_, token.size()) == token; }
  void expect(std::string_view token) {
    if (!starts(token)) fail(at_end() ? fmt::format("truncated, expected '{}'", token)
                                      : fmt::format("expected '{}'", token));
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
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
           c == ':';
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
      if (entity == "lt") out += '<';
      else if (entity == "gt") out += '>';
      else if (entity == "amp") out += '&';
      else if (entity == "quot") out += '"';
      else if (entity == "apos") out += '\'';
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
        out += static_cast<char>(code);
      } else {
        fail(fmt::format("unknown entity '&{};'", entity));
      }
      i = semi;
    }
    return out;
  }

  Element element() {
    Element e;
    e.line = 1 + static_cast<int>(std::count(
                     s_.begin(), s_.begin() + static_cast<std::ptrdiff_t>(pos_), '\n'));
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
      if (pos_ == before)
        fail(fmt::format("expected whitespace between attributes of <{}>", e.name));
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
        if (closing != e.name)
          fail(fmt::format("</{}> closes <{}> from line {}", closing, e.name, e.line));
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
        e.children.push_back(element());
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
};

}  // namespace

Element parse(std::string_view text, std::string_view what) {
  return Reader(text, what).document();
}

}  // namespace gcb::topo::xml
