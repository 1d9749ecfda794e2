// Backend memory accounting shared by every backend.
#include "models/backend.hpp"

#include <algorithm>

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

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = std::exchange(o.owner_, nullptr);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    cat_ = o.cat_;
  }
  return *this;
}

void Buffer::reset() {
  if (ptr_ != nullptr && owner_ != nullptr) owner_->release(ptr_, bytes_, cat_);
  owner_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

Buffer Backend::alloc(MemCategory cat, size_t bytes) {
  void* p = raw_alloc(bytes);
  auto& c = mem_.by_category[static_cast<size_t>(cat)];
  c.current += bytes;
  c.peak = std::max(c.peak, c.current);
  mem_.total.current += bytes;
  mem_.total.peak = std::max(mem_.total.peak, mem_.total.current);
  return Buffer(this, p, bytes, cat);
}

void Backend::release(void* p, size_t bytes, MemCategory cat) {
  raw_free(p);
  mem_.by_category[static_cast<size_t>(cat)].current -= bytes;
  mem_.total.current -= bytes;
}

void Backend::reset_peaks() {
  for (auto& c : mem_.by_category) c.peak = c.current;
  mem_.total.peak = mem_.total.current;
}

}  // namespace gcb::models
