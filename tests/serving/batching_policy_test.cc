// The batching rules of serving/batch_scheduler.h, decided by BatchingPolicy: no threads, no model,
// explicit times. Each text's first source id names it; its length is its source length.
#include "serving/batching_policy.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/decode_memory.h"
#include "model/model_config.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1000000);

// Text `name` of `length` source tokens (the last one </s>).
TranslationTask Text(int name, int length, int beam = 1) {
  TranslationTask task;
  task.source_ids.assign(length, 7);
  task.source_ids.front() = name;
  task.options.beam_size = beam;
  return task;
}

std::vector<int> Names(const std::vector<TranslationTask>& tasks) {
  std::vector<int> names;
  for (const TranslationTask& task : tasks) names.push_back(task.source_ids.front());
  return names;
}

// Submits `tasks` at `now` as one request of `group`, expecting it to be taken.
void Queue(BatchingPolicy& policy, std::vector<TranslationTask> tasks, absl::Time now,
           std::string group = "") {
  QueuedRequest request = RequestOf(std::move(tasks), std::move(group));
  ASSERT_TRUE(policy.Submit(request, now).ok());
}

// Texts named first, first + 1, ... of `length` tokens.
std::vector<TranslationTask> Texts(int first, int count, int length = 4) {
  std::vector<TranslationTask> texts;
  for (int i = 0; i < count; ++i) texts.push_back(Text(first + i, length));
  return texts;
}

BatchingOptions Options(int workers, int max_batch_size, absl::Duration delay) {
  BatchingOptions options;
  options.workers = workers;
  options.max_batch_size = max_batch_size;
  options.max_queue_delay = delay;
  return options;
}

BatchingPolicy Policy(const BatchingOptions& options) {
  return BatchingPolicy(options, {testing::TinyConfig()});
}

// Starts a decode of one text (named 99, beam 5: options no other text here has) at `now`.
void StartOtherDecode(BatchingPolicy& policy, absl::Time now) {
  Queue(policy, {Text(99, 4, /*beam=*/5)}, now);
  ASSERT_THAT(Names(policy.TakeBatch(now)), ElementsAre(99));
}

TEST(BatchingPolicyTest, ADecodeTakesAFairShareOfTheTextsOverTheWorkers) {
  BatchingPolicy policy =
      Policy(Options(/*workers=*/3, /*max_batch_size=*/32, absl::ZeroDuration()));
  std::vector<TranslationTask> texts;
  for (int i = 0; i < 7; ++i) texts.push_back(Text(i, 4));
  Queue(policy, std::move(texts), kT0);
  // 7 texts over 3 workers: at most 3 each, so none idles while another holds them all.
  EXPECT_EQ(policy.BatchLimit(), 3);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1, 2));
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(3, 4, 5));
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(6));
  EXPECT_EQ(policy.queued(), 0);
  EXPECT_EQ(policy.running(), 7);
  policy.Finished(7);
  EXPECT_EQ(policy.running(), 0);
  EXPECT_EQ(policy.BatchLimit(), 1);  // Never less than one text.
}

TEST(BatchingPolicyTest, MaxBatchSizeBoundsADecode) {
  BatchingPolicy policy = Policy(Options(1, /*max_batch_size=*/4, absl::Hours(1)));
  StartOtherDecode(policy, kT0);
  std::vector<TranslationTask> texts;
  for (int i = 0; i < 6; ++i) texts.push_back(Text(i, 4));
  Queue(policy, std::move(texts), kT0);
  // A full batch is ready at once, long before max_queue_delay, even while a decode runs.
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(policy.queued(), 2);
}

TEST(BatchingPolicyTest, MaxBatchTokensBoundsADecode) {
  BatchingOptions options = Options(1, 32, absl::ZeroDuration());
  options.max_batch_tokens = 20;  // Four texts of 5 tokens.
  BatchingPolicy policy = Policy(options);
  std::vector<TranslationTask> texts;
  for (int i = 0; i < 6; ++i) texts.push_back(Text(i, 5));
  Queue(policy, std::move(texts), kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1, 2, 3));
}

