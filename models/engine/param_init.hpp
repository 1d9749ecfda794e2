// Parameter initialization through a Backend: elements [begin, end) of one unit written with the
// layout's recipe (model/param_layout.hpp init_spans), so that any shard equals the same slice of
// the full tensor — every value is a function of (seed, tensor, element) only (model/init_rng.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/backend/backend.hpp"
#include "models/model/param_layout.hpp"

namespace gcb::models {

// Writes elements [begin, end) of unit `unit`'s initial values into dst (end − begin elements, of
// dst's type); indices past unit_size() are padding and get 0.
void init_range(const ParamLayout& layout, Backend& be, View dst, int unit, size_t begin, size_t end, uint64_t seed);

}  // namespace gcb::models
