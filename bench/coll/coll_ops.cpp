// `gcbench coll`'s option validation and host-memory check (the operations themselves are
// collectives/coll_op.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "bench/coll/coll.hpp"
#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/host_memory.hpp"
#include "core/size.hpp"

namespace gcb::bench {

void validate(const CollOptions& o) {
  auto bad = [](const std::string& s) { return UsageError(s); };
  if (o.ops.empty()) throw bad("--op: no collective selected");
  if (o.redops.empty()) throw bad("-o: no reduction selected");
  if (o.dtypes.empty()) throw bad("-d: no datatype selected");
  for (DType t : o.dtypes)
    if (t != DType::f32 && t != DType::f64 && t != DType::f16 && t != DType::bf16 && t != DType::i32 && t != DType::i8)
      throw bad(fmt::format("-d {}: collectives support float, double, half, bfloat16, int32 and int8", dtype_name(t)));
  if (o.min_bytes == 0) throw bad("-b/--minbytes must be > 0");
  if (o.max_bytes < o.min_bytes)
    throw bad(fmt::format("-e/--maxbytes ({}) is below -b/--minbytes ({})", o.max_bytes, o.min_bytes));
  if (o.step_factor == 1) throw bad("-f/--stepfactor must be ≥ 2 (or 0 for additive -i steps)");
  if (o.step_factor == 0 && o.step_bytes == 0) throw bad("-i/--stepbytes must be > 0 when -f is not given");
  if (o.iters < 1) throw bad("-n/--iters must be ≥ 1");
  if (o.warmup_iters < 0) throw bad("-w/--warmup_iters must be ≥ 0");
  if (o.check < 0) throw bad("-c/--check must be ≥ 0");
  if (o.root < -1) throw bad("-r/--root must be ≥ 0, or -1 for every root");
  if (o.blocking < 0 || o.blocking > 1) throw bad("-z/--blocking must be 0 or 1");
  if (o.run_cycles < 0) throw bad("-N/--run_cycles must be ≥ 0 (0 = forever)");
  if (o.cudagraph < 0) throw bad("-G/--cudagraph must be ≥ 0");
  if (o.ranks < 0) throw bad("--ranks must be ≥ 1");
  if (!(o.timeout > 0)) throw bad("--timeout must be > 0 seconds");
  if (!o.backend.empty() && !communicator_backend_known(o.backend))
    throw bad(fmt::format("--backend {}: expected one of {}", o.backend, communicator_backend_names()));
  if (!o.backend.empty() && !communicator_backend_built(o.backend))
    throw bad(fmt::format("--backend {} was not built into this binary", o.backend));
}

double coll_host_bytes_per_rank(const CollOptions& o, int nranks) {
  double most = 0;
  for (CollOp op : o.ops)
    for (DType t : o.dtypes) {
      // Host buffers of one rank at the largest size: send and recv (collectives/verifiable_case.cpp), and during
      // the check the uploaded inputs, the downloaded output, the expected output and the two
      // count-sized rows of the reference reduction.
      const CollShape s = coll_shape(op, o.max_bytes, t, nranks);
      const double elements = 2.0 * static_cast<double>(s.send_count) + 3.0 * static_cast<double>(s.recv_count) +
                              2.0 * static_cast<double>(s.count);
      most = std::max(most, elements * static_cast<double>(dtype_size(t)));
    }
  return most;
}

void check_coll_host_memory(const CollOptions& o, int world_size) {
  const std::string backend = o.backend.empty() ? default_coll_backend() : o.backend;
  // Device buffers: the device-memory check belongs to the GPU path.
  if (communicator_backend_known(backend) && communicator_backend(backend).memory == MemorySpace::device) return;
  const LauncherInfo launcher = detect_launcher();
  // Rank threads share this process; MPI ranks on this host share its memory.
  const int here = !launcher.launched ? world_size : std::max(launcher.local_size, 1);
  check_host_memory(
      here * coll_host_bytes_per_rank(o, world_size),
      fmt::format("coll up to -e {} on {} rank(s) of this host", format_bytes(static_cast<double>(o.max_bytes)), here));
}

}  // namespace gcb::bench
