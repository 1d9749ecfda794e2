// The names of the memory categories, as results and the planner print them.
#include "models/model/mem_category.hpp"

namespace gcb::models {

std::string_view mem_category_name(MemCategory c) {
  switch (c) {
    case MemCategory::params: return "params";
    case MemCategory::grads: return "grads";
    case MemCategory::master: return "master";
    case MemCategory::adam_m: return "adam_m";
    case MemCategory::adam_v: return "adam_v";
    case MemCategory::activations: return "activations";
    case MemCategory::comm: return "comm";
    case MemCategory::workspace: return "workspace";
  }
  return "?";
}

}  // namespace gcb::models