TEST(BatchingPolicyTest, TheFirstTextRunsEvenOverTheTokenBudget) {
  BatchingOptions options = Options(1, 32, absl::ZeroDuration());
  options.max_batch_tokens = 10;
  BatchingPolicy policy = Policy(options);
  Queue(policy, {Text(0, 12), Text(1, 2)}, kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0));
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(1));
}

TEST(BatchingPolicyTest, TheMemoryBudgetBoundsADecode) {
  BatchingOptions options = Options(1, 32, absl::ZeroDuration());
  DecodingOptions greedy;
  const DecodeMemory memory(testing::TinyConfig(), greedy);
  // Room for two texts of 4 tokens (decoded, and encoded as they start), not three.
  options.worker_memory_bytes = memory.Admitting(2, 4, 2, 4);
  ASSERT_GT(memory.Admitting(3, 4, 3, 4), options.worker_memory_bytes);
  BatchingPolicy policy = Policy(options);
  Queue(policy, {Text(0, 4), Text(1, 4), Text(2, 4)}, kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1));
  EXPECT_EQ(policy.queued(), 1);
}

TEST(BatchingPolicyTest, ALoneTextAtAnIdleServerStartsAtOnce) {
  BatchingPolicy policy = Policy(Options(/*workers=*/2, 32, absl::Hours(1)));
  Queue(policy, {Text(0, 4)}, kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0));
  // Once it is answered the server is idle again: the next text starts at once too.
  policy.Finished(1);
  Queue(policy, {Text(1, 4, /*beam=*/2)}, kT0 + absl::Seconds(1));
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Seconds(1))), ElementsAre(1));
}

// Two workers, three texts at an idle server: a decode takes its fair share (two) at once; the
// third, like a text of other options sent after it, waits for max_queue_delay although the
// other worker idles, gathering texts while the decode runs.
TEST(BatchingPolicyTest, WhileADecodeRunsTextsWaitForMaxQueueDelay) {
  BatchingPolicy policy = Policy(Options(/*workers=*/2, 32, absl::Milliseconds(10)));
  Queue(policy, Texts(0, 3), kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1));
  Queue(policy, {Text(10, 4, /*beam=*/2)}, kT0 + absl::Milliseconds(1));
  EXPECT_THAT(policy.TakeBatch(kT0 + absl::Milliseconds(1)), IsEmpty());
  EXPECT_EQ(policy.NextWake(), kT0 + absl::Milliseconds(10));
  EXPECT_THAT(policy.TakeBatch(kT0 + absl::Milliseconds(10) - absl::Microseconds(1)), IsEmpty());
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(10))), ElementsAre(2));
}

TEST(BatchingPolicyTest, AQueueIsReadyOnceItsOldestTextWaitedMaxQueueDelay) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::Milliseconds(10)));
  StartOtherDecode(policy, kT0);
  Queue(policy, {Text(0, 4)}, kT0);
  Queue(policy, {Text(1, 4)}, kT0 + absl::Milliseconds(4));
  EXPECT_THAT(policy.TakeBatch(kT0 + absl::Milliseconds(9)), IsEmpty());
  EXPECT_EQ(policy.NextWake(), kT0 + absl::Milliseconds(10));
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(10))), ElementsAre(0, 1));
}

TEST(BatchingPolicyTest, AQueueHoldingMoreThanADecodeTakesIsReadyAtOnce) {
  BatchingOptions options = Options(1, 32, absl::Hours(1));
  options.max_batch_tokens = 20;
  BatchingPolicy policy = Policy(options);
  StartOtherDecode(policy, kT0);
  Queue(policy, {Text(0, 5), Text(1, 5), Text(2, 5), Text(3, 5)}, kT0);
  EXPECT_THAT(policy.TakeBatch(kT0), IsEmpty());  // Exactly one decode's worth: it may grow.
  Queue(policy, {Text(4, 5)}, kT0);
  // The two requests take turns.
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 4, 1, 2));
}

TEST(BatchingPolicyTest, AQueueHoldingItsFairShareIsReadyWhileOthersDecode) {
  BatchingPolicy policy = Policy(Options(2, 32, absl::Hours(1)));
  Queue(policy, {Text(0, 4)}, kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0));
  // One text decoding and one queued: over 2 workers, the queued one is a fair share already.
  Queue(policy, {Text(1, 4, /*beam=*/2)}, kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(1));
}

