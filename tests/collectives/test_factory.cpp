// The backend factory: names, what this build contains, and clear errors for the rest.
#include <gtest/gtest.h>

#include "collectives/factory.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "gcb/config.hpp"

namespace gcb {
namespace {

TEST(CommunicatorFactory, ThreadsIsAlwaysBuilt) {
  EXPECT_TRUE(communicator_backend_built("threads"));
  ThreadWorld world(1);
  CommunicatorSpec spec;
  spec.backend = "threads";
  spec.thread_world = &world;
  auto comm = make_communicator(spec);
  EXPECT_EQ(comm->backend(), "threads");
  EXPECT_EQ(comm->size(), 1);
  // Self-description: host memory, no stream (every call completes before it returns).
  EXPECT_EQ(comm->memory(), MemorySpace::host);
  EXPECT_EQ(comm->stream(), nullptr);
  EXPECT_EQ(comm->thread_support(), ThreadSupport::concurrent);
  EXPECT_EQ(comm->library_version(), "");
}

TEST(CommunicatorFactory, TableDescribesEveryBackend) {
  std::string names;
  for (const CommunicatorBackend& b : communicator_backends())
    names += (names.empty() ? "" : ", ") + std::string(b.name);
  EXPECT_EQ(communicator_backend_names(), names);
  EXPECT_FALSE(communicator_backend("threads").spans_processes);
  EXPECT_TRUE(communicator_backend("mpi").needs_processes);
  EXPECT_EQ(communicator_backend("mpi").memory, MemorySpace::host);
  EXPECT_EQ(communicator_backend("nccl").memory, MemorySpace::device);
  EXPECT_TRUE(communicator_backend("nccl").spans_processes);
  EXPECT_TRUE(communicator_backend("gloo").spans_processes);
  EXPECT_EQ(communicator_backend("gloo").memory, MemorySpace::host);
  EXPECT_EQ(communicator_backend("threads").bootstrap, Bootstrap::in_process);
  EXPECT_EQ(communicator_backend("mpi").bootstrap, Bootstrap::launcher_world);
  EXPECT_EQ(communicator_backend("gloo").bootstrap, Bootstrap::launch_store);
  EXPECT_EQ(communicator_backend("nccl").bootstrap, Bootstrap::over_host);
  EXPECT_FALSE(communicator_backend("mpi").runs_without_mpi());
  EXPECT_TRUE(communicator_backend("gloo").runs_without_mpi());
  EXPECT_TRUE(communicator_backend("nccl").runs_without_mpi());
  for (const CommunicatorBackend& b : communicator_backends()) {
    EXPECT_EQ(b.built(), communicator_backend_built(b.name)) << b.name;
    EXPECT_TRUE(communicator_backend_known(b.name));
    EXPECT_FALSE(b.link.empty()) << b.name;
    EXPECT_FALSE(b.library.empty()) << b.name;
  }
  EXPECT_FALSE(communicator_backend_known("carrier-pigeon"));
  EXPECT_THROW(communicator_backend("carrier-pigeon"), UsageError);
}

// What coll's header names as the measured library: each backend's own, never another's (it once
// said "NCCL <version>" over threads, MPI and Gloo runs).
TEST(CommunicatorFactory, LibraryLabelNamesTheBackendsLibrary) {
  EXPECT_EQ(library_label(communicator_backend("nccl").library, "2.21.5"), "NCCL 2.21.5");
  EXPECT_EQ(library_label(communicator_backend("gloo").library, "0.5.0"), "Gloo 0.5.0");
  EXPECT_EQ(library_label(communicator_backend("gloo").library, ""), "Gloo");
  // MPI_Get_library_version's first line names its library already.
  EXPECT_EQ(library_label(communicator_backend("mpi").library, "Open MPI v4.1.6"), "Open MPI v4.1.6");
  EXPECT_EQ(library_label(communicator_backend("mpi").library, "MPICH Version:\t4.2.0"), "MPICH Version:\t4.2.0");
  EXPECT_EQ(library_label(communicator_backend("threads").library, ""), "threads (in-process, shared memory)");
}

TEST(CommunicatorFactory, BuiltListMatchesCompileDefinitions) {
#if GCB_HAVE_MPI
  EXPECT_TRUE(communicator_backend_built("mpi"));
#else
  EXPECT_FALSE(communicator_backend_built("mpi"));
#endif
#if GCB_HAVE_GLOO
  EXPECT_TRUE(communicator_backend_built("gloo"));
#else
  EXPECT_FALSE(communicator_backend_built("gloo"));
#endif
#if GCB_HAVE_NCCL
  EXPECT_TRUE(communicator_backend_built("nccl"));
#else
  EXPECT_FALSE(communicator_backend_built("nccl"));
#endif
}

TEST(CommunicatorFactory, CommunicatorForAMemoryAndALaunch) {
  EXPECT_EQ(communicator_for(MemorySpace::host, false), "threads");
  if (communicator_backend_built("mpi")) {
    EXPECT_EQ(communicator_for(MemorySpace::host, true), "mpi");
  } else {
    EXPECT_THROW(communicator_for(MemorySpace::host, true), UsageError);
  }
  if (communicator_backend_built("nccl")) {
    EXPECT_EQ(communicator_for(MemorySpace::device, false), "nccl");
  } else {
    EXPECT_THROW(communicator_for(MemorySpace::device, false), UsageError);
  }
}

// The bootstrap column agrees with the process columns of its row: an in-process world cannot
// span processes; MPI's world and the launch's store are one process per rank.
TEST(CommunicatorFactory, BootstrapAgreesWithTheProcessColumns) {
  for (const CommunicatorBackend& b : communicator_backends()) {
    EXPECT_FALSE(bootstrap_name(b.bootstrap).empty()) << b.name;
    switch (b.bootstrap) {
      case Bootstrap::in_process: EXPECT_FALSE(b.spans_processes) << b.name; break;
      case Bootstrap::launcher_world:
      case Bootstrap::launch_store:
        EXPECT_TRUE(b.spans_processes) << b.name;
        EXPECT_TRUE(b.needs_processes) << b.name;
        break;
      case Bootstrap::over_host: EXPECT_TRUE(b.spans_processes) << b.name; break;
    }
    EXPECT_EQ(b.starts_world(), b.bootstrap != Bootstrap::over_host) << b.name;
  }
}

// Every row's world has a host communicator: the row itself when it starts its world, else a
// built host-memory row that does and fits the launch (the one a device row is made over).
TEST(CommunicatorFactory, HostCommunicatorOfEveryRow) {
  for (const CommunicatorBackend& b : communicator_backends()) {
    for (const bool processes : {false, true}) {
      for (const bool without_mpi : {false, true}) {
        if (!processes && without_mpi) continue;  // a launch without MPI is processes
        if (b.starts_world()) {
          EXPECT_EQ(&host_communicator_for(b, processes, without_mpi), &b) << b.name;
          continue;
        }
        try {
          const CommunicatorBackend& h = host_communicator_for(b, processes, without_mpi);
          EXPECT_TRUE(h.built()) << b.name;
          EXPECT_TRUE(h.starts_world()) << b.name;
          EXPECT_EQ(h.memory, MemorySpace::host) << b.name;
          EXPECT_EQ(processes ? h.spans_processes : !h.needs_processes, true) << b.name << " over " << h.name;
          if (without_mpi) {
            EXPECT_TRUE(h.runs_without_mpi()) << b.name << " over " << h.name;
          }
        } catch (const UsageError& e) {
          // Only when no built row could be the host; the message names the rows that could.
          bool any = false;
          for (const CommunicatorBackend& h : communicator_backends())
            any =
                any || (h.built() && h.starts_world() && h.memory == MemorySpace::host &&
                        (processes ? h.spans_processes : !h.needs_processes) && (!without_mpi || h.runs_without_mpi()));
          EXPECT_FALSE(any) << b.name << ": " << e.what();
        }
      }
    }
  }
  // In one process the in-process row is the host of an over_host row.
  for (const CommunicatorBackend& b : communicator_backends())
    if (!b.starts_world()) {
      EXPECT_EQ(host_communicator_for(b, false, false).bootstrap, Bootstrap::in_process);
    }
}

TEST(CommunicatorFactory, BadRequests) {
  CommunicatorSpec spec;
  spec.backend = "carrier-pigeon";
  EXPECT_THROW(make_communicator(spec), UsageError);
  try {
    spec.backend = "carrier-pigeon";
    make_communicator(spec);
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("known: " + communicator_backend_names()), std::string::npos) << e.what();
  }
  // A spec without what its row's bootstrap reads (the World always gives it) is a fault; a row
  // this binary lacks is the user's request.
  for (const CommunicatorBackend& b : communicator_backends()) {
    if (b.bootstrap == Bootstrap::launcher_world) continue;  // reads nothing from the spec
    spec = CommunicatorSpec{};
    spec.backend = b.name;
    if (b.built()) {
      EXPECT_THROW(make_communicator(spec), Fault) << b.name;
    } else {
      EXPECT_THROW(make_communicator(spec), UsageError) << b.name;
    }
  }
}

}  // namespace
}  // namespace gcb
