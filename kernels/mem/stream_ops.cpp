// The STREAM op table (stream_ops.hpp): BabelStream's kernels plus read and write, each with its name, the arrays it
// reads and writes, its FLOPs and its element-wise function; parse_stream_op.
#include "kernels/mem/stream_ops.hpp"

#include <bit>

namespace gcb::kernels {

namespace {
constexpr unsigned kA = 1, kB = 2, kC = 4;
}  // namespace

const std::vector<StreamOpInfo>& stream_ops() {
  // BabelStream's kernels (UoB-HPC/BabelStream src/Stream.h) plus read (Σa) and write (a = s).
  static const std::vector<StreamOpInfo> table = {
      {StreamOp::copy, "copy", kA, kC, 0, [](double a, double, double, double) { return a; }},
      {StreamOp::scale, "scale", kC, kB, 1, [](double, double, double c, double s) { return s * c; }},
      {StreamOp::add, "add", kA | kB, kC, 1, [](double a, double b, double, double) { return a + b; }},
      {StreamOp::triad, "triad", kB | kC, kA, 2, [](double, double b, double c, double s) { return b + s * c; }},
      {StreamOp::dot, "dot", kA | kB, 0, 2, [](double a, double b, double, double) { return a * b; }},
      {StreamOp::read, "read", kA, 0, 1, [](double a, double, double, double) { return a; }},
      {StreamOp::write, "write", 0, kA, 0, [](double, double, double, double s) { return s; }},
  };
  return table;
}

int StreamOpInfo::arrays() const { return std::popcount(reads) + std::popcount(writes); }

int StreamOpInfo::output() const { return writes == 0 ? -1 : std::countr_zero(writes); }

const StreamOpInfo& stream_op_info(StreamOp op) { return stream_ops().at(static_cast<size_t>(op)); }

std::string_view stream_op_name(StreamOp op) { return stream_op_info(op).name; }

std::optional<StreamOp> parse_stream_op(std::string_view name) {
  for (const StreamOpInfo& o : stream_ops())
    if (o.name == name) return o.op;
  return std::nullopt;
}

}  // namespace gcb::kernels
