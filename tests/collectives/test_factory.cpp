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
  EXPECT_EQ(communicator_backend_names(), "threads, mpi, gloo, nccl");
  EXPECT_FALSE(communicator_backend("threads").spans_processes);
  EXPECT_TRUE(communicator_backend("mpi").needs_processes);
  EXPECT_EQ(communicator_backend("mpi").memory, MemorySpace::host);
  EXPECT_EQ(communicator_backend("nccl").memory, MemorySpace::device);
  EXPECT_TRUE(communicator_backend("nccl").spans_processes);
  EXPECT_TRUE(communicator_backend("gloo").spans_processes);
  EXPECT_EQ(communicator_backend("gloo").memory, MemorySpace::host);
  EXPECT_TRUE(communicator_needs_mpi_launch("mpi"));
  EXPECT_FALSE(communicator_needs_mpi_launch("gloo"));
  EXPECT_FALSE(communicator_needs_mpi_launch("nccl"));
  for (const CommunicatorBackend& b : communicator_backends()) {
    EXPECT_EQ(b.built(), communicator_backend_built(b.name)) << b.name;
    EXPECT_TRUE(communicator_backend_known(b.name));
    EXPECT_FALSE(b.link.empty()) << b.name;
    EXPECT_FALSE(b.library.empty()) << b.name;
  }
  EXPECT_FALSE(communicator_backend_known("ucc"));
  EXPECT_THROW(communicator_backend("ucc"), UsageError);
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

TEST(CommunicatorFactory, BadRequestsAreUsageErrors) {
  CommunicatorSpec spec;
  spec.backend = "ucc";
  EXPECT_THROW(make_communicator(spec), UsageError);
  spec.backend = "gloo";  // no store or device given (or not built)
  EXPECT_THROW(make_communicator(spec), UsageError);
  spec.backend = "threads";  // no world given
  EXPECT_THROW(make_communicator(spec), UsageError);
  try {
    spec.backend = "ucc";
    make_communicator(spec);
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("known: threads, mpi, gloo, nccl"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gcb
