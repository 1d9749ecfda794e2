// The table of gcbench's subcommand families (bench/common/family.hpp says what a row holds).
#pragma once

#include <span>

#include "bench/common/family.hpp"

namespace gcb::bench {

std::span<const Family> families();

}  // namespace gcb::bench
