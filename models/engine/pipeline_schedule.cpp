// pipeline_actions (pipeline_schedule.hpp): one pipeline stage's step as a list of forwards, backwards and neighbour
// exchanges under GPipe or 1F1B, and describe(), its text form.
#include "models/engine/pipeline_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gcb::models {
namespace {

PipeAction forward(int j) { return {PipeAction::Kind::forward, j, {}}; }
PipeAction backward(int j) { return {PipeAction::Kind::backward, j, {}}; }
PipeAction exchange(PipeExchange e) { return {PipeAction::Kind::exchange, -1, e}; }

}  // namespace

std::vector<PipeAction> pipeline_actions(PipeSchedule schedule, int stages, int stage, int m) {
  std::vector<PipeAction> out;
  if (schedule == PipeSchedule::gpipe && stages > 1) {
    for (int j = 0; j < m; ++j) {
      out.push_back(exchange({.recv_input = j}));
      out.push_back(forward(j));
      out.push_back(exchange({.send_output = j}));
    }
    for (int j = 0; j < m; ++j) {
      out.push_back(exchange({.recv_output_grad = j}));
      out.push_back(backward(j));
      out.push_back(exchange({.send_input_grad = j}));
    }
    return out;
  }
  // 1F1B; at p = 1 it has no warm-up and alternates forward and backward.
  const int warmup = std::min(stages - stage - 1, m), steady = m - warmup;
  for (int j = 0; j < warmup; ++j) {
    out.push_back(exchange({.recv_input = j}));
    out.push_back(forward(j));
    out.push_back(exchange({.send_output = j}));
  }
  if (steady > 0) out.push_back(exchange({.recv_input = warmup}));
  for (int i = 0; i < steady; ++i) {
    out.push_back(forward(warmup + i));
    out.push_back(exchange({.send_output = warmup + i, .recv_output_grad = i}));
    out.push_back(backward(i));
    if (i == steady - 1) {
      out.push_back(exchange({.send_input_grad = i}));
    } else {
      out.push_back(exchange({.send_input_grad = i, .recv_input = warmup + i + 1}));
    }
  }
  for (int j = steady; j < m; ++j) {
    out.push_back(exchange({.recv_output_grad = j}));
    out.push_back(backward(j));
    out.push_back(exchange({.send_input_grad = j}));
  }
  return out;
}

std::string describe(const std::vector<PipeAction>& actions) {
  std::string s;
  for (const PipeAction& a : actions) {
    if (!s.empty()) s += ' ';
    switch (a.kind) {
      case PipeAction::Kind::forward: s += fmt::format("F{}", a.micro_batch); break;
      case PipeAction::Kind::backward: s += fmt::format("B{}", a.micro_batch); break;
      case PipeAction::Kind::exchange: {
        const PipeExchange& e = a.exchange;
        s += fmt::format("x({},{},{},{})", e.send_output, e.recv_output_grad, e.send_input_grad, e.recv_input);
        break;
      }
    }
  }
  return s;
}

}  // namespace gcb::models