// Requests take turns, a text at a time, each request's texts in order: the document of five
// (0-4) does not go before the requests sent after it.
TEST(BatchingPolicyTest, RequestsTakeTurnsInADecode) {
  BatchingPolicy policy = Policy(Options(1, /*max_batch_size=*/6, absl::ZeroDuration()));
  Queue(policy, Texts(0, 5), kT0);
  Queue(policy, Texts(10, 1), kT0);
  Queue(policy, Texts(20, 2), kT0);
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 10, 20, 1, 21, 2));
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(3, 4));
}

// A request of one text sent while a document is being decoded joins at its next turn: after
// the document has had one more (it came first), not after the document.
TEST(BatchingPolicyTest, ARequestSentDuringADocumentJoinsAtItsTurn) {
  BatchingPolicy policy = Policy(Options(1, /*max_batch_size=*/4, absl::ZeroDuration()));
  Queue(policy, Texts(0, 100), kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1, 2, 3));
  Queue(policy, Texts(1000, 1), kT0);
  policy.Finished(2);  // Two of the document's texts finished: room for two.
  const std::string key = BatchKey(Text(0, 4));
  EXPECT_THAT(Names(policy.TakeJoiners(key, 2, 4, kT0)), ElementsAre(4, 1000));
}

// With API keys, keys take turns first, then each key's requests: key a's two requests share
// one turn in two, key b's one request has the other.
TEST(BatchingPolicyTest, ApiKeysTakeTurnsThenTheirRequests) {
  BatchingPolicy policy = Policy(Options(1, /*max_batch_size=*/8, absl::ZeroDuration()));
  Queue(policy, Texts(0, 4), kT0, "a");
  Queue(policy, Texts(10, 4), kT0, "a");
  Queue(policy, Texts(20, 4), kT0, "b");
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 20, 10, 21, 1, 22, 11, 23));
}

// In its turn a request gives its first text that fits the decode's budgets; one with none
// gives its turn to the next request.
TEST(BatchingPolicyTest, ARequestsTextsThatDoNotFitWaitWhileItsOthersTakeItsTurns) {
  BatchingOptions options = Options(1, 32, absl::ZeroDuration());
  options.max_batch_tokens = 20;
  BatchingPolicy policy = Policy(options);
  Queue(policy, {Text(0, 5), Text(1, 10), Text(2, 5)}, kT0);
  Queue(policy, {Text(10, 5), Text(11, 5)}, kT0);
  // 0, 10, then 2 (10 tokens x 3 texts is over 20), 11; then 1 would make 10 x 5: none fits.
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 10, 2, 11));
  EXPECT_EQ(policy.queued(), 1);
}

TEST(BatchingPolicyTest, TheReadyQueueWithTheOldestTextGoesFirst) {
  BatchingPolicy policy = Policy(Options(2, 32, absl::Milliseconds(10)));
  StartOtherDecode(policy, kT0);
  Queue(policy, {Text(0, 4, /*beam=*/2)}, kT0 + absl::Milliseconds(1));
  Queue(policy, {Text(1, 4, /*beam=*/1)}, kT0 + absl::Milliseconds(2));
  Queue(policy, {Text(2, 4, /*beam=*/3)}, kT0);
  // At 11 ms the beam-3 queue (10 ms) and beam-2 queue (11 ms) are ready; beam 3's is oldest.
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(11))), ElementsAre(2));
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(11))), ElementsAre(0));
  EXPECT_THAT(policy.TakeBatch(kT0 + absl::Milliseconds(11)), IsEmpty());
  EXPECT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(12))), ElementsAre(1));
}

