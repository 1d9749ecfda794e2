// Runs 3 steps of one 3D layout (dp2 × tp2 × pp2, sp, ZeRO-1, 1F1B) on `tiny` through the World
// (rank threads, or one process per rank under mpirun) and writes every step's loss and every
// final parameter as hex floats to argv[1]. ctest runs it both ways and compares the two files:
// the MPI run must equal the threads run bitwise. Every group has 2 ranks, so each reduction is
// a single commutative addition and the result cannot depend on the reduction algorithm.
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/world.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/engine.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: train_world_dump OUT\n");
    return 2;
  }
  const std::string path = argv[1];
  try {
    gcb::WorldOptions w;
    w.backend = gcb::world_is_processes() ? "mpi" : "threads";
    w.ranks = 8;
    return gcb::run_world(w, [&](gcb::RankContext& rc) -> int {
      using namespace gcb::models;
      const ParallelLayout lay{2, 2, 2};
      ParallelGroups ctx = make_parallel_groups(rc.world_comm, lay);
      TrainOptions o;
      o.model = named_config("tiny");
      o.micro_batch = 1;
      o.grad_accum = 3;
      o.sp = true;
      o.zero = ZeroStage::one;
      o.schedule = PipeSchedule::one_f_one_b;
      o.optim.adam.lr = 1e-2f;
      CpuBackend be;
      auto engine = make_training_step(be, ctx, o);
      std::vector<double> losses;
      for (int s = 0; s < 3; ++s) losses.push_back(engine->step());
      const std::vector<float> params = engine->full_params();
      if (rc.rank == 0) {
        std::ofstream f(path);
        for (double x : losses) f << fmt::format("loss {:a}\n", x);
        for (float x : params) f << fmt::format("{:a}\n", x);
        if (!f) return 1;
      }
      return 0;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_world_dump: %s\n", e.what());
    return 1;
  }
}
