// File jobs in process (serving/file_jobs.h), no sockets: files submitted as a front end hands
// them over, translated by a core serving the embedded model (the real engine: a file's result is
// the core's translation of the same text in the same format, asked for as a text) or the fake
// engine (tests/test_lib/fake_engine.h: cancellation and deadlines at a step the test chooses),
// into a LocalJobStore in memory. Expected errors are the ones docs/api.md documents.
#include "serving/file_jobs.h"

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/metrics.h"
#include "serving/request_limits.h"
#include "serving/state/local_job_store.h"
#include "serving/translation_core.h"
#include "tests/test_lib/api_key_files.h"
#include "tests/test_lib/fake_engine.h"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/zip_archive.h"
#include "text/text_translation.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kModel[] = "multi30k-en-de";

// Three sentences: the heading's, and two in the paragraph.
constexpr char kMarkdown[] = "# A dog runs\n\nA man sleeps. A woman reads a book.\n";
// Two cues of a sentence each.
constexpr char kSrt[] =
    "1\n00:00:01,000 --> 00:00:02,000\nA dog runs.\n\n"
    "2\n00:00:03,000 --> 00:00:04,000\nA man sleeps.\n";

// A Word document of one paragraph, as Word's own packages are laid out (the content types, the
// package's relationships, the main part), made here with libzip.
std::string Docx(absl::string_view paragraph) {
  constexpr absl::string_view kW = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
  return testing::ZipArchive({
      {"[Content_Types].xml",
       "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
       "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
       "<Default Extension=\"rels\" "
       "ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
       "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
       "<Override PartName=\"/word/document.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>"},
      {"_rels/.rels",
       "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
       "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
       "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/"
       "relationships/officeDocument\" Target=\"word/document.xml\"/></Relationships>"},
      {"word/document.xml",
       absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
                    "<w:document xmlns:w=\"",
                    kW, "\"><w:body><w:p><w:r><w:t>", paragraph,
                    "</w:t></w:r></w:p></w:body></w:document>")},
  });
}

// A core serving the test model (the real engine, or `engines`), file jobs over it, and a store
// in memory; the gate and the metrics are their own.
class Serving {
 public:
  Serving(std::shared_ptr<const Model> model, const RequestLimits& limits,
          const BatchingOptions& batching, FileJobs::Options options,
          LocalJobStore::Options store_options = {}, DecodeEngineFactory engines = nullptr)
      : metrics_(Metrics::Create()),
        core_(limits, batching.max_queued_texts, /*cache_bytes=*/0, metrics_.get(), &drain_),
        store_(store_options, [] { return absl::Now(); }) {
    scheduler_ = testing::SchedulerOf(model, batching, std::move(engines));
    core_.StartServing({{kModel, std::move(model), nullptr}}, scheduler_.get());
    options.metrics = metrics_.get();
    jobs_ = std::make_unique<FileJobs>(&core_, &store_, options);
  }
  // The jobs end (cancelled if they run) before the scheduler stops.
  ~Serving() {
    jobs_.reset();
    scheduler_->Stop();
  }

  // `request`'s reply from the core, waited for.
  absl::StatusOr<TranslationReply> Translate(TranslationRequest request) {
    absl::Notification done;
    absl::StatusOr<TranslationReply> reply;
    core_.Translate(std::move(request), std::make_shared<TranslationCore::Call>(),
                    [&](absl::StatusOr<TranslationReply> r) {
                      reply = std::move(r);
                      done.Notify();
                    });
    done.WaitForNotification();
    return reply;
  }

  // Job `id`'s records as WaitForChange gives them, from `first` until it is final.
  std::vector<JobRecord> Follow(const JobRecord& first) {
    std::vector<JobRecord> seen = {first};
    while (!IsFinal(seen.back().state)) {
      absl::StatusOr<JobRecord> next =
          jobs_->WaitForChange(first.id, seen.back(), absl::InfiniteFuture());
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok()) break;
      seen.push_back(*std::move(next));
    }
    return seen;
  }

  FileJobs& jobs() { return *jobs_; }
  TranslationCore& core() { return core_; }
  BatchScheduler& scheduler() { return *scheduler_; }
  LocalJobStore& store() { return store_; }
  Metrics& metrics() { return *metrics_; }
  void DestroyJobs() { jobs_.reset(); }

 private:
  std::unique_ptr<Metrics> metrics_;
  DrainGate drain_;
  TranslationCore core_;
  LocalJobStore store_;
  std::unique_ptr<BatchScheduler> scheduler_;
  std::unique_ptr<FileJobs> jobs_;
};

