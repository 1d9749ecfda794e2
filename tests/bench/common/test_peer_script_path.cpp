// Where gcbench looks for its peer scripts (bench/common/peer_script.hpp find_peer_script): $GCB_PEERS_DIR
// alone when set, else beside the binary (a bundle copied anywhere: bin/gcbench next to peers/), and
// the source folder last (a build tree). A bundle moved to another folder still finds its scripts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/common/peer_script.hpp"

namespace gcb::bench {
namespace {

namespace fs = std::filesystem;

class PeerScriptPath : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gcb-peer-path-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // An empty file at root_/rel (folders made).
  fs::path touch(const std::string& rel) const {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p).put('\n');
    return p;
  }
  fs::path root_;
};

TEST_F(PeerScriptPath, BundleFindsPeersBesideItsBinFolderWhereverItIsCopied) {
  const fs::path script = touch("moved/.lease/peers/torch_matmul.py");
  const fs::path exe = root_ / "moved/.lease/bin/gcbench";
  // The source folder is given but lacks the script (the bundle's build tree is on another machine).
  const auto found = find_peer_script("torch_matmul.py", nullptr, exe, (root_ / "gone").string());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, script);
}

TEST_F(PeerScriptPath, PeersFolderNextToTheBinaryComesBeforeTheOneAbove) {
  const fs::path beside = touch("b/bin/peers/torch_sdpa.py");
  touch("b/peers/torch_sdpa.py");
  const auto found = find_peer_script("torch_sdpa.py", nullptr, root_ / "b/bin/gcbench", "");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, beside);
}

TEST_F(PeerScriptPath, BuildTreeFallsBackToTheSourceFolder) {
  const fs::path src = touch("src/scripts/peers/torch_gpt.py");
  const auto found =
      find_peer_script("torch_gpt.py", nullptr, root_ / "elsewhere/build/bench/gcbench", (root_ / "src").string());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, src);
}

TEST_F(PeerScriptPath, EnvironmentFolderIsTheOnlyPlaceWhenSet) {
  const fs::path env = touch("env/torch_gpt.py");
  touch("b/peers/torch_gpt.py");
  const fs::path exe = root_ / "b/bin/gcbench";
  const std::string env_dir = (root_ / "env").string();
  EXPECT_EQ(find_peer_script("torch_gpt.py", env_dir.c_str(), exe, ""), env);
  // Set to a folder without the script: not found, although one lies beside the binary.
  const std::string empty_dir = (root_ / "none").string();
  EXPECT_FALSE(find_peer_script("torch_gpt.py", empty_dir.c_str(), exe, "").has_value());
  const auto tried = peer_script_candidates("torch_gpt.py", empty_dir.c_str(), exe, "");
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_EQ(tried[0], root_ / "none/torch_gpt.py");
}

TEST_F(PeerScriptPath, NothingFoundListsEveryPlaceTried) {
  const fs::path exe = root_ / "x/bin/gcbench";
  EXPECT_FALSE(find_peer_script("torch_gpt.py", nullptr, exe, (root_ / "src").string()).has_value());
  const auto tried = peer_script_candidates("torch_gpt.py", nullptr, exe, (root_ / "src").string());
  ASSERT_EQ(tried.size(), 3u);
  EXPECT_EQ(tried[0], root_ / "x/bin/peers/torch_gpt.py");
  EXPECT_EQ(tried[1], root_ / "x/peers/torch_gpt.py");
  EXPECT_EQ(tried[2], root_ / "src/scripts/peers/torch_gpt.py");
}

}  // namespace
}  // namespace gcb::bench
