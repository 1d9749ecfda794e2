// Summary statistics of raw samples. Percentiles use linear interpolation between order
// statistics (the "R-7" definition NumPy uses by default), so reports agree with pandas/NumPy.
#pragma once

#include <span>
#include <vector>

namespace gcb {

struct Statistics {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, p5 = 0, p95 = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for fewer than 2 samples
  double cv = 0;      // stddev / mean; 0 when mean is 0
};

Statistics summarize(std::span<const double> samples);
// q in [0, 1]; the samples need not be sorted. Requires at least one sample.
double percentile(std::span<const double> samples, double q);
// Relative standard deviation of the samples (the harness's noise measure).
double relative_stddev(std::span<const double> samples);

}  // namespace gcb