FileRequest File(std::string content, std::string file_name) {
  FileRequest request;
  request.content = std::move(content);
  request.file_name = std::move(file_name);
  request.translation.method = "TranslateFile";
  return request;
}

class FileJobsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(model_, testing::TestModel()); }

  std::unique_ptr<Serving> Serve(FileJobs::Options options = {},
                                 LocalJobStore::Options store_options = {},
                                 RequestLimits limits = {}) {
    return std::make_unique<Serving>(model_, limits, BatchingOptions(), options, store_options);
  }

  // Over the fake engine (the test chooses when decoding moves on), with `batching`.
  std::unique_ptr<Serving> ServeFake(FileJobs::Options options, BatchingOptions batching = {},
                                     LocalJobStore::Options store_options = {}) {
    return std::make_unique<Serving>(
        model_, RequestLimits(), batching, options, store_options,
        [this] { return std::make_unique<testing::FakeEngine>(log_); });
  }

  // The result of done job `id`, read whole in pieces of 7 bytes.
  static std::string ReadAll(FileJobs& jobs, const std::string& id) {
    std::string all;
    while (true) {
      absl::StatusOr<std::string> piece = jobs.ReadResult(id, static_cast<int64_t>(all.size()), 7);
      EXPECT_TRUE(piece.ok()) << piece.status();
      if (!piece.ok() || piece->empty()) return all;
      all += *piece;
    }
  }

  std::shared_ptr<const Model> model_;
  testing::EngineLog log_;  // Outlives the cores.
};

// A file's result is the core's translation of its text in its format, asked for as a text; its
// progress ends with every sentence done; its name and media type are the file's.
TEST_F(FileJobsTest, FileTranslatesAsItsTextInItsFormat) {
  // Below the files, the texts' limit: a file is held to --max_file_bytes instead.
  RequestLimits limits;
  limits.max_text_bytes = 16;
  std::unique_ptr<Serving> serving = Serve({}, {}, limits);
  struct Case {
    std::string content, file_name;
    int format;
    int sentences;
    std::string result_name, media_type;
  };
  for (const Case& c : {
           Case{kMarkdown, "notes/README.md", RequestedOptions::kMarkdown, 3, "README.md",
                "text/markdown; charset=utf-8"},
           Case{kSrt, "", RequestedOptions::kSrt, 2, "translation.srt",
                "application/x-subrip; charset=utf-8"},
       }) {
    SCOPED_TRACE(c.result_name);
    ASSERT_OK_AND_ASSIGN(const JobRecord submitted,
                         serving->jobs().Submit(File(c.content, c.file_name)));
    EXPECT_FALSE(submitted.id.empty());
    const std::vector<JobRecord> seen = serving->Follow(submitted);
    const JobRecord& done = seen.back();
    ASSERT_EQ(done.state, JobState::kDone) << done.error;
    EXPECT_EQ(done.sentences_total, c.sentences);
    EXPECT_EQ(done.sentences_done, c.sentences);
    for (size_t i = 1; i < seen.size(); ++i) {
      EXPECT_GE(seen[i].sentences_done, seen[i - 1].sentences_done);
    }
    EXPECT_EQ(done.result_file_name, c.result_name);
    EXPECT_EQ(done.result_media_type, c.media_type);

    TranslationRequest text;
    text.texts = {c.content};
    text.options.format = c.format;
    text.max_text_bytes = 1 << 10;
    ASSERT_OK_AND_ASSIGN(const TranslationReply reply, serving->Translate(std::move(text)));
    const std::string expected = reply.translations.at(0).hypotheses.at(0).text;
    EXPECT_EQ(ReadAll(serving->jobs(), submitted.id), expected);
    EXPECT_EQ(done.result_bytes, static_cast<int64_t>(expected.size()));
    EXPECT_TRUE(done.dropped.empty());
  }
  EXPECT_THAT(serving->metrics().Scrape(),
              HasSubstr("mtserve_file_jobs_total{format=\"markdown\",result=\"done\"} 1"));
}

