// The order of one step's work on one pipeline stage, as a list of actions: forwards and backwards
// of micro-batches and the point-to-point exchanges between neighbouring stages. GPipe (Huang et
// al. 2019): every forward, then every backward. 1F1B (PipeDream-Flush, Narayanan et al. 2021
// §2.2; Megatron's forward_backward_pipelining_without_interleaving): p − s − 1 warm-up forwards,
// then one forward / one backward, the steady-state sends and receives paired in one exchange so
// neighbours never wait on each other, then the remaining backwards. Both run backwards in
// micro-batch order 0…m−1. Without a pipeline (p = 1) every forward is followed by its backward.
#pragma once

#include <string>
#include <vector>

#include "models/model/train_options.hpp"

namespace gcb::models {

// One group of point-to-point calls; −1 = none. A stage without a previous (next) neighbour
// skips the parts that name it.
struct PipeExchange {
  int send_output = -1;       // micro-batch whose stage output goes to the next stage
  int recv_output_grad = -1;  // micro-batch whose output gradient comes from the next stage
  int send_input_grad = -1;   // micro-batch whose input gradient goes to the previous stage
  int recv_input = -1;        // micro-batch whose input comes from the previous stage
};

struct PipeAction {
  enum class Kind : uint8_t { forward, backward, exchange } kind;
  int micro_batch = -1;     // forward / backward
  PipeExchange exchange{};  // exchange
};

std::vector<PipeAction> pipeline_actions(PipeSchedule schedule, int stages, int stage, int micro_batches);

// "F0 B0 F1 …" with exchanges as "x(so,rg,sg,ri)": for tests and error messages.
std::string describe(const std::vector<PipeAction>& actions);

}  // namespace gcb::models
