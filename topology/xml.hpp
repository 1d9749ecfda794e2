// A small, strict XML reader for the topology formats (NCCL topology XML): elements, attributes,
// nesting, self-closing tags, comments, the <?xml?> declaration and the five named entities plus
// numeric character references. No DTDs, namespaces or CDATA — NCCL writes none of them. Bounded
// nesting depth, so hostile input cannot exhaust the stack.
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

// Element nesting deeper than any topology format (NCCL XML: about 8; hwloc: about 12) by a wide
// margin; deeper input is refused before it can exhaust the stack or memory.
inline constexpr int kMaxDepth = 64;

// Parses a document with exactly one root element. Throws gcb::UsageError naming `what` and the
// line on malformed or truncated input, elements nested deeper than kMaxDepth, and character
// references to control characters (XML 1.0 allows none but tab, newline and carriage return).
Element parse(std::string_view text, std::string_view what);

// The document for another parser (hwloc's minimal one, which reads hwloc's own exports only):
// the same text without comments and the DOCTYPE (and the whitespace after them), which that
// parser cannot skip. Refuses (gcb::UsageError naming `what`) elements nested deeper than
// `max_depth`, since that parser recurses. Quoted attribute values are copied untouched.
std::string without_comments_and_doctype(std::string_view text, std::string_view what, int max_depth = kMaxDepth);

}  // namespace gcb::topo::xml
