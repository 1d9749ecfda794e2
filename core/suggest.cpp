// "Did you mean" (suggest.hpp): closest_name, the nearest known name by edit distance (ties to a name that continues
// what was typed) or else by prefix, and did_you_mean's hint text.
#include "core/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gcb {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(text[i]) != lower(prefix[i])) return false;
  return true;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: d[i][j] = distance of a[0..i) and b[0..j).
  const size_t n = b.size();
  std::vector<size_t> before(n + 1), prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[n];
}

std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& known) {
  if (typed.empty()) return std::nullopt;
  if (std::find(known.begin(), known.end(), typed) != known.end()) return std::nullopt;
  const size_t limit = typed.size() <= 2 ? 0 : typed.size() <= 3 ? 1 : 2;
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& name : known) {
    const size_t d = edit_distance(typed, name);
    // At equal distance a name that continues what was typed wins ("gem": gemm before mem).
    if (d < best_distance || (best && d == best_distance && starts_with(name, typed) && !starts_with(*best, typed))) {
      best_distance = d;
      best = name;
    }
  }
  if (best) return best;
  for (const std::string& name : known) {
    const std::string_view shorter = typed.size() < name.size() ? typed : std::string_view(name);
    if (shorter.size() >= 3 && (starts_with(name, typed) || starts_with(typed, name))) return name;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const std::optional<std::string> name = closest_name(typed, known);
  return name ? fmt::format(" (did you mean '{}'?)", *name) : std::string();
}

}  // namespace gcb
