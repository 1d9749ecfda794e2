// Stage 6 of `gcbench scan` (reference_step.hpp): run_reference_steps, a few training steps of a small GPT on one rank
// alone through the training library, on the cpu backend.
#include "bench/scan/reference_step.hpp"

#include "core/error.hpp"
#include "core/harness.hpp"
#include "models/model/config.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/engine.hpp"

namespace gcb::scan {

models::GptConfig reference_config(const std::string& model) {
  const bool file = model.size() > 5 && model.ends_with(".json");
  return file ? models::load_config_file(model) : models::named_config(model);
}

std::vector<double> run_reference_steps(Communicator& solo, const ReferenceOptions& o) {
  GCB_CHECK(solo.size() == 1, "the reference step runs on a world of one rank");
  models::TrainOptions t;
  t.model = reference_config(o.model);
  t.seed = o.seed;
  models::ParallelGroups ctx = models::make_parallel_groups(solo, {1, 1, 1});
  models::CpuBackend be;
  auto engine = models::make_training_step(be, ctx, t);
  HostTimer timer(steady_clock(), 1);
  HarnessOptions h;
  h.warmup = 1;
  h.min_samples = h.max_samples = o.steps;  // a fixed number of steps, like `gcbench train`
  h.min_time = 0;
  h.max_time = 1e9;
  h.noise = 1.0;
  h.batch = 1;
  return measure(
             timer, [&] { engine->step(); }, h)
      .samples;
}

std::string reference_backend_name() { return "cpu"; }

}  // namespace gcb::scan