// An office document is a file of bytes (a zip archive: NULs, bytes that are not UTF-8), not held
// to UTF-8: its result is the core's translation of the same bytes as a file of its format, named
// and typed as a DOCX.
TEST_F(FileJobsTest, AnOfficeDocumentTranslatesAsBytes) {
  std::unique_ptr<Serving> serving = Serve();
  const std::string docx = Docx("A dog runs.");
  ASSERT_NE(docx.find('\0'), std::string::npos);  // Binary, as zip archives are.
  for (const std::string name : {"report.docx", ""}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(const JobRecord submitted, serving->jobs().Submit(File(docx, name)));
    const JobRecord done = serving->Follow(submitted).back();
    ASSERT_EQ(done.state, JobState::kDone) << done.error;
    EXPECT_EQ(done.sentences_total, 1);
    EXPECT_EQ(done.result_file_name, name.empty() ? "translation.docx" : name);
    EXPECT_EQ(done.result_media_type,
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    const std::string result = ReadAll(serving->jobs(), submitted.id);
    EXPECT_EQ(result.substr(0, 4), "PK\x03\x04");

    TranslationRequest file;
    file.texts = {docx};
    file.options.format = RequestedOptions::kDocx;
    file.file = true;
    ASSERT_OK_AND_ASSIGN(const TranslationReply reply, serving->Translate(std::move(file)));
    EXPECT_EQ(result, reply.translations.at(0).hypotheses.at(0).text);
  }
}

// Bytes a file's translation keeps untranslated are in its job's record, never silently kept: a
// Markdown block whose raw inline HTML runs over a quote's lines (docs/api.md) is kept as written.
TEST_F(FileJobsTest, UntranslatedBytesAreInTheRecord) {
  std::unique_ptr<Serving> serving = Serve();
  const std::string kept = "> a dog <b\n> runs>\n";
  const std::string content = "A man sleeps.\n\n" + kept;
  ASSERT_OK_AND_ASSIGN(const JobRecord submitted,
                       serving->jobs().Submit(File(content, "quote.md")));
  const JobRecord done = serving->Follow(submitted).back();
  ASSERT_EQ(done.state, JobState::kDone) << done.error;
  ASSERT_FALSE(done.dropped.empty());
  const int64_t block = static_cast<int64_t>(content.find(kept));
  for (const ByteRange& range : done.dropped) {
    EXPECT_GE(range.begin, block);
    EXPECT_LE(range.end, static_cast<int64_t>(content.size()));
    EXPECT_LT(range.begin, range.end);
  }
  // The block is in the result as written; the paragraph before it is translated.
  const std::string result = ReadAll(serving->jobs(), submitted.id);
  EXPECT_THAT(result, HasSubstr(kept));
  EXPECT_THAT(result, Not(HasSubstr("A man sleeps.")));
}

TEST_F(FileJobsTest, FileOverTheLimitNamesTheFlagAndTheLimit) {
  FileJobs::Options options;
  options.max_file_bytes = 40;
  std::unique_ptr<Serving> serving = Serve(options);
  const absl::StatusOr<JobRecord> refused =
      serving->jobs().Submit(File(std::string(41, 'a'), "a.txt"));
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("file has 41 bytes; the limit is 40"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--max_file_bytes"));
  EXPECT_EQ(serving->store().stats().jobs, 0);
  // At the limit: a job.
  ASSERT_OK_AND_ASSIGN(const JobRecord job,
                       serving->jobs().Submit(File(std::string(40, 'a'), "a.txt")));
  EXPECT_EQ(serving->Follow(job).back().state, JobState::kDone);
}

TEST_F(FileJobsTest, FormatMismatchNamesTheFile) {
  std::unique_ptr<Serving> serving = Serve();
  FileRequest request = File(kMarkdown, "talk.srt");
  absl::StatusOr<JobRecord> refused = serving->jobs().Submit(request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("talk.srt"));

  request = File(kSrt, "talk.srt");
  request.format = "markdown";
  refused = serving->jobs().Submit(request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("talk.srt"));

  request.format = "pdf";
  refused = serving->jobs().Submit(request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("format: "));

  // An office document's claim on text: the content is not the archive it claims.
  request.format = "docx";
  refused = serving->jobs().Submit(request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("talk.srt"));
  EXPECT_THAT(refused.status().message(), HasSubstr("not a zip archive"));

  request = File("A dog \xff runs.", "a.txt");
  refused = serving->jobs().Submit(request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("file"));
  EXPECT_THAT(refused.status().message(), HasSubstr("UTF-8"));
  EXPECT_EQ(serving->store().stats().jobs, 0);
}

// The core's refusals at once (here a model not served) are Submit's: no job is left.
TEST_F(FileJobsTest, CoreRefusalLeavesNoJob) {
  std::unique_ptr<Serving> serving = Serve();
  FileRequest request = File("A dog runs.", "a.txt");
  request.translation.model = "no-such-model";
  const absl::StatusOr<JobRecord> refused = serving->jobs().Submit(request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound) << refused.status();
  EXPECT_EQ(serving->store().stats().jobs, 0);
}

TEST_F(FileJobsTest, UnknownIdIsNotFound) {
  std::unique_ptr<Serving> serving = Serve();
  const std::string id = "no-such-job";
  EXPECT_EQ(serving->jobs().Get(id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(serving->jobs().WaitForChange(id, JobRecord(), absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(serving->jobs().ReadResult(id, 0, 10).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(serving->jobs().Cancel(id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(serving->jobs().Delete(id).code(), absl::StatusCode::kNotFound);
}

// A done job cannot be cancelled; deleted, it is gone.
TEST_F(FileJobsTest, DoneJobIsDeleted) {
  std::unique_ptr<Serving> serving = Serve();
  ASSERT_OK_AND_ASSIGN(const JobRecord job, serving->jobs().Submit(File("A dog runs.", "")));
  EXPECT_EQ(serving->Follow(job).back().state, JobState::kDone);
  EXPECT_EQ(serving->jobs().Cancel(job.id).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(serving->jobs().Delete(job.id).ok());
  EXPECT_EQ(serving->jobs().Get(job.id).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FileJobsTest, StoreFullIsResourceExhausted) {
  LocalJobStore::Options store_options;
  store_options.max_jobs = 1;
  std::unique_ptr<Serving> serving = Serve({}, store_options);
  ASSERT_OK_AND_ASSIGN(const JobRecord job, serving->jobs().Submit(File("A dog runs.", "")));
  const absl::StatusOr<JobRecord> refused = serving->jobs().Submit(File("A cat sleeps.", ""));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_EQ(serving->Follow(job).back().state, JobState::kDone);
}

// A job cancelled while it decodes ends cancelled: its translation stops (the core's call ends,
// counted as a cancelled job) and it never becomes done.
TEST_F(FileJobsTest, CancelStopsTheJob) {
  absl::Notification decoding, go_on;
  log_.SetStepHook([&](int step) {
    if (step != 1) return;
    decoding.Notify();
    go_on.WaitForNotification();
  });
  std::unique_ptr<Serving> serving = ServeFake({});
  ASSERT_OK_AND_ASSIGN(const JobRecord job,
                       serving->jobs().Submit(File("A dog runs. A man sleeps.", "a.txt")));
  decoding.WaitForNotification();
  ASSERT_TRUE(serving->jobs().Cancel(job.id).ok());
  ASSERT_OK_AND_ASSIGN(const JobRecord cancelled, serving->jobs().Get(job.id));
  EXPECT_EQ(cancelled.state, JobState::kCancelled);
  EXPECT_EQ(cancelled.error.code(), absl::StatusCode::kCancelled);
  go_on.Notify();
  // Waits for the job's translation to end.
  serving->DestroyJobs();
  ASSERT_OK_AND_ASSIGN(const JobRecord ended, serving->store().Get(job.id));
  EXPECT_EQ(ended.state, JobState::kCancelled);
  const std::string scrape = serving->metrics().Scrape();
  EXPECT_THAT(scrape, HasSubstr("mtserve_file_jobs_total{format=\"text\",result=\"cancelled\"} 1"));
  // The core's call ended cancelled, not translated.
  EXPECT_THAT(scrape, HasSubstr("mtserve_requests_total{code=\"CANCELLED\",frontend=\"grpc\","
                                "method=\"TranslateFile\""));
}

// With API keys, the key is checked first; its job is its name's; a file is charged the
// characters of its text, not its markup: of 20 a day, a SubRip file of 86 bytes whose cues say
// "A dog runs." and "A café." (18 characters) passes once, and its second job fails.
TEST_F(FileJobsTest, KeyOwnsTheJobAndIsChargedTheFilesText) {
  const testing::TempDir dir;
  dir.Write("keys", testing::AliceKeysFile("characters_per_day=20"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ApiKeyAuthenticator> keys,
                       ApiKeyAuthenticator::Start(dir.File("keys"), absl::Hours(1), nullptr));
  FileJobs::Options options;
  options.max_file_bytes = 100;
  std::unique_ptr<Serving> serving = Serve(options);
  serving->core().RequireApiKeys(keys.get());
  // Over the size limit, but without a key: the key's error.
  EXPECT_EQ(serving->jobs().Submit(File(std::string(101, 'a'), "a.txt")).status().code(),
            absl::StatusCode::kUnauthenticated);
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nA dog runs.\n\n"
      "2\n00:00:03,000 --> 00:00:04,000\nA café.\n";
  ASSERT_EQ(srt.size(), 86u);
  FileRequest request = File(srt, "a.srt");
  request.translation.api_key = "alice-key";
  ASSERT_OK_AND_ASSIGN(const JobRecord first, serving->jobs().Submit(request));
  EXPECT_EQ(first.owner, "alice");
  EXPECT_EQ(serving->Follow(first).back().state, JobState::kDone);
  ASSERT_OK_AND_ASSIGN(const JobRecord second, serving->jobs().Submit(request));
  const JobRecord ended = serving->Follow(second).back();
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.error.code(), absl::StatusCode::kResourceExhausted) << ended.error;
}

// A job whose deadline passes in the queue fails DEADLINE_EXCEEDED: the caller's deadline, or
// the longest a job may take (--file_job_timeout) when sooner.
TEST_F(FileJobsTest, DeadlineFailsTheJob) {
  // The only worker holds at the first step of a request sent before the job, so the job's
  // sentence stays queued.
  struct Hold {
    absl::Notification decoding, go_on;
    std::atomic<bool> held = false;
  };
  std::unique_ptr<Hold> hold;
  log_.SetStepHook([&hold](int) {
    if (hold->held.exchange(true)) return;
    hold->decoding.Notify();
    hold->go_on.WaitForNotification();
  });
  for (const bool caller : {true, false}) {
    SCOPED_TRACE(caller ? "the caller's deadline" : "--file_job_timeout");
    hold = std::make_unique<Hold>();
    const size_t groups = log_.groups().size();
    FileJobs::Options options;
    if (!caller) options.max_job_duration = absl::Milliseconds(50);
    std::unique_ptr<Serving> serving = ServeFake(options);
    TranslationRequest first;
    first.texts = {"A cat sleeps."};
    first.max_text_bytes = 1 << 10;
    absl::Notification first_done;
    serving->core().Translate(std::move(first), std::make_shared<TranslationCore::Call>(),
                              [&](absl::StatusOr<TranslationReply>) { first_done.Notify(); });
    hold->decoding.WaitForNotification();
    FileRequest request = File("A dog runs.", "a.txt");
    if (caller) request.translation.deadline = absl::Now() + absl::Milliseconds(50);
    ASSERT_OK_AND_ASSIGN(const JobRecord job, serving->jobs().Submit(request));
    // Once the job's sentence is queued, its deadline (50 ms after the job started at the
    // latest) passes; then the worker goes on.
    auto queued_or_ended = [&] {
      if (serving->scheduler().pending_texts() == 1) return true;
      const absl::StatusOr<JobRecord> now = serving->jobs().Get(job.id);
      return !now.ok() || IsFinal(now->state);
    };
    while (!queued_or_ended()) absl::SleepFor(absl::Milliseconds(1));
    absl::SleepFor(absl::Milliseconds(50));
    hold->go_on.Notify();
    const JobRecord ended = serving->Follow(job).back();
    EXPECT_EQ(ended.state, JobState::kFailed);
    EXPECT_EQ(ended.error.code(), absl::StatusCode::kDeadlineExceeded) << ended.error;
    first_done.WaitForNotification();
    // The engine only ever got the first request's sentence.
    EXPECT_EQ(log_.groups().size(), groups + 1);
  }
}

}  // namespace
}  // namespace mtserve
