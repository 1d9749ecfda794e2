// A minimal XML well-formedness check for the report tests: tags balance and nest, attribute
// values are quoted and hold no '<', and every '&' starts a known entity. Comments, <!DOCTYPE>
// and <?...?> are skipped. Returns "" when well-formed, else what is wrong and where.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace gcb::test {

inline bool valid_entity(std::string_view s, size_t amp) {
  const size_t semi = s.find(';', amp);
  if (semi == std::string_view::npos || semi - amp > 10) return false;
  const std::string_view name = s.substr(amp + 1, semi - amp - 1);
  if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
  if (name.size() < 2 || name[0] != '#') return false;
  const bool hex = name[1] == 'x';
  for (size_t i = hex ? 2 : 1; i < name.size(); ++i)
    if (!(hex ? std::isxdigit(static_cast<unsigned char>(name[i])) : std::isdigit(static_cast<unsigned char>(name[i]))))
      return false;
  return name.size() > (hex ? 2u : 1u);
}

inline std::string xml_check(std::string_view s) {
  std::vector<std::string> open;
  auto where = [&](size_t i) { return " at offset " + std::to_string(i) + ": '" + std::string(s.substr(i, 40)) + "'"; };
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-' || c == '_'; };
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '&') {
      if (!valid_entity(s, i)) return "bad entity" + where(i);
      ++i;
      continue;
    }
    if (c != '<') {
      ++i;
      continue;
    }
    if (s.substr(i, 4) == "<!--") {
      const size_t e = s.find("-->", i);
      if (e == std::string_view::npos) return "unclosed comment" + where(i);
      i = e + 3;
    } else if (s.substr(i, 2) == "<!" || s.substr(i, 2) == "<?") {
      const size_t e = s.find('>', i);
      if (e == std::string_view::npos) return "unclosed declaration" + where(i);
      i = e + 1;
    } else if (s.substr(i, 2) == "</") {
      size_t j = i + 2;
      while (j < s.size() && is_name(s[j])) ++j;
      const std::string name(s.substr(i + 2, j - i - 2));
      if (j >= s.size() || s[j] != '>') return "malformed end tag" + where(i);
      if (open.empty() || open.back() != name)
        return "end tag </" + name + "> does not match <" + (open.empty() ? std::string("nothing") : open.back()) +
               ">" + where(i);
      open.pop_back();
      i = j + 1;
    } else {
      size_t j = i + 1;
      while (j < s.size() && is_name(s[j])) ++j;
      if (j == i + 1) return "'<' that starts no tag" + where(i);
      const std::string name(s.substr(i + 1, j - i - 1));
      for (;;) {
        while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        if (j >= s.size()) return "unterminated tag" + where(i);
        if (s.substr(j, 2) == "/>") {
          j += 2;
          break;
        }
        if (s[j] == '>') {
          open.push_back(name);
          ++j;
          break;
        }
        const size_t a = j;
        while (j < s.size() && is_name(s[j])) ++j;
        if (j == a || j + 1 >= s.size() || s[j] != '=' || (s[j + 1] != '"' && s[j + 1] != '\''))
          return "malformed attribute" + where(a);
        const char q = s[j + 1];
        const size_t end = s.find(q, j + 2);
        if (end == std::string_view::npos) return "unterminated attribute value" + where(a);
        for (size_t k = j + 2; k < end; ++k) {
          if (s[k] == '<') return "'<' in attribute value" + where(k);
          if (s[k] == '&' && !valid_entity(s, k)) return "bad entity in attribute" + where(k);
        }
        j = end + 1;
      }
      i = j;
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

inline size_t count_of(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

}  // namespace gcb::test