TEST(BatchingPolicyTest, OnlyTextsOfTheSameOptionsShareADecode) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::ZeroDuration()));
  Queue(policy, {Text(0, 4, 1)}, kT0);
  Queue(policy, {Text(1, 4, 2)}, kT0 + absl::Milliseconds(1));
  Queue(policy, {Text(2, 4, 1)}, kT0 + absl::Milliseconds(2));
  EXPECT_NE(BatchKey(Text(0, 4, 1)), BatchKey(Text(0, 4, 2)));
  // A decode computes alignments for all its texts or none.
  TranslationTask aligned = Text(0, 4, 1);
  aligned.options.return_alignment = true;
  EXPECT_NE(BatchKey(aligned), BatchKey(Text(0, 4, 1)));
  // A decode uses the shortlist for all its texts or none.
  TranslationTask whole = Text(0, 4, 1);
  whole.options.shortlist = false;
  EXPECT_NE(BatchKey(whole), BatchKey(Text(0, 4, 1)));
  const absl::Time now = kT0 + absl::Milliseconds(2);
  EXPECT_THAT(Names(policy.TakeBatch(now)), ElementsAre(0, 2));
  EXPECT_THAT(Names(policy.TakeBatch(now)), ElementsAre(1));
}

TEST(BatchingPolicyTest, ExpiredAndCancelledTextsLeaveTheQueueWithWhy) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::Hours(1)));
  std::vector<TranslationTask> texts;
  texts.push_back(Text(0, 4));
  texts.back().deadline = kT0 + absl::Seconds(5);
  texts.push_back(Text(1, 4));
  texts.back().cancelled = [] { return true; };
  // Cancelled as its deadline was about to pass: the client's copy of the deadline did.
  texts.push_back(Text(2, 4));
  texts.back().deadline = kT0 + absl::Seconds(5) + absl::Milliseconds(100);
  texts.back().cancelled = [] { return true; };
  texts.push_back(Text(3, 4));
  texts.back().deadline = kT0 + absl::Seconds(6);
  texts.back().cancelled = [] { return false; };
  Queue(policy, std::move(texts), kT0);

  std::vector<DroppedTask> dropped;
  policy.RemoveDeadTasks(kT0 + absl::Seconds(5), dropped);
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_EQ(dropped[0].task.source_ids.front(), 0);
  EXPECT_EQ(dropped[0].status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(dropped[1].task.source_ids.front(), 1);
  EXPECT_EQ(dropped[1].status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(dropped[2].task.source_ids.front(), 2);
  EXPECT_EQ(dropped[2].status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(policy.queued(), 1);
  EXPECT_EQ(policy.running(), 0);
}

TEST(BatchingPolicyTest, AnIdleWorkerWakesAtTheEarliestDelayEndOrDeadline) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::Milliseconds(10)));
  EXPECT_EQ(policy.NextWake(), absl::InfiniteFuture());
  Queue(policy, {Text(0, 4)}, kT0);
  EXPECT_EQ(policy.NextWake(), kT0 + absl::Milliseconds(10));
  std::vector<TranslationTask> texts;
  texts.push_back(Text(1, 4, /*beam=*/2));
  texts.back().deadline = kT0 + absl::Milliseconds(3);
  Queue(policy, std::move(texts), kT0 + absl::Milliseconds(1));
  EXPECT_EQ(policy.NextWake(), kT0 + absl::Milliseconds(3));
}

// A request over the queue's bound is taken whole: its texts are admitted as the queue drains,
// requests taking turns for admission too.
TEST(BatchingPolicyTest, ARequestsTextsAreAdmittedAsTheQueueDrains) {
  BatchingOptions options = Options(1, /*max_batch_size=*/2, absl::Hours(1));
  options.max_queued_texts = 3;
  BatchingPolicy policy = Policy(options);
  Queue(policy, Texts(0, 6), kT0);
  EXPECT_EQ(policy.queued(), 3);
  EXPECT_EQ(policy.waiting(), 3);
  Queue(policy, Texts(10, 2), kT0);
  EXPECT_EQ(policy.queued(), 3);
  EXPECT_EQ(policy.waiting(), 5);
  // Two leave for a decode: the document (3 admitted) and the new request (0, starting at the
  // document's 3) admit one each.
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1));
  EXPECT_EQ(policy.queued(), 3);
  EXPECT_EQ(policy.waiting(), 3);
  policy.Finished(2);
  // Queued: 2, 3 of the document, 10: the new request takes its turn after the document's next.
  EXPECT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(2, 10));
  policy.Finished(2);
  std::vector<int> rest;
  while (policy.has_queued()) {
    for (int name : Names(policy.TakeBatch(kT0))) rest.push_back(name);
    policy.Finished(2);
  }
  EXPECT_THAT(rest, ElementsAre(3, 11, 4, 5));
}

