// rank_threads_fit (rank_threads.hpp): the quick suite's rank threads against this process's CPUs, WAIVED when they
// would outnumber them.
#include "bench/common/rank_threads.hpp"

#include <fmt/format.h>

#include "collectives/rendezvous.hpp"
#include "reports/waived_result.hpp"

namespace gcb::bench {

bool rank_threads_fit(Runner& runner, const std::string& key, int threads) {
  const int cpus = detail::usable_cpus();
  if (threads <= cpus) return true;
  runner.add(waived_result(key, fmt::format("the quick suite runs {} rank threads and this process may use {} CPU{} "
                                            "(sched_getaffinity): more threads than CPUs would time the scheduler",
                                            threads, cpus, cpus == 1 ? "" : "s")));
  return false;
}

}  // namespace gcb::bench
