// The peer for host triad: the loop of the classic STREAM benchmark (J. McCalpin, "STREAM:
// Sustainable Memory Bandwidth in High Performance Computers"), written out plainly — double
// arrays, `#pragma omp parallel for` with the default static schedule, no tricks. gcbench's own
// triad must reach ≥ 0.95× of this, built with the same flags and thread count.
#include "kernels/mem/host_mem.hpp"

namespace gcb::kernels {

void classic_stream_init(double* a, double* b, double* c, size_t n) {
  const auto count = static_cast<long>(n);
#pragma omp parallel for
  for (long j = 0; j < count; j++) {
    a[j] = 1.0;
    b[j] = 2.0;
    c[j] = 0.0;
  }
}

void classic_stream_triad(double* a, const double* b, const double* c, double scalar, size_t n) {
  const auto count = static_cast<long>(n);
#pragma omp parallel for
  for (long j = 0; j < count; j++) a[j] = b[j] + scalar * c[j];
}

}  // namespace gcb::kernels