// Texts still in a request's backlog leave with it when its deadline passes or its caller
// cancels, each with why; Submit refuses once draining, making none of the request's texts.
TEST(BatchingPolicyTest, ABacklogLeavesWithItsRequest) {
  BatchingOptions options = Options(1, 32, absl::Hours(1));
  options.max_queued_texts = 1;
  BatchingPolicy policy = Policy(options);
  QueuedRequest late = RequestOf(Texts(0, 3));
  late.deadline = kT0 + absl::Seconds(1);
  ASSERT_TRUE(policy.Submit(late, kT0).ok());
  bool gone = false;
  QueuedRequest cancelled = RequestOf(Texts(10, 2));
  cancelled.cancelled = [&gone] { return gone; };
  ASSERT_TRUE(policy.Submit(cancelled, kT0).ok());
  EXPECT_EQ(policy.waiting(), 4);
  gone = true;
  std::vector<DroppedTask> dropped;
  policy.RemoveDeadTasks(kT0 + absl::Seconds(1), dropped);
  std::vector<int> names;
  for (const DroppedTask& d : dropped) {
    names.push_back(d.task.source_ids.front());
    EXPECT_EQ(d.status.code(), d.task.source_ids.front() < 10 ? absl::StatusCode::kDeadlineExceeded
                                                              : absl::StatusCode::kCancelled);
  }
  // Text 0 was admitted (its own deadline is not the request's here): it stays queued.
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(1, 2, 10, 11));
  EXPECT_EQ(policy.waiting(), 0);
  EXPECT_EQ(policy.queued(), 1);

  policy.StartDraining();
  int made = 0;
  QueuedRequest refused;
  refused.texts = 1;
  refused.make = [&made](int) {
    ++made;
    return Text(30, 4);
  };
  EXPECT_EQ(policy.Submit(refused, kT0).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(made, 0);
}

TEST(BatchingPolicyTest, QueuedTextsJoinARunningDecodeAsRoomAndBudgetsAllow) {
  BatchingOptions options = Options(1, /*max_batch_size=*/32, absl::ZeroDuration());
  options.max_batch_tokens = 20;
  BatchingPolicy policy = Policy(options);
  Queue(policy, {Text(0, 5), Text(1, 5)}, kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0, 1));
  Queue(policy, {Text(2, 8), Text(3, 5), Text(4, 5), Text(5, 5)}, kT0);
  // Fair share 6, so room for 4; but 8 tokens x 3 texts is over 20, and so is a fifth text.
  const std::string key = BatchKey(Text(0, 5));
  EXPECT_THAT(Names(policy.TakeJoiners(key, /*decoding=*/2, /*longest=*/5, kT0)),
              ElementsAre(3, 4));
  EXPECT_EQ(policy.running(), 4);
  EXPECT_EQ(policy.queued(), 2);
}

TEST(BatchingPolicyTest, JoinersNeverExceedTheDecodeLimit) {
  BatchingPolicy policy = Policy(Options(1, /*max_batch_size=*/4, absl::ZeroDuration()));
  Queue(policy, {Text(0, 4)}, kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0)), ElementsAre(0));
  Queue(policy, {Text(1, 4), Text(2, 4), Text(3, 4), Text(4, 4), Text(5, 4)}, kT0);
  const std::string key = BatchKey(Text(0, 4));
  EXPECT_THAT(Names(policy.TakeJoiners(key, 1, 4, kT0)), ElementsAre(1, 2, 3));
  EXPECT_THAT(policy.TakeJoiners(key, 4, 4, kT0), IsEmpty());
  policy.Finished(1);  // A text left: room for one.
  EXPECT_THAT(Names(policy.TakeJoiners(key, 3, 4, kT0)), ElementsAre(4));
}

