// Stage 6 (opt-in): a few training steps of a small GPT on every rank alone (reference_step.hpp);
// each rank's step time is judged against every other rank's.
#include <fmt/format.h>

#include "bench/scan/exchange.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/reference_step.hpp"
#include "bench/scan/scan_run.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace gcb::scan {

void ScanRun::reference() {
  begin_stage("reference", fmt::format("{} training steps of GPT '{}' alone on every rank ({} backend)",
                                       o_.reference_steps, o_.reference_model, reference_backend_name()));
  if (skipped_for_budget("reference")) return;
  SubWorld solo(ctx_, ctx_.rank, 0, 1);
  ReferenceOptions ro;
  ro.model = o_.reference_model;
  ro.steps = o_.reference_steps;
  Result r;
  r.key = "scan/reference_step";
  r.params = {{"stage", "reference"}, {"node", me().node},           {"gpu", gpu_},
              {"rank", ctx_.rank},    {"model", o_.reference_model}, {"backend", reference_backend_name()}};
  try {
    r.samples = run_reference_steps(solo.ctx().host_comm, ro);
    r.stats = summarize(r.samples);
    r.timer = "host steady_clock";
    r.batch = 1;
    r.stop_reason = "max_samples";
    r.metrics = {Metric{"step_time", r.stats->median, "s", false, {}, {}}};
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    r.status = Status::error;
    r.reason = e.what();
  }
  auto all = gather({r});
  if (!leader()) return;
  auto findings = judge_reference(all, layout_.nodes, o_.rule);
  end_stage("reference", std::move(all), std::move(findings));
}

}  // namespace gcb::scan
