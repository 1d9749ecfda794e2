#include "kernels/stream_ops.hpp"

#include <array>
#include <utility>

namespace gcb::kernels {

namespace {
constexpr std::array<std::pair<StreamOp, std::string_view>, 7> kNames{{
    {StreamOp::copy, "copy"}, {StreamOp::scale, "scale"}, {StreamOp::add, "add"},
    {StreamOp::triad, "triad"}, {StreamOp::dot, "dot"}, {StreamOp::read, "read"},
    {StreamOp::write, "write"},
}};
}  // namespace

std::string_view stream_op_name(StreamOp op) {
  for (const auto& [o, n] : kNames)
    if (o == op) return n;
  return "?";
}

std::optional<StreamOp> parse_stream_op(std::string_view name) {
  for (const auto& [o, n] : kNames)
    if (n == name) return o;
  return std::nullopt;
}

}  // namespace gcb::kernels