TEST(BatchingPolicyTest, AtLeastHalfFullDecodeLetsJoinersGatherForAWhile) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::Milliseconds(1)));
  policy.WorkerIdle();  // Another worker could start other options: the decode may grow.
  std::vector<TranslationTask> four;
  for (int i = 0; i < 4; ++i) four.push_back(Text(i, 4));
  Queue(policy, std::move(four), kT0);
  ASSERT_EQ(policy.TakeBatch(kT0 + absl::Milliseconds(1)).size(), 4u);
  // Texts of other options make the fair share 8: room for 4 in the decode of 4 (half full).
  const absl::Time t1 = kT0 + absl::Milliseconds(2);
  Queue(policy, {Text(10, 4, 2), Text(11, 4, 2), Text(12, 4, 2), Text(4, 4)}, t1);
  ASSERT_EQ(policy.BatchLimit(), 8);
  const std::string key = BatchKey(Text(0, 4));
  // One text would join alone: it waits for kJoinTogether, up to kJoinWait.
  EXPECT_THAT(policy.TakeJoiners(key, 4, 4, t1), IsEmpty());
  const absl::Duration wait = BatchingPolicy::kJoinWait;
  EXPECT_THAT(policy.TakeJoiners(key, 4, 4, t1 + wait - absl::Microseconds(1)), IsEmpty());
  EXPECT_THAT(Names(policy.TakeJoiners(key, 4, 4, t1 + wait)), ElementsAre(4));
}

TEST(BatchingPolicyTest, GatheredJoinersJoinTogether) {
  BatchingPolicy policy = Policy(Options(1, 32, absl::Milliseconds(1)));
  std::vector<TranslationTask> four;
  for (int i = 0; i < 4; ++i) four.push_back(Text(i, 4));
  Queue(policy, std::move(four), kT0);
  ASSERT_EQ(policy.TakeBatch(kT0 + absl::Milliseconds(1)).size(), 4u);
  const absl::Time t1 = kT0 + absl::Milliseconds(2);
  const std::string key = BatchKey(Text(0, 4));
  std::vector<TranslationTask> texts;
  for (int i = 4; i < 4 + BatchingPolicy::kJoinTogether; ++i) texts.push_back(Text(i, 4));
  Queue(policy, std::move(texts), t1);
  EXPECT_THAT(Names(policy.TakeJoiners(key, 4, 4, t1)), ElementsAre(4, 5, 6, 7));
}

TEST(BatchingPolicyTest, ADecodeStopsGrowingWhileOtherOptionsWaitAndNoWorkerIdles) {
  BatchingPolicy policy = Policy(Options(2, 32, absl::Milliseconds(10)));
  Queue(policy, {Text(0, 4)}, kT0);
  ASSERT_THAT(Names(policy.TakeBatch(kT0 + absl::Milliseconds(10))), ElementsAre(0));
  Queue(policy, {Text(1, 4), Text(2, 4, /*beam=*/2)}, kT0 + absl::Milliseconds(10));
  const std::string key = BatchKey(Text(0, 4));
  const absl::Time before = kT0 + absl::Milliseconds(15);
  const absl::Time after = kT0 + absl::Milliseconds(20);
  // Before the beam-2 text is ready (the same queues in another policy), text 1 joins.
  {
    BatchingPolicy growing = Policy(Options(2, 32, absl::Milliseconds(10)));
    Queue(growing, {Text(0, 4)}, kT0);
    ASSERT_THAT(Names(growing.TakeBatch(kT0 + absl::Milliseconds(10))), ElementsAre(0));
    Queue(growing, {Text(1, 4), Text(2, 4, 2)}, kT0 + absl::Milliseconds(10));
    EXPECT_THAT(Names(growing.TakeJoiners(key, 1, 4, before)), ElementsAre(1));
  }
  // Once it is ready and no worker is idle to start it, the decode takes no more.
  EXPECT_THAT(policy.TakeJoiners(key, 1, 4, after), IsEmpty());
  // An idle worker will start it: the decode grows again.
  policy.WorkerIdle();
  EXPECT_THAT(Names(policy.TakeJoiners(key, 1, 4, after)), ElementsAre(1));
  policy.WorkerBusy();
  EXPECT_EQ(policy.idle_workers(), 0);
}

}  // namespace
}  // namespace mtserve
