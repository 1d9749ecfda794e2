// How a communicator waits for its stream without sleeping through the end of the work: poll
// cudaStreamQuery and yield the CPU between polls (NCCL's own threads may need it), as
// nccl-tests' testStreamSynchronize does (NVIDIA/nccl-tests src/common.cu). A sleep of 50 µs per
// poll added up to 50 µs to every isolated operation. The asynchronous-error query and the
// timeout are checked every `polls_per_check` polls, so the hot loop is the query and a yield.
// Plain C++ (the CUDA and NCCL calls come in as functions), tested with fakes.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/harness.hpp"

namespace gcb {

struct StreamPoll {
  std::function<bool()> done;                // the stream finished (cudaStreamQuery; throws on an error)
  std::function<std::string()> async_error;  // "" or what went wrong (ncclCommGetAsyncError)
  std::function<void()> yield;               // give the CPU away once (sched_yield)
};

inline constexpr int kPollsPerCheck = 64;

// "" once p.done() is true; otherwise why it gave up: the asynchronous error, or that `timeout`
// passed (measured by `clock`). done() is asked before anything else, so finished work returns
// at once.
std::string poll_stream(const StreamPoll& p, std::chrono::nanoseconds timeout, const Clock& clock = steady_clock(),
                        int polls_per_check = kPollsPerCheck);

}  // namespace gcb
