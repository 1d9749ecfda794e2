// AdamW on host memory, computed by the host's cores: the CPU oracle's adamw (cpu_backend.cpp) and
// ZeRO-Offload's CPU optimizer (Ren et al. 2021, "ZeRO-Offload", USENIX ATC '21 §4: fp32 master
// weights and Adam moments on the CPU, updated there; model_states.hpp) are this one function, and
// every element goes through kernels/train/adamw_math.hpp adamw_element, the arithmetic the device
// kernel runs, so an offloaded step gives the device path's bits.
#pragma once

#include <cstddef>
#include <vector>

#include "models/backend/backend.hpp"

namespace gcb::models {

// Backend::adamw's contract on host pointers: params and grads of their View types (widened to fp32
// exactly, params rounded once to nearest even), m, v and master fp32.
void host_adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a);
// host_adamw on each tensor, weight decay 0 where `decay` is false (Backend::adamw_multi).
void host_adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a);

}  // namespace gcb::models
