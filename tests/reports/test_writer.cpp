// The output layer (reports/writer.hpp): atomic writes of regular files, in-place writes of
// devices and FIFOs, symlinks kept, write failures as WriteError (never UsageError), the
// appending JSONL sink, and the up-front path checks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

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

// `--json /dev/stdout > file`: the document went through a second open of the file at offset 0
// and what the program printed later through fd 1 (at ITS offset 0) overwrote the document.
TEST_F(Writer, OurOwnStandardOutputIsWrittenThroughItsDescriptorInOrder) {
  for (const char* target : {"/dev/stdout", "/proc/self/fd/1"}) {
    std::fflush(stdout);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const int fd = ::open(path("out.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);  // `>`, not `>>`
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) _exit(10);
      std::printf("printed before\n");  // still in stdio's buffer: must come first
      try {
        write_output(target, "{\"document\": 1}\n");
        JsonlSink sink(target);
        sink.append(result("mem/a"));
      } catch (...) {
        _exit(11);
      }
      std::printf("summary line\n");
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << target << " " << status;
    std::istringstream lines(slurp(path("out.txt")));
    std::string line;
    std::vector<std::string> got;
    while (std::getline(lines, line)) got.push_back(line);
    ASSERT_EQ(got.size(), 4u) << target << "\n" << slurp(path("out.txt"));
    EXPECT_EQ(got[0], "printed before") << target;
    EXPECT_EQ(got[1], "{\"document\": 1}") << target;
    EXPECT_EQ(nlohmann::json::parse(got[2]).at("result").at("key"), "mem/a") << target;
    EXPECT_EQ(got[3], "summary line") << target;
  }
}

// The kernel's protected_symlinks rule, applied by the writer itself (it resolves links to keep
// them links): another user's link in a sticky world-writable folder is not followed.
TEST_F(Writer, ALinkPlantedByAnotherUserInAStickyFolderIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link another owner (lchown)";
  fs::create_directories(path("st"));
  ASSERT_EQ(::chmod(path("st").c_str(), 01777), 0);
  std::ofstream(path("secret.txt")) << "root's";
  ASSERT_EQ(::symlink(path("secret.txt").c_str(), path("st/o.json").c_str()), 0);
  ASSERT_EQ(::lchown(path("st/o.json").c_str(), 65534, 65534), 0);
  try {
    check_writable(path("st/o.json"));
    ADD_FAILURE() << "the planted link was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not followed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_output_paths({{"--json", path("st/o.json")}}), UsageError);
  EXPECT_THROW(write_output(path("st/o.json"), "replaced"), WriteError);
  EXPECT_EQ(slurp(path("secret.txt")), "root's");
  EXPECT_TRUE(fs::is_symlink(path("st/o.json")));
  // Our own link there is followed, and so is one owned by the folder's owner.
  ASSERT_EQ(::lchown(path("st/o.json").c_str(), 0, 0), 0);
  write_output(path("st/o.json"), "ours");
  EXPECT_EQ(slurp(path("secret.txt")), "ours");
  ASSERT_EQ(::chown(path("st").c_str(), 65534, 65534), 0);
  ASSERT_EQ(::lchown(path("st/o.json").c_str(), 65534, 65534), 0);
  write_output(path("st/o.json"), "the folder owner's");
  EXPECT_EQ(slurp(path("secret.txt")), "the folder owner's");
}

// A 255-byte name used to fail after the run: "NAME.tmp.PID" and "gcbench-rescued-PID-NAME" were
// over NAME_MAX, and "PATH.tmp.PID" over PATH_MAX for a path near 4,095 bytes.
TEST_F(Writer, TemporaryAndRescueNamesFitWhereverTheNameFits) {
  const std::string longest(NAME_MAX - 5, 'n');
  write_output(path((longest + ".json").c_str()), "long name");
  EXPECT_EQ(slurp(path((longest + ".json").c_str())), "long name");
  expect_only({longest + ".json"});

  // A path of PATH_MAX - 1 bytes: folders of 200 bytes, then a name that fills the rest.
  fs::path deep = dir_;
  while (deep.string().size() + 201 < PATH_MAX - 2) deep /= std::string(200, 'd');
  fs::create_directories(deep);
  const std::string full = (deep / std::string(PATH_MAX - 2 - deep.string().size(), 'f')).string();
  ASSERT_EQ(full.size(), static_cast<size_t>(PATH_MAX - 1));
  EXPECT_NO_THROW(check_writable(full));
  write_output(full, "full path");
  EXPECT_EQ(slurp(full), "full path");
  EXPECT_EQ(std::distance(fs::directory_iterator(deep), fs::directory_iterator{}), 1);  // no temporary left

  // One byte more does not fit: refused up front (exit 2), not after the run.
  EXPECT_THROW(check_writable(full + "f"), UsageError);
  EXPECT_THROW(check_writable(path((longest + ".jsonx").c_str())), UsageError);

  // The rescue name keeps the end of a long name, fits NAME_MAX, and can be written.
  const std::string rescue = rescue_path("/no/such/" + longest + ".json");
  const std::string rescue_name = fs::path(rescue).filename().string();
  EXPECT_LE(rescue_name.size(), static_cast<size_t>(NAME_MAX)) << rescue;
  EXPECT_TRUE(rescue_name.starts_with("gcbench-rescued-")) << rescue;
  EXPECT_TRUE(rescue_name.ends_with("nnnn.json")) << rescue;
  write_output(rescue, "rescued");
  EXPECT_EQ(slurp(rescue), "rescued");
  fs::remove(rescue);
  EXPECT_EQ(fs::path(rescue_path("/x/short.json")).filename().string(),
            "gcbench-rescued-" + std::to_string(getpid()) + "-short.json");
}

}  // namespace
}  // namespace gcb
