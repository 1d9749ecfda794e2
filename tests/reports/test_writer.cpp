// The output layer (reports/writer.hpp): atomic writes of regular files, in-place writes of
// devices and FIFOs, symlinks kept, write failures as WriteError (never UsageError), the
// appending JSONL sink, and the up-front path checks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result result(const std::string& key) {
  Result r;
  r.key = key;
  r.metrics = {Metric{"bandwidth", 1.0, "GB/s", true, std::nullopt, ""}};
  return r;
}

class Writer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gcb-writer-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  // Nothing but `names` in the folder: no temporary file left behind.
  void expect_only(std::initializer_list<std::string> names) const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
      ++n;
      EXPECT_NE(std::find(names.begin(), names.end(), e.path().filename().string()), names.end()) << e.path();
    }
    EXPECT_EQ(n, names.size());
  }
  fs::path dir_;
};

TEST_F(Writer, DevicesAreWrittenInPlaceNotReplaced) {
  // The old writer renamed a temporary file over the target: /dev/null became a regular file
  // (as root), or the write failed as "bad input".
  write_output("/dev/null", "{}\n");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(Writer, AFullDeviceIsAWriteErrorNotBadInput) {
  try {
    write_output("/dev/full", "text");
    FAIL() << "no error";
  } catch (const UsageError&) {
    FAIL() << "a full disk is not bad input";
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
}

TEST_F(Writer, ASymlinkStaysALinkAndItsTargetIsWritten) {
  std::ofstream(path("target.json")) << "old";
  fs::create_symlink("target.json", path("link.json"));
  write_output(path("link.json"), "new");
  EXPECT_TRUE(fs::is_symlink(path("link.json")));
  EXPECT_EQ(slurp(path("target.json")), "new");
  // A dangling link gets its target created.
  fs::create_symlink("later.json", path("dangling.json"));
  write_output(path("dangling.json"), "made");
  EXPECT_TRUE(fs::is_symlink(path("dangling.json")));
  EXPECT_EQ(slurp(path("later.json")), "made");
  expect_only({"target.json", "link.json", "dangling.json", "later.json"});
}

TEST_F(Writer, AFifoIsWrittenInPlace) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(path("pipe")); });
  write_output(path("pipe"), "through the pipe");
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::stat(path("pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(Writer, ARegularFileIsReplacedAtomicallyAndKeepsItsMode) {
  std::ofstream(path("r.json")) << "old";
  fs::permissions(path("r.json"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_output(path("r.json"), "new");
  EXPECT_EQ(slurp(path("r.json")), "new");
  EXPECT_EQ(fs::status(path("r.json")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  expect_only({"r.json"});
}

TEST_F(Writer, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  std::ofstream(path("r.json")) << "measured before";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A 4 KiB file size limit stands in for a full disk: the write fails with EFBIG.
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_output(path("r.json"), std::string(1 << 20, 'x'));
    } catch (const WriteError&) {
      _exit(0);
    } catch (...) {
      _exit(2);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error reported, 2: the wrong error";
  EXPECT_EQ(slurp(path("r.json")), "measured before");
  expect_only({"r.json"});
}

TEST_F(Writer, JsonlAppendsToAnExistingFile) {
  {
    JsonlSink sink(path("r.jsonl"));
    sink.append(result("a/1"));
  }
  {
    JsonlSink sink(path("r.jsonl"));  // a rerun after an interruption
    sink.append(result("a/2"));
  }
  const ResultDocument d = load_document(path("r.jsonl"));
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[0].key, "a/1");
  EXPECT_EQ(d.results[1].key, "a/2");
}

TEST_F(Writer, JsonlCreatesNothingBeforeTheFirstResult) {
  { JsonlSink sink(path("r.jsonl")); }
  EXPECT_FALSE(fs::exists(path("r.jsonl")));
}

TEST_F(Writer, JsonlEndsAPartialLastLineBeforeAppending) {
  std::ofstream(path("r.jsonl")) << R"({"result": {"key": "cut sh)";  // a killed writer's last line
  {
    JsonlSink sink(path("r.jsonl"));
    sink.append(result("a/after"));
  }
  const ResultDocument d = load_document(path("r.jsonl"));
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].key, "a/after");
}

TEST_F(Writer, JsonlWriteFailureIsKeptNotThrown) {
  JsonlSink sink("/dev/full");
  EXPECT_NO_THROW(sink.append(result("a/1")));
  EXPECT_NE(sink.error().find("No space left"), std::string::npos) << sink.error();
  EXPECT_EQ(sink.appended(), 0u);
}

TEST_F(Writer, AnOutputThatIsAnInputIsRefused) {
  std::ofstream(path("base.json")) << "{}";
  EXPECT_THROW(check_output_paths({{"-o", path("base.json")}}, {{"BASE", path("base.json")}}), UsageError);
  // The same file under another name.
  fs::create_symlink("base.json", path("alias.json"));
  EXPECT_THROW(check_output_paths({{"-o", path("alias.json")}}, {{"BASE", path("base.json")}}), UsageError);
  fs::create_hard_link(path("base.json"), path("hard.json"));
  EXPECT_THROW(check_output_paths({{"-o", path("hard.json")}}, {{"BASE", path("base.json")}}), UsageError);
  EXPECT_NO_THROW(check_output_paths({{"-o", path("other.json")}}, {{"BASE", path("base.json")}}));
  expect_only({"base.json", "alias.json", "hard.json"});  // the checks create nothing
}

TEST_F(Writer, TwoOutputsThatAreOneFileAreRefused) {
  EXPECT_THROW(check_output_paths({{"--json", path("f")}, {"--csv", path("f")}}), UsageError);
  EXPECT_THROW(check_output_paths({{"--json", path("f")}, {"--csv", (dir_ / "." / "f").string()}}), UsageError);
  // Devices may be named twice: both outputs go to the same sink on purpose.
  EXPECT_NO_THROW(check_output_paths({{"--json", "/dev/null"}, {"--csv", "/dev/null"}}));
  EXPECT_NO_THROW(check_output_paths({{"--json", path("a")}, {"--csv", path("b")}, {"--jsonl", ""}}));
}

TEST_F(Writer, FoldersAndMissingFoldersAreRefused) {
  EXPECT_THROW(check_writable(dir_.string()), UsageError);
  EXPECT_THROW(check_writable(path("missing/x.json")), UsageError);
  EXPECT_NO_THROW(check_writable(path("x.json")));
  EXPECT_NO_THROW(check_writable("/dev/stdout"));
}

}  // namespace
}  // namespace gcb
