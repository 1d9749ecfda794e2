// Our FlashAttention-2-style kernels (flash_fwd.cu, flash_bwd.cu) as the "ours" row of the
// attention registry (attention_registry.hpp): the shape and shared-memory checks, the backward's
// FP32 workspace and the tiles it runs.
#include <fmt/format.h>

#include "core/gpu.hpp"
#include "kernels/attention/attention_registry.hpp"
#include "kernels/attention/flash_attn.hpp"

namespace gcb::kernels::attn {
namespace {

class FlashKernel final : public AttnKernel {
 public:
  FlashKernel(DType t, const AttnShape& a, bool backward, int device)
      : t_(t), a_(a), backward_(backward), device_(device) {}
  std::string unsupported() const override {
    if (std::string why = flash_unsupported(t_, a_); !why.empty()) return why;
    // The backward needs more shared memory per block than sm_86/89/120 allow.
    return flash_smem_unsupported(a_.head_dim, backward_,
                                  gpu::runtime().devices.at(static_cast<size_t>(device_)).smem_per_block_optin);
  }
  // The forward needs none; the backward's dQ accumulator and D.
  size_t workspace_bytes(bool backward) const override { return backward ? flash_backward_workspace_bytes(a_) : 0; }
  void forward(const AttnTensors& x, void* stream) override {
    flash_forward(t_, a_, x.q, x.k, x.v, x.o, x.lse, stream);
  }
  void backward(const AttnTensors& x, void* stream) override {
    flash_backward(t_, a_, x.q, x.k, x.v, x.o, x.d_o, x.lse, x.dq, x.dk, x.dv, x.workspace, stream);
  }
  nlohmann::json describe() const override {
    const auto f = forward_tiles(a_.head_dim), b = backward_tiles(a_.head_dim);
    const auto fwd = fmt::format("fwd {}x{}, {} warps", f.rows, f.cols, ForwardTiling<128>::kWarps);
    return {{"tiles", backward_
                          ? fmt::format("{} / bwd {}x{}, {} warps", fwd, b.rows, b.cols, BackwardTiling<128>::kWarps)
                          : fwd}};
  }

 private:
  DType t_;
  AttnShape a_;
  bool backward_;
  int device_;
};

}  // namespace

std::unique_ptr<AttnKernel> make_flash_kernel(DType t, const AttnShape& a, bool backward, int device) {
  return std::make_unique<FlashKernel>(t, a, backward, device);
}

}  // namespace gcb::kernels::attn
