// The job store in the process (serving/state/local_job_store.h) over both its backings, memory
// and a directory: a job's states and progress, results read in ranges, ids as capabilities,
// expiry by the clock given, the bounds on jobs and on results' bytes, and the directory's files.
#include "serving/state/local_job_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "serving/state/job_id.h"
#include "tests/test_lib/fake_clock.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using testing::FakeClock;
using ::testing::HasSubstr;
using testing::TempDir;
using ::testing::UnorderedElementsAre;

std::vector<std::string> FilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// The same id with one character of its secret changed (still a well-formed id).
std::string OtherSecret(const std::string& id) {
  std::string other = id;
  other[20] = other[20] == 'A' ? 'B' : 'A';
  return other;
}

class LocalJobStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  bool in_directory() const { return GetParam(); }

  std::unique_ptr<LocalJobStore> MakeStore(LocalJobStore::Options options) {
    auto now = [this] { return clock_.Now(); };
    if (!in_directory()) return std::make_unique<LocalJobStore>(options, now);
    absl::StatusOr<std::unique_ptr<LocalJobStore>> store =
        LocalJobStore::InDirectory((dir_.path() / "jobs").string(), options, now);
    EXPECT_TRUE(store.ok()) << store.status();
    return *std::move(store);
  }

  FakeClock clock_;
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Backings, LocalJobStoreTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Directory" : "Memory"; });

