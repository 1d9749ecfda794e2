// "Did you mean" for names people type: models, subcommands, flags, collectives. One rule for
// all of them, so a typo is caught the same way wherever it is typed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcb {

// The optimal-string-alignment distance (Damerau 1964; Levenshtein 1966): insertions, deletions,
// substitutions and transpositions of two adjacent characters each count one edit. Case-blind:
// "GPT2" and "gpt2" are 0 apart.
size_t edit_distance(std::string_view a, std::string_view b);

// The known name `typed` most likely meant: the nearest within 2 edits (1 when `typed` has 3
// characters: "p2p" is 2 edits from "mem"; none, only a different case, for 1 or 2: "-x" is not
// a typo of "-h"), else a name that starts with `typed` or that
// `typed` starts with (3 characters at least). At equal distance a name starting with `typed`
// wins, then the earlier name. None when nothing
// fits or `typed` is itself known.
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& known);

// " (did you mean 'NAME'?)" for closest_name, or "" when there is none: appended to an error
// line as it is.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

}  // namespace gcb
