// Backend memory accounting shared by every backend.
#include "models/backend/backend.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/error.hpp"

namespace gcb::models {

void Backend::cross_entropy_finish_backward(float* losses, View dlogits, View logits, const float* rowmax,
                                            const float* stats, const int32_t* targets, int v0, int rows, int V,
                                            int valid, float dloss) {
  cross_entropy_finish(losses, dlogits, logits, rowmax, stats, rows, V, valid);
  cross_entropy_backward(dlogits, dlogits, targets, v0, rows, V, dloss);
}

void Backend::adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a) {
  for (const AdamWBuffers& x : tensors) adamw(x.params, x.grads, x.m, x.v, x.master, x.n, adamw_args_for(x, a));
}

std::optional<AttentionTimes> Backend::measure_attention(DType, int, int, int, int) { return std::nullopt; }

void Backend::adopt_attention(DType, int, int, int, int, const AttentionTimes&, int) {}

void Backend::gemm_then_gelu(const GemmArgs& a) {
  GCB_CHECK(a.gelu_aux && a.beta == 0.0f, "a GEMM with a GELU needs gelu_aux and beta = 0");
  const size_t n = static_cast<size_t>(a.M) * static_cast<size_t>(a.N);
  GemmArgs product = a;
  product.gelu = GemmGelu::none;
  product.gelu_aux = {};
  if (a.gelu == GemmGelu::forward) {
    product.C = a.gelu_aux;
    gemm(product);
    gelu_forward(a.C, a.gelu_aux, n);
  } else {
    GCB_CHECK(!a.bias, "a GELU backward GEMM has no bias");
    gemm(product);
    gelu_backward(a.C, a.gelu_aux, a.C, n);
  }
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = std::exchange(o.owner_, nullptr);
    view_ = std::exchange(o.view_, View{});
    count_ = std::exchange(o.count_, 0);
    cat_ = o.cat_;
    host_ = o.host_;
  }
  return *this;
}

void Buffer::reset() {
  if (view_.data != nullptr && owner_ != nullptr) owner_->release(view_.data, bytes(), cat_, host_);
  owner_ = nullptr;
  view_ = View{};
  count_ = 0;
}

float* Buffer::f32() const {
  GCB_CHECK(view_.dtype == DType::f32, "buffer holds " + std::string(dtype_name(view_.dtype)) + ", not fp32");
  return static_cast<float*>(view_.data);
}

int32_t* Buffer::i32() const {
  GCB_CHECK(view_.dtype == DType::i32, "buffer holds " + std::string(dtype_name(view_.dtype)) + ", not int32");
  return static_cast<int32_t*>(view_.data);
}

void MemoryStats::add(MemCategory cat, size_t bytes) {
  auto& c = by_category[static_cast<size_t>(cat)];
  c.current += bytes;
  c.peak = std::max(c.peak, c.current);
  total.current += bytes;
  total.peak = std::max(total.peak, total.current);
}

void MemoryStats::remove(MemCategory cat, size_t bytes) {
  by_category[static_cast<size_t>(cat)].current -= bytes;
  total.current -= bytes;
}

void MemoryStats::reset_peaks() {
  for (auto& c : by_category) c.peak = c.current;
  total.peak = total.current;
}

Buffer Backend::alloc(MemCategory cat, DType dtype, size_t count, AllocInit init) {
  const size_t bytes = count * dtype_size(dtype);
  void* p = raw_alloc(bytes, cat, init);
  mem_.add(cat, bytes);
  return Buffer(this, View{p, dtype}, count, cat);
}

Buffer Backend::alloc_host(MemCategory cat, DType dtype, size_t count) {
  const size_t bytes = count * dtype_size(dtype);
  void* p = raw_alloc_host(bytes);
  host_mem_.add(cat, bytes);
  return Buffer(this, View{p, dtype}, count, cat, true);
}

void* Backend::raw_alloc_host(size_t bytes) {
  void* p = std::calloc(std::max<size_t>(bytes, 1), 1);
  GCB_CHECK(p != nullptr, "out of host memory");
  return p;
}

void Backend::raw_free_host(void* p) { std::free(p); }

void Backend::release(void* p, size_t bytes, MemCategory cat, bool host) {
  if (host) {
    raw_free_host(p);
    host_mem_.remove(cat, bytes);
    return;
  }
  raw_free(p);
  mem_.remove(cat, bytes);
}

void Backend::reset_peaks() {
  mem_.reset_peaks();
  host_mem_.reset_peaks();
}

}  // namespace gcb::models
