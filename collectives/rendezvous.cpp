// The threads backend's rendezvous (rendezvous.hpp): the CPUs this process may use (usable_cpus, nth_cpu), which decide
// whether a waiting rank thread spins, and the Rendezvous constructor.
#include "collectives/rendezvous.hpp"

#include <sched.h>

namespace gcb::detail {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

int nth_cpu(const cpu_set_t& set, int n) {
  if (n < 0) return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set) && n-- == 0) return cpu;
  return -1;
}

Rendezvous::Rendezvous(int parties, bool spin)
    : parties_(parties), slots_(std::make_unique<PartySlot[]>(static_cast<size_t>(parties))), waiter_(spin) {}

}  // namespace gcb::detail
