// A small, strict XML reader for the topology formats (NCCL topology XML): elements, attributes,
// nesting, self-closing tags, comments, the <?xml?> declaration and the five named entities plus
// numeric character references. No DTDs, namespaces or CDATA — NCCL writes none of them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gcb::topo::xml {

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order
  std::vector<Element> children;
  int line = 0;  // where the start tag begins, for error messages

  // The attribute's value, or nullptr when absent.
  const std::string* find(std::string_view attribute) const;
  // The attribute's value, or `fallback` when absent.
  std::string get(std::string_view attribute, std::string_view fallback = "") const;
};

// Parses a document with exactly one root element. Throws gcb::UsageError naming `what` and the
// line on malformed or truncated input.
Element parse(std::string_view text, std::string_view what);

}  // namespace gcb::topo::xml
