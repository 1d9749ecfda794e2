// The quick suite's in-process rank threads against the CPUs this process may use: its coll, p2p
// and train entries run 2 rank threads (a fixed count, so the cases' keys do not depend on the
// host), which on a 1-CPU runner would time the scheduler rather than the work (4 rank threads on
// 2 vCPUs made an 8 B all_reduce 22 µs against 0.6 µs with 2). There the entry is WAIVED, said why.
#pragma once

#include <string>

#include "bench/common/runner.hpp"

namespace gcb::bench {

// True when `threads` rank threads fit the CPUs this process may run on (sched_getaffinity); else
// adds a WAIVED result `key` to `runner` with the reason and returns false.
bool rank_threads_fit(Runner& runner, const std::string& key, int threads);

}  // namespace gcb::bench