TEST_P(LocalJobStoreTest, AJobGoesFromQueuedThroughProgressToItsResult) {
  LocalJobStore::Options options;
  options.retention = absl::Minutes(10);
  auto store = MakeStore(options);
  ASSERT_OK_AND_ASSIGN(const JobRecord made, store->Create("alice"));
  EXPECT_EQ(made.owner, "alice");
  EXPECT_EQ(made.state, JobState::kQueued);
  EXPECT_EQ(made.created, FakeClock::Start());
  EXPECT_EQ(made.expires, FakeClock::Start() + absl::Minutes(10));

  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(store->SetProgress(made.id, 3, 7).ok());
  ASSERT_OK_AND_ASSIGN(JobRecord running, store->Get(made.id));
  EXPECT_EQ(running.state, JobState::kRunning);
  EXPECT_EQ(running.sentences_done, 3);
  EXPECT_EQ(running.sentences_total, 7);
  EXPECT_EQ(store->ReadResult(made.id, 0, 10).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->SetProgress(made.id, 8, 7).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->SetProgress(made.id, -1, 7).code(), absl::StatusCode::kInvalidArgument);

  // Binary-safe: NUL bytes and a CR LF pair come back as they went in.
  const std::string result("Hallo\0Welt\r\n", 12);
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(
      store->PutResult(made.id, result, "text/plain", "hello.de.txt", {{0, 2}, {6, 9}}).ok());
  ASSERT_OK_AND_ASSIGN(JobRecord done, store->Get(made.id));
  EXPECT_EQ(done.state, JobState::kDone);
  EXPECT_EQ(done.sentences_done, 7);
  EXPECT_EQ(done.result_bytes, 12);
  EXPECT_EQ(done.result_media_type, "text/plain");
  EXPECT_EQ(done.result_file_name, "hello.de.txt");
  EXPECT_EQ(done.dropped, (std::vector<ByteRange>{{0, 2}, {6, 9}}));
  // Kept for the retention from when it finished.
  EXPECT_EQ(done.expires, FakeClock::Start() + absl::Seconds(10) + absl::Minutes(10));

  ASSERT_OK_AND_ASSIGN(const std::string all, store->ReadResult(made.id, 0, 100));
  EXPECT_EQ(all, result);
  ASSERT_OK_AND_ASSIGN(const std::string middle, store->ReadResult(made.id, 5, 5));
  EXPECT_EQ(middle, std::string("\0Welt", 5));
  ASSERT_OK_AND_ASSIGN(const std::string tail, store->ReadResult(made.id, 10, 5));
  EXPECT_EQ(tail, "\r\n");
  ASSERT_OK_AND_ASSIGN(const std::string past, store->ReadResult(made.id, 12, 5));
  EXPECT_EQ(past, "");
  EXPECT_EQ(store->ReadResult(made.id, -1, 5).status().code(), absl::StatusCode::kInvalidArgument);

  // Final: nothing moves it on.
  EXPECT_EQ(store->SetProgress(made.id, 1, 7).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Finish(made.id, absl::CancelledError("by its caller")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->PutResult(made.id, "again", "text/plain", "x", {}).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(const JobRecord still, store->Get(made.id));
  EXPECT_EQ(still.state, JobState::kDone);
}

TEST_P(LocalJobStoreTest, FailedAndCancelledJobsKeepWhy) {
  auto store = MakeStore({});
  ASSERT_OK_AND_ASSIGN(const JobRecord failing, store->Create(""));
  ASSERT_TRUE(store->Finish(failing.id, absl::InvalidArgumentError("notes.srt: not SubRip")).ok());
  ASSERT_OK_AND_ASSIGN(const JobRecord failed, store->Get(failing.id));
  EXPECT_EQ(failed.state, JobState::kFailed);
  EXPECT_EQ(failed.error, absl::InvalidArgumentError("notes.srt: not SubRip"));
  EXPECT_EQ(store->Finish(failing.id, absl::InternalError("x")).code(),
            absl::StatusCode::kFailedPrecondition);

  ASSERT_OK_AND_ASSIGN(const JobRecord cancelling, store->Create(""));
  ASSERT_TRUE(store->SetProgress(cancelling.id, 1, 4).ok());
  ASSERT_TRUE(store->Finish(cancelling.id, absl::CancelledError("cancelled by its caller")).ok());
  ASSERT_OK_AND_ASSIGN(const JobRecord cancelled, store->Get(cancelling.id));
  EXPECT_EQ(cancelled.state, JobState::kCancelled);
  // Its runner learns of it at its next step, and its result is not kept.
  const absl::Status progress = store->SetProgress(cancelling.id, 2, 4);
  EXPECT_EQ(progress.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(progress.message(), HasSubstr("cancelled by its caller"));
  EXPECT_EQ(store->PutResult(cancelling.id, "text", "text/plain", "a.txt", {}).code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(store->stats().result_bytes, 0);

  EXPECT_EQ(store->Finish(cancelling.id, absl::OkStatus()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(LocalJobStoreTest, OnlyTheExactIdNamesAJob) {
  auto store = MakeStore({});
  ASSERT_OK_AND_ASSIGN(const JobRecord made, store->Create("alice"));
  ASSERT_TRUE(store->Get(made.id).ok());
  // Same selector, another secret: as unknown as any other id.
  const std::string guessed = OtherSecret(made.id);
  ASSERT_NE(guessed, made.id);
  ASSERT_TRUE(SplitJobId(guessed).has_value());
  EXPECT_EQ(SplitJobId(guessed)->selector, SplitJobId(made.id)->selector);
  for (const std::string& id :
       {guessed, std::string("nonsense"), std::string(""), made.id.substr(0, 31), made.id + "A"}) {
    EXPECT_EQ(store->Get(id).status().code(), absl::StatusCode::kNotFound) << id;
    EXPECT_EQ(store->SetProgress(id, 0, 1).code(), absl::StatusCode::kNotFound) << id;
    EXPECT_EQ(store->Delete(id).code(), absl::StatusCode::kNotFound) << id;
    EXPECT_EQ(store->PutResult(id, "x", "text/plain", "x", {}).code(), absl::StatusCode::kNotFound);
  }
  EXPECT_TRUE(store->Get(made.id).ok());
}

TEST_P(LocalJobStoreTest, JobsExpireByTheClock) {
  LocalJobStore::Options options;
  options.retention = absl::Minutes(10);
  auto store = MakeStore(options);
  ASSERT_OK_AND_ASSIGN(const JobRecord unfinished, store->Create("a"));
  clock_.Advance(absl::Minutes(5));
  ASSERT_OK_AND_ASSIGN(const JobRecord finishing, store->Create("a"));
  ASSERT_TRUE(store->PutResult(finishing.id, "result", "text/plain", "a.txt", {}).ok());

  clock_.Advance(absl::Minutes(5) - absl::Seconds(1));
  EXPECT_TRUE(store->Get(unfinished.id).ok());
  clock_.Advance(absl::Seconds(1));
  // Ten minutes after it was made and never finished: gone, and its runner is told.
  EXPECT_EQ(store->Get(unfinished.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->SetProgress(unfinished.id, 1, 2).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store->Get(finishing.id).ok());
  EXPECT_EQ(store->stats().expired, 1);

  clock_.Advance(absl::Minutes(5));
  store->RemoveExpired();
  const JobStore::Stats stats = store->stats();
  EXPECT_EQ(stats.jobs, 0);
  EXPECT_EQ(stats.result_bytes, 0);
  EXPECT_EQ(stats.expired, 2);
  EXPECT_EQ(store->ReadResult(finishing.id, 0, 10).status().code(), absl::StatusCode::kNotFound);
  if (in_directory()) {
    EXPECT_THAT(FilesIn(dir_.path() / "jobs"), ::testing::IsEmpty());
  }
}

TEST_P(LocalJobStoreTest, CreateRefusesJobsPastTheLimitNamingIt) {
  LocalJobStore::Options options;
  options.max_jobs = 2;
  options.retention = absl::Minutes(1);
  auto store = MakeStore(options);
  ASSERT_TRUE(store->Create("a").ok());
  ASSERT_TRUE(store->Create("b").ok());
  const absl::Status refused = store->Create("c").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("limit of 2 jobs"));
  clock_.Advance(absl::Minutes(1));
  EXPECT_TRUE(store->Create("c").ok());
}

TEST_P(LocalJobStoreTest, ResultsPastTheTotalEvictTheOldestDoneJobs) {
  LocalJobStore::Options options;
  options.max_result_bytes = 100;
  auto store = MakeStore(options);
  ASSERT_OK_AND_ASSIGN(const JobRecord first, store->Create("a"));
  ASSERT_OK_AND_ASSIGN(const JobRecord second, store->Create("a"));
  ASSERT_OK_AND_ASSIGN(const JobRecord third, store->Create("a"));
  ASSERT_OK_AND_ASSIGN(const JobRecord running, store->Create("a"));
  ASSERT_OK_AND_ASSIGN(const JobRecord failed, store->Create("a"));
  ASSERT_TRUE(store->SetProgress(running.id, 0, 3).ok());
  ASSERT_TRUE(store->Finish(failed.id, absl::InternalError("x")).ok());
  // Finished in the order second, first: second is the oldest result.
  ASSERT_TRUE(store->PutResult(second.id, std::string(40, 's'), "text/plain", "s", {}).ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(store->PutResult(first.id, std::string(40, 'f'), "text/plain", "f", {}).ok());
  EXPECT_EQ(store->stats().result_bytes, 80);

  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(store->PutResult(third.id, std::string(40, 't'), "text/plain", "t", {}).ok());
  EXPECT_EQ(store->Get(second.id).status().code(), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(const std::string kept, store->ReadResult(first.id, 0, 100));
  EXPECT_EQ(kept, std::string(40, 'f'));
  // Jobs without results are not evicted for room.
  EXPECT_TRUE(store->Get(running.id).ok());
  EXPECT_TRUE(store->Get(failed.id).ok());
  JobStore::Stats stats = store->stats();
  EXPECT_EQ(stats.result_bytes, 80);
  EXPECT_EQ(stats.evicted, 1);

  // A result larger than the whole total is refused, and the job stays as it was.
  const absl::Status refused = store->PutResult(running.id, std::string(101, 'r'), "t", "r", {});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("limit of 100 bytes"));
  ASSERT_OK_AND_ASSIGN(const JobRecord after, store->Get(running.id));
  EXPECT_EQ(after.state, JobState::kRunning);
  stats = store->stats();
  EXPECT_EQ(stats.result_bytes, 80);
  EXPECT_EQ(stats.evicted, 1);
  // One that fits exactly evicts every other result.
  ASSERT_TRUE(store->PutResult(running.id, std::string(100, 'r'), "t", "r", {}).ok());
  EXPECT_EQ(store->Get(first.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Get(third.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->stats().result_bytes, 100);
  if (in_directory()) {
    EXPECT_EQ(FilesIn(dir_.path() / "jobs").size(), 1u);
  }
}

TEST_P(LocalJobStoreTest, DeleteAndListByOwner) {
  auto store = MakeStore({});
  ASSERT_OK_AND_ASSIGN(const JobRecord a1, store->Create("alice"));
  ASSERT_OK_AND_ASSIGN(const JobRecord b1, store->Create("bob"));
  ASSERT_OK_AND_ASSIGN(const JobRecord a2, store->Create("alice"));
  ASSERT_TRUE(store->PutResult(a2.id, "done", "text/plain", "a.txt", {}).ok());
  std::vector<JobRecord> alice = store->ListByOwner("alice");
  ASSERT_EQ(alice.size(), 2u);
  EXPECT_EQ(alice[0].id, a1.id);
  EXPECT_EQ(alice[1].id, a2.id);
  EXPECT_EQ(alice[1].state, JobState::kDone);
  EXPECT_TRUE(store->ListByOwner("carol").empty());

  ASSERT_TRUE(store->Delete(a2.id).ok());
  EXPECT_EQ(store->Get(a2.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Delete(a2.id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->stats().result_bytes, 0);
  // An unfinished job's runner is told it is gone.
  ASSERT_TRUE(store->Delete(b1.id).ok());
  EXPECT_EQ(store->SetProgress(b1.id, 1, 1).code(), absl::StatusCode::kNotFound);
  alice = store->ListByOwner("alice");
  ASSERT_EQ(alice.size(), 1u);
  EXPECT_EQ(alice[0].id, a1.id);
  if (in_directory()) {
    EXPECT_THAT(FilesIn(dir_.path() / "jobs"), ::testing::IsEmpty());
  }
}

TEST_P(LocalJobStoreTest, ConcurrentRunnersAndReadersSeeWholeResults) {
  LocalJobStore::Options options;
  options.max_result_bytes = 8 * 1000;  // Room for every result.
  auto store = MakeStore(options);
  constexpr int kJobs = 8;
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_OK_AND_ASSIGN(const JobRecord made, store->Create(absl::StrCat("owner", i % 2)));
    ids.push_back(made.id);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kJobs; ++i) {
    threads.emplace_back([&, i] {
      for (int done = 0; done <= 10; ++done) EXPECT_TRUE(store->SetProgress(ids[i], done, 10).ok());
      EXPECT_TRUE(store->PutResult(ids[i], std::string(1000, 'a' + i), "text/plain", "r", {}).ok());
    });
    threads.emplace_back([&, i] {
      // Whatever it reads is a whole state: a result, when there is one, is all there.
      for (int k = 0; k < 50; ++k) {
        absl::StatusOr<std::string> read = store->ReadResult(ids[i], 0, 2000);
        if (read.ok()) {
          EXPECT_EQ(*read, std::string(1000, 'a' + i));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_OK_AND_ASSIGN(const std::string read, store->ReadResult(ids[i], 0, 2000));
    EXPECT_EQ(read, std::string(1000, 'a' + i));
  }
  EXPECT_EQ(store->stats().result_bytes, 8000);
  EXPECT_EQ(store->ListByOwner("owner0").size(), 4u);
}

TEST(LocalJobStoreDirectoryTest, ResultsAreFilesRemovedWithTheStore) {
  TempDir dir;
  FakeClock clock;
  const std::string jobs = (dir.path() / "jobs").string();
  ASSERT_OK_AND_ASSIGN(auto store,
                       LocalJobStore::InDirectory(jobs, {}, [&] { return clock.Now(); }));
  ASSERT_OK_AND_ASSIGN(const JobRecord made, store->Create("a"));
  ASSERT_TRUE(store->PutResult(made.id, "Hallo", "text/plain", "a.txt", {}).ok());
  // One result file, named by the selector, not the secret; no temporary file left.
  const std::vector<std::string> files = FilesIn(jobs);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0],
            absl::StrCat("job-", absl::BytesToHexString(SplitJobId(made.id)->selector), ".result"));
  std::ifstream in(std::filesystem::path(jobs) / files[0], std::ios::binary);
  const std::string contents((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "Hallo");
  store.reset();
  EXPECT_THAT(FilesIn(jobs), ::testing::IsEmpty());
}

TEST(LocalJobStoreDirectoryTest, AStartRemovesAPreviousProcessesFilesOnly) {
  TempDir dir;
  FakeClock clock;
  dir.Write("job-0011223344556677.result", "old result");
  dir.Write("job-0011223344556677-3.tmp", "half a result");
  dir.Write("notes.txt", "the operator's");
  dir.Write("job-readme.md", "not ours either");
  ASSERT_OK_AND_ASSIGN(
      auto store, LocalJobStore::InDirectory(dir.path().string(), {}, [&] { return clock.Now(); }));
  EXPECT_THAT(FilesIn(dir.path()), UnorderedElementsAre("notes.txt", "job-readme.md"));
  EXPECT_EQ(store->stats().jobs, 0);
}

TEST(LocalJobStoreDirectoryTest, ADirectoryThatCannotBeMadeIsAnError) {
  TempDir dir;
  dir.Write("file", "x");
  FakeClock clock;
  const absl::StatusOr<std::unique_ptr<LocalJobStore>> store = LocalJobStore::InDirectory(
      (dir.path() / "file" / "jobs").string(), {}, [&] { return clock.Now(); });
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("job directory"));
}

}  // namespace
}  // namespace mtserve
