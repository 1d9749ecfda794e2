// poll_stream (stream_poll.hpp): wait for a communicator's stream by querying and yielding, the asynchronous error and
// the timeout checked every polls_per_check polls.
#include "collectives/stream_poll.hpp"

#include <fmt/format.h>

namespace gcb {

std::string poll_stream(const StreamPoll& p, std::chrono::nanoseconds timeout, const Clock& clock,
                        int polls_per_check) {
  const double start = clock.now();
  const double limit = std::chrono::duration<double>(timeout).count();
  for (long polls = 1;; ++polls) {
    if (p.done()) return {};
    if (polls % polls_per_check == 0) {
      // A peer that died leaves our kernels spinning: only the async error or a timeout tells.
      if (std::string e = p.async_error(); !e.empty()) return "asynchronous error: " + e;
      if (clock.now() - start > limit) return fmt::format("stream not done after {:.1f} s", limit);
    }
    p.yield();
  }
}

}  // namespace gcb
