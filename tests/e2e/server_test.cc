// Integration tests: the real mtserve binary, started as a child process on loopback ports, driven
// over gRPC (mtserve.v1.Translator, grpc.health.v1) and /metrics. Expectations come from outside
// the server: mttranslate's output for the same inputs and options, the golden reference files,
// the same texts translated alone, and the limits given on the command line.
//
// Nothing here asserts on speed. Where a test needs the server in a given state (a request
// running, a text waiting in the queue) it waits for that state through /metrics; where it needs
// a text to stay queued it keeps the only worker busy with a long decode ahead (QueueTest).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/translation_client.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/channel_arguments.h"
#include "gtest/gtest.h"
#include "mtserve/v1/translation.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/server_process.h"

namespace mtserve {
namespace {

using ::mtserve::testing::ChildProcess;
using ::mtserve::testing::MetricsSnapshot;
using ::mtserve::testing::ServerProcess;
using ::testing::HasSubstr;
using HealthResponse = ::grpc::health::v1::HealthCheckResponse;
using Labels = std::map<std::string, std::string>;
using namespace std::chrono_literals;

constexpr char kModel[] = "multi30k-en-de";
constexpr char kService[] = "mtserve.v1.Translator";
constexpr int kVocabSize = 7708;
// 0-based index in test_2016_flickr.en (line 749 of the file) of the sentence whose greedy
// translation never emits </s> and runs to the default max_length (255): see the golden file.
constexpr int kRunawayLine = 748;

// The binaries under test: this build's, unless MTSERVE_TEST_SERVER / MTSERVE_TEST_TRANSLATE name
// others (e.g. an installed build).
std::string Binary(const char* env, const char* built) {
  const char* value = std::getenv(env);
  return value != nullptr && *value != '\0' ? value : built;
}
const std::string& ServerBinary() {
  static const std::string* binary = new std::string(Binary("MTSERVE_TEST_SERVER", MTSERVE_BINARY));
  return *binary;
}
const std::string& TranslateBinary() {
  static const std::string* binary =
      new std::string(Binary("MTSERVE_TEST_TRANSLATE", MTTRANSLATE_BINARY));
  return *binary;
}

// ---------------------------------------------------------------------------------------------
// Test data.

const std::vector<std::string>& TestLines() {
  static const std::vector<std::string>* lines = [] {
    auto* out = new std::vector<std::string>;
    std::ifstream in(MTSERVE_TEST_DATA_DIR "/multi30k/test_2016_flickr.en");
    for (std::string line; std::getline(in, line);) out->push_back(line);
    return out;
  }();
  return *lines;
}

// The golden file (tests/data/golden): source token counts and greedy outputs of an independent
// reference implementation, one entry per line of test_2016_flickr.en.
struct GoldenLine {
  std::string src;
  int src_tokens = 0;  // </s> included.
  std::string greedy_text;
  int greedy_ids = 0;
  bool greedy_ends_with_eos = false;
};

const std::vector<GoldenLine>& Golden() {
  static const std::vector<GoldenLine>* golden = [] {
    auto* out = new std::vector<GoldenLine>;
    std::ifstream in(MTSERVE_TEST_DATA_DIR "/golden/greedy.test_2016_flickr.jsonl");
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line);
      GoldenLine g;
      g.src = j.at("src").get<std::string>();
      g.src_tokens = static_cast<int>(j.at("src_ids").size());
      g.greedy_text = j.at("greedy_text").get<std::string>();
      const auto& ids = j.at("greedy_ids");
      g.greedy_ids = static_cast<int>(ids.size());
      g.greedy_ends_with_eos = !ids.empty() && ids.back().get<int>() == 0;  // eos_token_id 0.
      out->push_back(std::move(g));
    }
    return out;
  }();
  return *golden;
}

// The first test line that encodes to exactly `tokens` source tokens (</s> included).
std::string LineWithTokens(int tokens) {
  for (const GoldenLine& g : Golden()) {
    if (g.src_tokens == tokens) return g.src;
  }
  ADD_FAILURE() << "no test line has " << tokens << " tokens";
  return "";
}

// ---------------------------------------------------------------------------------------------
// Requests.

v1::DecodingOptions Greedy() { return v1::DecodingOptions(); }

v1::DecodingOptions Beam(int beam_size, int num_hypotheses) {
  v1::DecodingOptions o;
  o.set_beam_size(beam_size);
  o.set_num_hypotheses(num_hypotheses);
  return o;
}

v1::DecodingOptions Sampling(int topk, float temperature, uint64_t seed) {
  v1::DecodingOptions o;
  o.set_sampling_topk(topk);
  o.set_sampling_temperature(temperature);
  o.set_seed(seed);
  return o;
}

v1::DecodingOptions WithScores(v1::DecodingOptions o) {
  o.set_return_scores(true);
  return o;
}

v1::DecodingOptions WithAlignment(v1::DecodingOptions o) {
  o.set_return_alignment(true);
  return o;
}

// A request that keeps a worker busy: beam 16 forced to generate 512 tokens per text.
v1::DecodingOptions Long() {
  v1::DecodingOptions o = Beam(16, 1);
  o.set_max_length(512);
  o.set_min_length(512);
  return o;
}

v1::TranslateRequest Request(const std::vector<std::string>& texts,
                             const v1::DecodingOptions& options, const std::string& model = "") {
  v1::TranslateRequest request;
  for (const std::string& text : texts) request.add_texts(text);
  *request.mutable_options() = options;
  request.set_model(model);
  return request;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, bool own_connection = false) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // A channel of its own: its own TCP connection rather than one shared with other channels.
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

void SetTimeout(grpc::ClientContext& context, std::chrono::milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

// Both health names the server sets ("" and the service) report `expected`.
void ExpectHealth(TranslationClient& client, HealthStatus expected) {
  for (const std::string service : {"", kService}) {
    const absl::StatusOr<HealthStatus> health = client.Health(service);
    ASSERT_TRUE(health.ok()) << service << ": " << health.status();
    EXPECT_EQ(*health, expected) << service;
  }
}

grpc::Status Translate(v1::Translator::Stub& stub, const v1::TranslateRequest& request,
                       v1::TranslateResponse* response,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60),
                       bool wait_for_ready = false) {
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  context.set_wait_for_ready(wait_for_ready);
  return stub.Translate(&context, request, response);
}

// "CODE: message", for failure output.
std::string Describe(const grpc::Status& status) {
  return absl::StrCat(status.error_code(), ": ", status.error_message());
}

// The status of translating `texts`, which must fail.
grpc::Status TranslateError(v1::Translator::Stub& stub, const v1::TranslateRequest& request) {
  v1::TranslateResponse response;
  grpc::Status status = Translate(stub, request, &response);
  EXPECT_FALSE(status.ok()) << "expected an error; got " << response.ShortDebugString();
  EXPECT_EQ(response.translations_size(), 0);
  return status;
}

void ExpectSameTranslation(const v1::Translation& actual, const v1::Translation& expected,
                           const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(actual.source_tokens(), expected.source_tokens());
  ASSERT_EQ(actual.hypotheses_size(), expected.hypotheses_size());
  for (int k = 0; k < actual.hypotheses_size(); ++k) {
    const v1::Hypothesis& a = actual.hypotheses(k);
    const v1::Hypothesis& e = expected.hypotheses(k);
    EXPECT_EQ(a.text(), e.text()) << "hypothesis " << k;
    EXPECT_EQ(a.num_tokens(), e.num_tokens()) << "hypothesis " << k;
    EXPECT_NEAR(a.score(), e.score(), 1e-4) << "hypothesis " << k;
    ASSERT_EQ(a.token_log_probs_size(), e.token_log_probs_size()) << "hypothesis " << k;
    for (int t = 0; t < a.token_log_probs_size(); ++t) {
      EXPECT_NEAR(a.token_log_probs(t), e.token_log_probs(t), 1e-4) << "hypothesis " << k;
    }
  }
}

// The hypotheses mttranslate writes for each input line (num_hypotheses per line, best first),
// with --with_scores: "SCORE\tTEXT".
struct CliHypothesis {
  double score = 0;
  std::string text;
};

std::vector<std::vector<CliHypothesis>> RunMttranslate(const std::vector<std::string>& lines,
                                                       std::vector<std::string> flags,
                                                       int num_hypotheses) {
  std::string input;
  for (const std::string& line : lines) absl::StrAppend(&input, line, "\n");
  flags.push_back("--with_scores");
  flags.push_back("--threads=1");
  flags.push_back("--batch_size=7");  // Batches unlike the server's.
  const testing::CommandResult result = testing::RunCommand(TranslateBinary(), flags, input);
  EXPECT_EQ(result.exit_code, 0);
  std::vector<std::string> out = absl::StrSplit(result.stdout_text, '\n');
  EXPECT_FALSE(out.empty());
  EXPECT_EQ(out.back(), "");  // Every line ends with \n.
  out.pop_back();
  EXPECT_EQ(out.size(), lines.size() * num_hypotheses) << result.stdout_text;
  std::vector<std::vector<CliHypothesis>> hypotheses(lines.size());
  for (size_t i = 0; i < out.size() && i / num_hypotheses < lines.size(); ++i) {
    const size_t tab = out[i].find('\t');
    EXPECT_NE(tab, std::string::npos) << out[i];
    if (tab == std::string::npos) continue;
    hypotheses[i / num_hypotheses].push_back(
        {std::strtod(out[i].substr(0, tab).c_str(), nullptr), out[i].substr(tab + 1)});
  }
  return hypotheses;
}

// ---------------------------------------------------------------------------------------------
// Servers.

// Starts mtserve with `flags` and waits until it serves; null (and a test failure) if it does not.
std::unique_ptr<ServerProcess> StartServer(const std::vector<std::string>& flags,
                                           std::string* error) {
  try {
    auto server = std::make_unique<ServerProcess>(ServerBinary(), flags);
    if (!server->WaitUntilServing()) {
      *error = "mtserve did not start serving; stderr:\n" + server->process().StderrText();
      return nullptr;
    }
    return server;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

// A suite sharing one server (one per process: with gtest_discover_tests each test runs in a
// process of its own, so each test gets a fresh server).
template <typename Flags>
class ServerSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = StartServer(Flags::Get(), &start_error_); }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      // The server must still be alive: no test may have crashed it.
      EXPECT_FALSE(server_->process().exited()) << server_->process().StderrText();
    }
    server_.reset();
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr) << start_error_;
    ASSERT_FALSE(server_->process().exited()) << server_->process().StderrText();
    channel_ = NewChannel(server_->address());
    stub_ = v1::Translator::NewStub(channel_);
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::fprintf(stderr, "mtserve stderr so far:\n%s\n", server_->process().StderrText().c_str());
    }
  }

  static MetricsSnapshot Scrape() { return testing::ScrapeMetrics(server_->metrics_port()); }
  template <typename Predicate>
  static MetricsSnapshot WaitForMetrics(Predicate predicate) {
    return testing::WaitForMetrics(server_->metrics_port(), predicate);
  }

  static inline std::unique_ptr<ServerProcess> server_;
  static inline std::string start_error_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Translator::Stub> stub_;
};

// Defaults except a small, fixed worker layout.
struct DefaultFlags {
  static std::vector<std::string> Get() { return {"--workers=2", "--threads_per_worker=1"}; }
};
using ServerTest = ServerSuite<DefaultFlags>;

// The same, every model computing in int8.
struct Int8Flags {
  static std::vector<std::string> Get() {
    return {"--workers=2", "--threads_per_worker=1", "--compute_type=int8"};
  }
};
using Int8ServerTest = ServerSuite<Int8Flags>;

// Every per-request limit set low.
struct LimitFlags {
  static std::vector<std::string> Get() {
    return {"--workers=1",
            "--max_texts_per_request=4",
            "--max_input_tokens=16",
            "--max_output_tokens=40",
            "--max_beam_size=4",
            "--max_message_bytes=65536",
            "--max_sampling_topk=50",
            "--max_text_bytes=32KiB"};
  }
};
using LimitsTest = ServerSuite<LimitFlags>;

// One worker and a queue of 2 texts. No cache: the long decode ahead is decoded each time.
struct QueueFlags {
  static std::vector<std::string> Get() {
    return {"--workers=1", "--max_queued_texts=2", "--max_texts_per_request=2",
            "--max_batch_size=2", "--cache_bytes=0"};
  }
};

class QueueTest : public ServerSuite<QueueFlags> {
 protected:
  // Keeps the only worker busy, so that the texts sent next stay queued: two sentences with
  // options no test here uses, every one of 16 beams decoded to the last of 512 positions (seconds
  // of work), until CancelLongDecode() or the test's end. Returns once they are decoding.
  void StartLongDecodeAhead() {
    const MetricsSnapshot before = Scrape();
    v1::DecodingOptions options = Beam(16, 1);
    options.set_min_length(512);
    options.set_max_length(512);
    const std::string& line = TestLines()[0];
    long_decode_ = std::thread([this, options, line] {
      v1::TranslateResponse response;
      long_status_ = stub_->Translate(&long_context_, Request({line, line}, options), &response);
    });
    WaitForMetrics([&](const MetricsSnapshot& m) {
      return m.Since(before, "mtserve_queue_wait_seconds_count") == 2;
    });
  }
  // Ends the long decode: its caller cancels, and it leaves its decode within a step.
  void CancelLongDecode() {
    long_context_.TryCancel();
    long_decode_.join();
    EXPECT_EQ(long_status_.error_code(), grpc::StatusCode::CANCELLED) << Describe(long_status_);
  }
  void TearDown() override {
    if (long_decode_.joinable()) CancelLongDecode();
    ServerSuite::TearDown();
  }

 private:
  grpc::ClientContext long_context_;
  grpc::Status long_status_;
  std::thread long_decode_;
};

Labels RequestLabels(const std::string& method, const std::string& code,
                     const std::string& model = kModel) {
  return {{"model", model}, {"method", method}, {"code", code}};
}

// =============================================================================================
// 1. Translate gives exactly what mttranslate gives.

struct ParityCase {
  std::string name;
  std::vector<std::string> cli_flags;
  v1::DecodingOptions options;
  int num_hypotheses = 1;

  friend void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.name; }
};

// Translate through `stub` (a server whose models compute in `compute_type`) gives what
// mttranslate --compute_type=`compute_type` gives, in one request and alone.
void ExpectParity(v1::Translator::Stub& stub, const ParityCase& c,
                  const std::string& compute_type) {
  // 19 ordinary lines and the one that runs to max_length, so batches mix very different lengths.
  std::vector<std::string> lines(TestLines().begin(), TestLines().begin() + 19);
  lines.push_back(TestLines()[kRunawayLine]);
  std::vector<int> golden_index(19);
  for (int i = 0; i < 19; ++i) golden_index[i] = i;
  golden_index.push_back(kRunawayLine);

  std::vector<std::string> cli_flags = c.cli_flags;
  cli_flags.push_back("--compute_type=" + compute_type);
  const auto expected = RunMttranslate(lines, cli_flags, c.num_hypotheses);
  ASSERT_EQ(expected.size(), lines.size());
  const v1::DecodingOptions options = WithScores(c.options);

  auto check = [&](const v1::Translation& t, size_t i, const std::string& how) {
    SCOPED_TRACE(absl::StrCat(how, ", line ", golden_index[i], ": ", lines[i]));
    const GoldenLine& golden = Golden()[golden_index[i]];
    EXPECT_EQ(t.source_tokens(), golden.src_tokens);
    ASSERT_EQ(t.hypotheses_size(), c.num_hypotheses);
    ASSERT_EQ(expected[i].size(), static_cast<size_t>(c.num_hypotheses));
    for (int k = 0; k < c.num_hypotheses; ++k) {
      const v1::Hypothesis& h = t.hypotheses(k);
      EXPECT_EQ(h.text(), expected[i][k].text) << "hypothesis " << k;
      EXPECT_NEAR(h.score(), expected[i][k].score, 1e-4) << "hypothesis " << k;
      // num_tokens leaves out the final </s>; token_log_probs includes it.
      EXPECT_GE(h.num_tokens(), 1u);
      EXPECT_TRUE(h.token_log_probs_size() == static_cast<int>(h.num_tokens()) ||
                  h.token_log_probs_size() == static_cast<int>(h.num_tokens()) + 1)
          << h.num_tokens() << " tokens, " << h.token_log_probs_size() << " log-probs";
      if (c.options.beam_size() <= 1) {  // Not length-normalised: the score is the log-prob.
        double sum = 0;
        for (float lp : h.token_log_probs()) sum += lp;
        EXPECT_NEAR(h.score(), sum, 1e-3);
      }
    }
    // The independent reference's greedy output, too (computed in float32).
    if (c.name == "greedy" && compute_type == "float32") {
      EXPECT_EQ(t.hypotheses(0).text(), golden.greedy_text);
      EXPECT_EQ(static_cast<int>(t.hypotheses(0).num_tokens()),
                golden.greedy_ids - (golden.greedy_ends_with_eos ? 1 : 0));
    }
  };

  // All texts in one request (one engine batch).
  v1::TranslateResponse batch;
  grpc::Status status = Translate(stub, Request(lines, options), &batch);
  ASSERT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(batch.model(), kModel);
  ASSERT_EQ(batch.translations_size(), static_cast<int>(lines.size()));
  for (size_t i = 0; i < lines.size(); ++i) check(batch.translations(i), i, "one request");

  // One request per text.
  for (size_t i = 0; i < lines.size(); ++i) {
    v1::TranslateResponse single;
    status = Translate(stub, Request({lines[i]}, options), &single);
    ASSERT_TRUE(status.ok()) << Describe(status);
    ASSERT_EQ(single.translations_size(), 1);
    check(single.translations(0), i, "alone");
    // And the same token log-probs as in the batch.
    ExpectSameTranslation(single.translations(0), batch.translations(i), "alone vs batched");
  }

  // Without return_scores: the same texts, no scores.
  v1::TranslateResponse plain;
  status = Translate(stub, Request({lines[0], lines[1]}, c.options), &plain);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(plain.translations_size(), 2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(plain.translations(i).hypotheses_size(), c.num_hypotheses);
    for (int k = 0; k < c.num_hypotheses; ++k) {
      const v1::Hypothesis& h = plain.translations(i).hypotheses(k);
      EXPECT_EQ(h.text(), expected[i][k].text);
      EXPECT_EQ(h.score(), 0.f);
      EXPECT_EQ(h.token_log_probs_size(), 0);
    }
  }
}

std::vector<ParityCase> ParityCases() {
  return {ParityCase{"greedy", {}, Greedy(), 1},
          ParityCase{"beam4_nbest2", {"--beam_size=4", "--num_hypotheses=2"}, Beam(4, 2), 2},
          ParityCase{"topk_sampling",
                     {"--sampling_topk=10", "--sampling_temperature=0.8", "--seed=1234"},
                     Sampling(10, 0.8f, 1234),
                     1}};
}

std::string ParityCaseName(const ::testing::TestParamInfo<ParityCase>& info) {
  return info.param.name;
}

class ParityTest : public ServerTest, public ::testing::WithParamInterface<ParityCase> {};

TEST_P(ParityTest, TranslateEqualsMttranslate) { ExpectParity(*stub_, GetParam(), "float32"); }

INSTANTIATE_TEST_SUITE_P(Modes, ParityTest, ::testing::ValuesIn(ParityCases()), ParityCaseName);

// The same with the model in int8: the server's promise (offline's translation) holds in every
// compute type, since int8 quantises each row of activations on its own (per-row scales) and
// sums exactly, so a text's result does not depend on what it is batched with.
class Int8ParityTest : public Int8ServerTest, public ::testing::WithParamInterface<ParityCase> {};

TEST_P(Int8ParityTest, TranslateEqualsMttranslate) { ExpectParity(*stub_, GetParam(), "int8"); }

INSTANTIATE_TEST_SUITE_P(Modes, Int8ParityTest, ::testing::ValuesIn(ParityCases()), ParityCaseName);

// =============================================================================================
// 2. Concurrent clients get their own results.

TEST_F(ServerTest, ConcurrentClientsGetTheirOwnResults) {
  constexpr int kClients = 32;
  // Client i sends two requests: texts {a, b}, then {c}; options vary with i.
  auto options_of = [](int i) {
    switch (i % 4) {
      case 0:
        return Greedy();
      case 1:
        return WithScores(Beam(3, 2));
      case 2:
        return WithScores(Sampling(5, 1.0f, 100 + i));
      default: {
        v1::DecodingOptions o = WithScores(Greedy());
        o.set_max_length(6);
        return o;
      }
    }
  };
  auto text = [](int i, int j) { return TestLines()[20 + 3 * i + j]; };

  // Expected: each text translated alone, one request at a time.
  std::vector<std::vector<v1::Translation>> expected(kClients);
  for (int i = 0; i < kClients; ++i) {
    for (int j = 0; j < 3; ++j) {
      v1::TranslateResponse response;
      grpc::Status status = Translate(*stub_, Request({text(i, j)}, options_of(i)), &response);
      ASSERT_TRUE(status.ok()) << Describe(status);
      ASSERT_EQ(response.translations_size(), 1);
      expected[i].push_back(response.translations(0));
    }
  }

  std::vector<std::vector<v1::TranslateResponse>> got(kClients);
  std::vector<std::vector<grpc::Status>> statuses(kClients);
  std::latch start(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto stub = v1::Translator::NewStub(NewChannel(server_->address(), /*own_connection=*/true));
      start.arrive_and_wait();
      for (const auto& texts : {std::vector<std::string>{text(i, 0), text(i, 1)},
                                std::vector<std::string>{text(i, 2)}}) {
        v1::TranslateResponse response;
        // wait_for_ready: a fresh connection that fails to establish is retried rather than
        // failing the call (rarely, one of 32 simultaneous connects fails with UNAVAILABLE
        // "failed to connect to all addresses" on a busy machine).
        statuses[i].push_back(Translate(*stub, Request(texts, options_of(i)), &response,
                                        std::chrono::seconds(60), /*wait_for_ready=*/true));
        got[i].push_back(std::move(response));
      }
    });
  }
  for (std::thread& t : clients) t.join();

  for (int i = 0; i < kClients; ++i) {
    SCOPED_TRACE(absl::StrCat("client ", i));
    ASSERT_EQ(statuses[i].size(), 2u);
    for (const grpc::Status& status : statuses[i]) ASSERT_TRUE(status.ok()) << Describe(status);
    ASSERT_EQ(got[i][0].translations_size(), 2);
    ASSERT_EQ(got[i][1].translations_size(), 1);
    ExpectSameTranslation(got[i][0].translations(0), expected[i][0], "text a");
    ExpectSameTranslation(got[i][0].translations(1), expected[i][1], "text b");
    ExpectSameTranslation(got[i][1].translations(0), expected[i][2], "text c");
  }
}

// =============================================================================================
// 2b. Texts of many sentences: split, translated sentence by sentence, joined in their layout.

// The first `n` test lines (one sentence each).
std::vector<std::string> TestSentences(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n && i < Golden().size(); ++i) out.push_back(Golden()[i].src);
  return out;
}

// The issue's case: six sentences sent as one text came back as one sentence (five were lost).
// Now the text's translation is its sentences' translations, each exactly as when sent alone,
// joined by the same spaces; the ranges say where each sentence is on both sides.
TEST_F(ServerTest, AParagraphTranslatesAsItsSentencesDo) {
  const std::vector<std::string> sentences = TestSentences(6);
  v1::TranslateResponse alone, together;
  grpc::Status status = Translate(*stub_, Request(sentences, WithScores(Beam(4, 2))), &alone);
  ASSERT_TRUE(status.ok()) << Describe(status);
  const std::string paragraph = absl::StrJoin(sentences, " ");
  status = Translate(*stub_, Request({paragraph}, WithScores(Beam(4, 2))), &together);
  ASSERT_TRUE(status.ok()) << Describe(status);
  const v1::Translation& t = together.translations(0);

  ASSERT_EQ(t.sentences_size(), 6);
  size_t offset = 0;
  uint32_t source_tokens = 0;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(t.sentences(i).begin(), offset) << i;
    EXPECT_EQ(t.sentences(i).end(), offset + sentences[i].size()) << i;
    offset += sentences[i].size() + 1;
    source_tokens += alone.translations(i).source_tokens();
  }
  EXPECT_EQ(t.source_tokens(), source_tokens);
  // Hypothesis k joins each sentence's k-th best; scores and tokens add up.
  ASSERT_EQ(t.hypotheses_size(), 2);
  for (int k = 0; k < 2; ++k) {
    std::vector<std::string> texts;
    float score = 0;
    uint32_t tokens = 0;
    int log_probs = 0;
    for (int i = 0; i < 6; ++i) {
      const v1::Hypothesis& h = alone.translations(i).hypotheses(k);
      texts.push_back(h.text());
      score += h.score();
      tokens += h.num_tokens();
      log_probs += h.token_log_probs_size();
    }
    const v1::Hypothesis& h = t.hypotheses(k);
    EXPECT_EQ(h.text(), absl::StrJoin(texts, " ")) << "hypothesis " << k;
    EXPECT_NEAR(h.score(), score, 1e-3) << "hypothesis " << k;
    EXPECT_EQ(h.num_tokens(), tokens) << "hypothesis " << k;
    EXPECT_EQ(h.token_log_probs_size(), log_probs) << "hypothesis " << k;
    ASSERT_EQ(h.sentences_size(), 6);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(
          h.text().substr(h.sentences(i).begin(), h.sentences(i).end() - h.sentences(i).begin()),
          texts[i]);
    }
  }
}

// return_alignment on a text of two sentences: one source position per generated token (each
// sentence's </s> included, as token_log_probs), within source_tokens; the second sentence's
// positions come after the first sentence's source tokens. The text is first translated without
// alignments, so a cached result without them must not answer the request that asks for them.
TEST_F(ServerTest, AlignmentIndexesTheTextsSourceTokens) {
  const std::vector<std::string> sentences = TestSentences(2);
  const std::string text = absl::StrJoin(sentences, " ");
  for (const v1::DecodingOptions& options : {Greedy(), Beam(4, 2)}) {
    SCOPED_TRACE(options.ShortDebugString());
    v1::TranslateResponse plain, alone, together;
    ASSERT_TRUE(Translate(*stub_, Request({text}, WithScores(options)), &plain).ok());
    for (const v1::Hypothesis& h : plain.translations(0).hypotheses()) {
      EXPECT_EQ(h.alignment_size(), 0);
    }
    const v1::DecodingOptions aligned = WithAlignment(WithScores(options));
    grpc::Status status = Translate(*stub_, Request(sentences, aligned), &alone);
    ASSERT_TRUE(status.ok()) << Describe(status);
    status = Translate(*stub_, Request({text}, aligned), &together);
    ASSERT_TRUE(status.ok()) << Describe(status);
    const v1::Translation& t = together.translations(0);
    ASSERT_EQ(t.sentences_size(), 2);
    ASSERT_EQ(t.hypotheses_size(), plain.translations(0).hypotheses_size());
    const uint32_t first_source = alone.translations(0).source_tokens();
    EXPECT_EQ(t.source_tokens(), first_source + alone.translations(1).source_tokens());
    for (int k = 0; k < t.hypotheses_size(); ++k) {
      SCOPED_TRACE(absl::StrCat("hypothesis ", k));
      const v1::Hypothesis& h = t.hypotheses(k);
      EXPECT_EQ(h.text(), plain.translations(0).hypotheses(k).text());
      ASSERT_EQ(h.alignment_size(), h.token_log_probs_size());
      for (uint32_t position : h.alignment()) EXPECT_LT(position, t.source_tokens());
      // The sentences' own alignments, the second's moved past the first's source tokens.
      std::vector<uint32_t> expected;
      for (int i = 0; i < 2; ++i) {
        const v1::Hypothesis& part = alone.translations(i).hypotheses(k);
        EXPECT_EQ(part.alignment_size(), part.token_log_probs_size());
        for (uint32_t position : part.alignment()) {
          EXPECT_LT(position, alone.translations(i).source_tokens());
          expected.push_back(position + (i == 0 ? 0 : first_source));
        }
      }
      EXPECT_THAT(h.alignment(), ::testing::ElementsAreArray(expected));
    }
  }
}

// Indentation, the whitespace between sentences, line breaks, blank lines and trailing space
// come back byte for byte; a line break ends a sentence even without a full stop.
TEST_F(ServerTest, LayoutIsKeptExactly) {
  const std::vector<std::string> s = TestSentences(4);
  std::string no_stop = s[3];
  no_stop.pop_back();  // Its final ".".
  v1::TranslateResponse alone, together;
  grpc::Status status = Translate(*stub_, Request({s[0], s[1], s[2], no_stop}, Greedy()), &alone);
  ASSERT_TRUE(status.ok()) << Describe(status);
  auto best = [&](int i) { return alone.translations(i).hypotheses(0).text(); };
  const std::string text =
      absl::StrCat("  ", s[0], "   ", s[1], "\n\n\t", no_stop, "\r\n", s[2], "  \n");
  status = Translate(*stub_, Request({text, " \n\t "}, Greedy()), &together);
  ASSERT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(
      together.translations(0).hypotheses(0).text(),
      absl::StrCat("  ", best(0), "   ", best(1), "\n\n\t", best(3), "\r\n", best(2), "  \n"));
  // Whitespace alone is given back, with no sentences.
  EXPECT_EQ(together.translations(1).hypotheses(0).text(), " \n\t ");
  EXPECT_EQ(together.translations(1).sentences_size(), 0);
}

// split_sentences = false: the caller's text is one sentence, as before splitting existed.
TEST_F(ServerTest, SplittingCanBeTurnedOff) {
  const std::vector<std::string> s = TestSentences(2);
  v1::DecodingOptions whole = Greedy();
  whole.set_split_sentences(false);
  v1::TranslateResponse split, unsplit;
  const std::string text = absl::StrCat(s[0], " ", s[1]);
  ASSERT_TRUE(Translate(*stub_, Request({text}, Greedy()), &split).ok());
  ASSERT_TRUE(Translate(*stub_, Request({text}, whole), &unsplit).ok());
  EXPECT_EQ(split.translations(0).sentences_size(), 2);
  ASSERT_EQ(unsplit.translations(0).sentences_size(), 1);
  EXPECT_EQ(unsplit.translations(0).sentences(0).end(), text.size());
  EXPECT_NE(unsplit.translations(0).hypotheses(0).text(),
            split.translations(0).hypotheses(0).text());
}

v1::DecodingOptions Html(v1::DecodingOptions options = Greedy()) {
  options.set_format(v1::TEXT_FORMAT_HTML);
  return options;
}

// An HTML text: each block's text is translated as the same text sent as plain text would be,
// everything else comes back as written, and the answer is HTML (text escaped).
TEST_F(ServerTest, HtmlBlocksAreTranslatedAndTheRestIsKept) {
  const std::vector<std::string> plain = {"A dog runs.", "Two cats sleep.", "A man & a woman.",
                                          "A girl in a pink dress."};
  v1::TranslateResponse expected, got;
  ASSERT_TRUE(Translate(*stub_, Request(plain, Greedy()), &expected).ok());
  auto t = [&](int i) { return expected.translations(i).hypotheses(0).text(); };
  auto escaped = [](std::string s) {
    return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
  };
  const std::string html =
      "<!DOCTYPE html><html><body>\n<p class=\"x\">A dog runs.\n Two cats sleep.</p>\n"
      "<!-- note -->\n<ul><li>A man &amp; a woman.</li></ul>\n"
      "<img src=\"g.png\" alt=\"A girl in a pink dress.\">\n"
      "<code>a dog</code><script>var s = \"A dog.\";</script></body></html>";
  ASSERT_TRUE(Translate(*stub_, Request({html}, Html()), &got).ok());
  EXPECT_EQ(got.translations(0).hypotheses(0).text(),
            // The line break in the paragraph is a space (HTML's wrapping), kept between the
            // sentences with the space after it.
            absl::StrCat("<!DOCTYPE html><html><body>\n<p class=\"x\">", escaped(t(0)), "  ",
                         escaped(t(1)), "</p>\n<!-- note -->\n<ul><li>", escaped(t(2)),
                         "</li></ul>\n", "<img src=\"g.png\" alt=\"", escaped(t(3)), "\">\n",
                         "<code>a dog</code><script>var s = \"A dog.\";</script></body></html>"));
  uint32_t source_tokens = 0;
  for (const v1::Translation& translation : expected.translations()) {
    source_tokens += translation.source_tokens();
  }
  EXPECT_EQ(got.translations(0).source_tokens(), source_tokens);
}

// Inline markup is kept around part of the translation, and the output is well-formed: without
// its tags it is the text's plain translation.
TEST_F(ServerTest, HtmlInlineMarkupIsKept) {
  v1::TranslateResponse plain, got;
  ASSERT_TRUE(Translate(*stub_, Request({"A big dog runs on the beach."}, Greedy()), &plain).ok());
  ASSERT_TRUE(Translate(*stub_,
                        Request({"<p>A <b>big</b> dog runs on <a href=\"/b?x=1&amp;y=2\">the "
                                 "beach</a>.</p>"},
                                Html()),
                        &got)
                  .ok());
  const std::string out = got.translations(0).hypotheses(0).text();
  EXPECT_THAT(out, ::testing::StartsWith("<p>"));
  EXPECT_THAT(out, ::testing::EndsWith("</p>"));
  EXPECT_THAT(out, HasSubstr("<a href=\"/b?x=1&amp;y=2\">"));
  std::string without_tags = out;
  for (const char* tag : {"<p>", "</p>", "<b>", "</b>", "<a href=\"/b?x=1&amp;y=2\">", "</a>"}) {
    const size_t at = without_tags.find(tag);
    ASSERT_NE(at, std::string::npos) << tag << " in " << out;
    without_tags.erase(at, std::string(tag).size());
  }
  EXPECT_EQ(without_tags, plain.translations(0).hypotheses(0).text());
}

// =============================================================================================
// 3. Limits and errors: exact codes, messages naming the field and the limit. Every limit and
// field check is asserted in process (tests/serving/translation_core_test.cc); here what the
// transport adds, and each status code through gRPC.

// A sentence over --max_input_tokens is cut into pieces at spaces, each translated alone: the
// text's translation is theirs joined by the same spaces, and nothing is refused or dropped.
TEST_F(LimitsTest, SentenceOverMaxInputTokensIsTranslatedInPieces) {
  const std::string at_limit = LineWithTokens(16);
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub_, Request({at_limit}, Greedy()), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(response.translations(0).source_tokens(), 16u);
  EXPECT_EQ(response.translations(0).sentences_size(), 1);

  const std::string over = LineWithTokens(17);
  status = Translate(*stub_, Request({over}, Greedy()), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  const v1::Translation& t = response.translations(0);
  ASSERT_GE(t.sentences_size(), 2);
  std::vector<std::string> pieces;
  size_t end = 0;
  for (const v1::TextRange& r : t.sentences()) {
    ASSERT_LE(end, r.begin());
    ASSERT_LT(r.begin(), r.end());
    ASSERT_LE(r.end(), over.size());
    // Only spaces between pieces: every byte of the text is in one.
    EXPECT_EQ(over.substr(end, r.begin() - end).find_first_not_of(' '), std::string::npos);
    pieces.push_back(over.substr(r.begin(), r.end() - r.begin()));
    end = r.end();
  }
  EXPECT_EQ(end, over.size());
  // Each piece, translated alone as one sentence, is within the limit and gives its part.
  v1::DecodingOptions whole = Greedy();
  whole.set_split_sentences(false);
  v1::TranslateResponse alone;
  status = Translate(*stub_, Request(pieces, whole), &alone);
  ASSERT_TRUE(status.ok()) << Describe(status);
  uint32_t source_tokens = 0;
  const v1::Hypothesis& joined = t.hypotheses(0);
  ASSERT_EQ(joined.sentences_size(), t.sentences_size());
  for (int i = 0; i < alone.translations_size(); ++i) {
    EXPECT_LE(alone.translations(i).source_tokens(), 16u);
    source_tokens += alone.translations(i).source_tokens();
    const v1::TextRange& r = joined.sentences(i);
    EXPECT_EQ(joined.text().substr(r.begin(), r.end() - r.begin()),
              alone.translations(i).hypotheses(0).text());
  }
  EXPECT_EQ(t.source_tokens(), source_tokens);
}

// The request's bytes as protobuf encodes them, built by hand so that nothing on the client side
// checks the UTF-8: TranslateRequest{texts (field 2): each text}.
grpc::ByteBuffer RawTranslateRequest(const std::vector<std::string>& texts) {
  std::string bytes;
  for (const std::string& text : texts) {
    bytes += static_cast<char>((2 << 3) | 2);  // Field 2, length-delimited.
    size_t n = text.size();
    do {  // Varint length.
      bytes += static_cast<char>((n & 0x7F) | (n >= 0x80 ? 0x80 : 0));
      n >>= 7;
    } while (n != 0);
    bytes += text;
  }
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// A blocking unary call of `method` with raw request bytes.
grpc::Status RawUnaryCall(grpc::GenericStub& stub, const std::string& method,
                          const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
  grpc::ClientContext context;
  SetTimeout(context, 60s);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

TEST_F(LimitsTest, InvalidUtf8IsInvalidArgument) {
  // Sent raw: the client's protobuf library may refuse to serialise invalid UTF-8 itself.
  grpc::GenericStub generic(channel_);
  for (const std::string& bad : {std::string("A dog \xff runs."), std::string("caf\xc3"),
                                 std::string("\xed\xa0\x80")}) {  // 0xFF, truncated, surrogate.
    SCOPED_TRACE(::testing::PrintToString(bad));
    grpc::ByteBuffer response;
    const grpc::Status status = RawUnaryCall(generic, "/mtserve.v1.Translator/Translate",
                                             RawTranslateRequest({"A dog runs.", bad}), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
    EXPECT_THAT(status.error_message(), HasSubstr("texts[1] is not valid UTF-8"));
  }
  // The same bytes but valid UTF-8 go through the same path fine.
  grpc::ByteBuffer raw;
  const grpc::Status ok = RawUnaryCall(generic, "/mtserve.v1.Translator/Translate",
                                       RawTranslateRequest({"A dog runs.", "caf\xc3\xa9"}), &raw);
  ASSERT_TRUE(ok.ok()) << Describe(ok);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(raw.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices)
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  v1::TranslateResponse response;
  ASSERT_TRUE(response.ParseFromString(bytes));
  EXPECT_EQ(response.translations_size(), 2);
}

TEST_F(LimitsTest, MessageOverMaxMessageBytesIsResourceExhausted) {
  const MetricsSnapshot before = Scrape();
  const std::string huge(70000, 'a');  // Over --max_message_bytes=65536.
  const grpc::Status status = TranslateError(*stub_, Request({huge}, Greedy()));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << Describe(status);
  // Just under the limit, the message is accepted and the text translated: one word of 30,000
  // letters is cut into 2,000 pieces of 16 tokens (15 letters, </s>), more than the queue holds,
  // queued as it drains.
  const std::string big(30000, 'a');
  v1::TranslateResponse pieces;
  const grpc::Status translated = Translate(*stub_, Request({big}, Greedy()), &pieces);
  ASSERT_TRUE(translated.ok()) << Describe(translated);
  EXPECT_EQ(pieces.translations(0).sentences_size(), 2000);
  // The server keeps serving.
  v1::TranslateResponse response;
  const grpc::Status ok = Translate(*stub_, Request({"A dog runs."}, Greedy()), &response);
  EXPECT_TRUE(ok.ok()) << Describe(ok);
  const MetricsSnapshot after = Scrape();
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", RequestLabels("Translate", "OK")), 2);
}

TEST_F(LimitsTest, EmptyTextsGetEmptyTranslations) {
  // Empty texts among others: num_hypotheses empty hypotheses each, no source tokens.
  v1::TranslateResponse response;
  grpc::Status status =
      Translate(*stub_, Request({"", "A dog runs.", ""}, WithScores(Beam(3, 2))), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.translations_size(), 3);
  for (int i : {0, 2}) {
    const v1::Translation& t = response.translations(i);
    EXPECT_EQ(t.source_tokens(), 0u);
    ASSERT_EQ(t.hypotheses_size(), 2);
    for (const v1::Hypothesis& h : t.hypotheses()) {
      EXPECT_EQ(h.text(), "");
      EXPECT_EQ(h.num_tokens(), 0u);
      EXPECT_EQ(h.score(), 0.f);
      EXPECT_EQ(h.token_log_probs_size(), 0);
    }
  }
  EXPECT_EQ(response.translations(1).hypotheses_size(), 2);
  EXPECT_NE(response.translations(1).hypotheses(0).text(), "");

  // An empty text does not excuse invalid options.
  status = TranslateError(*stub_, Request({"", "A dog runs."}, Beam(5, 1)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
}

// A request with nothing to compute is answered at once. (The timeouts only catch a hang: these
// requests run no model.)
TEST_F(LimitsTest, RequestsWithNothingToComputeAreAnswered) {
  // Only empty texts, default options: one empty hypothesis each.
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub_, Request({"", ""}, Greedy()), &response, 10s);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.translations_size(), 2);
  for (const v1::Translation& t : response.translations()) {
    ASSERT_EQ(t.hypotheses_size(), 1);
    EXPECT_EQ(t.hypotheses(0).text(), "");
  }
  EXPECT_EQ(response.model(), kModel);

  // With n-best options: num_hypotheses empty hypotheses.
  response.Clear();
  status = Translate(*stub_, Request({""}, Beam(3, 3)), &response, 10s);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.translations_size(), 1);
  EXPECT_EQ(response.translations(0).hypotheses_size(), 3);

  // No texts at all: an empty answer.
  response.Clear();
  status = Translate(*stub_, Request({}, Greedy()), &response, 10s);
  ASSERT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(response.translations_size(), 0);
  EXPECT_EQ(response.model(), kModel);

  // Invalid options are still refused.
  status = TranslateError(*stub_, Request({""}, Beam(5, 1)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
  // Nothing is left in flight.
  EXPECT_EQ(Scrape().Sum("mtserve_in_flight_requests"), 0);
}

TEST_F(LimitsTest, RejectedRequestsAreCountedWithTheirCode) {
  const MetricsSnapshot before = Scrape();
  TranslateError(*stub_, Request({"A dog runs."}, Beam(5, 1)));                 // INVALID_ARGUMENT
  TranslateError(*stub_, Request({"A dog runs."}, Beam(2, 3)));                 // INVALID_ARGUMENT
  TranslateError(*stub_, Request({"A dog runs."}, Greedy(), "no-such-model"));  // NOT_FOUND
  const MetricsSnapshot after = Scrape();
  auto delta = [&](const Labels& labels) {
    return after.Since(before, "mtserve_requests_total", labels);
  };
  EXPECT_EQ(delta(RequestLabels("Translate", "INVALID_ARGUMENT")), 2);
  // Failed before a model was chosen: the model label is "none" (not the client's string).
  EXPECT_EQ(delta(RequestLabels("Translate", "NOT_FOUND", "none")), 1);
  EXPECT_FALSE(after.Has("mtserve_requests_total", {{"model", "no-such-model"}}));
  EXPECT_EQ(delta({{"code", "OK"}}), 0);
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 0);
}

// A stream's per-text errors are answers; the stream goes on.
TEST_F(LimitsTest, StreamErrorsDoNotEndTheStream) {
  struct Item {
    std::string id, text, model;
    v1::DecodingOptions options;
    int expected_code;  // 0: a translation.
    std::string message;
  };
  const std::vector<Item> items = {
      {"ok-1", "A dog runs.", "", Greedy(), 0, ""},
      {"too-long", std::string(40000, 'a'), "", Greedy(), 3,
       "text has 40000 bytes; the limit is 32768"},
      {"ok-2", "Two women are walking.", "", Beam(2, 2), 0, ""},
      {"bad-beam", "A dog runs.", "", Beam(5, 1), 3, "options.beam_size is 5; the limit is 4"},
      {"bad-model", "A dog runs.", "xx", Greedy(), 5, "\"xx\""},
      {"empty", "", "", Beam(2, 2), 0, ""},
      {"ok-3", "A man sleeps.", "", Greedy(), 0, ""},
  };
  grpc::ClientContext context;
  SetTimeout(context, 120s);
  auto stream = stub_->TranslateStream(&context);
  for (const Item& item : items) {
    v1::TranslateStreamRequest request;
    request.set_id(item.id);
    request.set_text(item.text);
    request.set_model(item.model);
    *request.mutable_options() = item.options;
    ASSERT_TRUE(stream->Write(request)) << item.id;
  }
  ASSERT_TRUE(stream->WritesDone());
  std::map<std::string, v1::TranslateStreamResponse> answers;
  for (v1::TranslateStreamResponse answer; stream->Read(&answer);) {
    EXPECT_TRUE(answers.emplace(answer.id(), answer).second) << "answered twice: " << answer.id();
  }
  const grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(answers.size(), items.size());
  for (const Item& item : items) {
    SCOPED_TRACE(item.id);
    ASSERT_EQ(answers.count(item.id), 1u);
    const v1::TranslateStreamResponse& a = answers[item.id];
    if (item.expected_code != 0) {
      EXPECT_TRUE(a.has_error());
      EXPECT_FALSE(a.has_translation());
      EXPECT_EQ(a.error().code(), item.expected_code) << a.error().message();
      EXPECT_THAT(a.error().message(), HasSubstr(item.message));
      continue;
    }
    EXPECT_FALSE(a.has_error()) << a.error().message();
    ASSERT_TRUE(a.has_translation());
    EXPECT_EQ(a.model(), kModel);
    // The same as the unary call.
    v1::TranslateResponse unary;
    const grpc::Status u = Translate(*stub_, Request({item.text}, item.options), &unary);
    ASSERT_TRUE(u.ok()) << Describe(u);
    ExpectSameTranslation(a.translation(), unary.translations(0), "stream vs unary");
  }
  EXPECT_EQ(answers["empty"].translation().hypotheses_size(), 2);
  EXPECT_EQ(answers["empty"].translation().hypotheses(0).text(), "");
}

// Invalid UTF-8 in a streamed text is that text's INVALID_ARGUMENT answer; the texts after it are
// still translated. Sent raw (the client library may check UTF-8 itself): each message is
// TranslateStreamRequest{id (field 1), text (field 2)}.
// A length-delimited protobuf field: `number`, then `value`'s length and bytes.
std::string ProtoField(int number, const std::string& value) {
  std::string out(1, static_cast<char>((number << 3) | 2));
  size_t n = value.size();
  do {  // Varint length.
    out += static_cast<char>((n & 0x7F) | (n >= 0x80 ? 0x80 : 0));
    n >>= 7;
  } while (n != 0);
  return out + value;
}

// What a raw TranslateStream call got: the answers by id, and how it ended.
struct RawStreamResult {
  std::map<std::string, v1::TranslateStreamResponse> answers;
  grpc::Status status;
};

// Sends `messages` (the bytes of each) on a TranslateStream with a generic stub, so that nothing
// on the client side checks them, closes the client's side and reads until the server ends.
RawStreamResult RunRawStream(const std::shared_ptr<grpc::Channel>& channel,
                             const std::vector<std::string>& messages) {
  grpc::GenericStub generic(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  SetTimeout(context, 60s);
  // A tiny synchronous driver over the async generic stream.
  auto next = [&cq] {
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    return ok;
  };
  auto stream = generic.PrepareCall(&context, "/mtserve.v1.Translator/TranslateStream", &cq);
  stream->StartCall(nullptr);
  next();
  // Writes fail once the server has ended the call: what matters is what it answered.
  for (const std::string& bytes : messages) {
    grpc::Slice slice(bytes);
    stream->Write(grpc::ByteBuffer(&slice, 1), nullptr);
    if (!next()) break;
  }
  stream->WritesDone(nullptr);
  next();
  RawStreamResult result;
  while (true) {
    grpc::ByteBuffer buffer;
    stream->Read(&buffer, nullptr);
    if (!next()) break;
    std::vector<grpc::Slice> slices;
    EXPECT_TRUE(buffer.Dump(&slices).ok());
    std::string bytes;
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    v1::TranslateStreamResponse answer;
    EXPECT_TRUE(answer.ParseFromString(bytes));
    result.answers[answer.id()] = answer;
  }
  stream->Finish(&result.status, nullptr);
  next();
  return result;
}

// TranslateStreamRequest{id, text}, as bytes.
std::string StreamMessage(const std::string& id, const std::string& text) {
  return ProtoField(1, id) + ProtoField(2, text);
}

TEST_F(LimitsTest, StreamInvalidUtf8IsAnAnswer) {
  const RawStreamResult result = RunRawStream(
      channel_, {StreamMessage("before", "A dog runs."), StreamMessage("bad", "caf\xc3"),
                 StreamMessage("after", "A man sleeps.")});
  EXPECT_TRUE(result.status.ok()) << Describe(result.status);
  auto answers = result.answers;
  EXPECT_EQ(answers.size(), 3u);
  EXPECT_TRUE(answers["before"].has_translation());
  EXPECT_EQ(answers["bad"].error().code(), 3);
  EXPECT_THAT(answers["bad"].error().message(), HasSubstr("text is not valid UTF-8"));
  EXPECT_TRUE(answers["after"].has_translation()) << "the stream ended at the invalid text";
}

// A message that does not parse (an `id` that is not UTF-8, which proto3 strings must be, or bytes
// that are no message) ends the stream with INVALID_ARGUMENT saying which one, after the texts
// read before it are answered; it used to end the stream OK, leaving the texts after it
// unanswered without a word.
TEST_F(ServerTest, MalformedStreamMessageEndsTheStreamWithInvalidArgument) {
  for (const std::string& malformed :
       {StreamMessage("bad \xff id", "A cat."), std::string("\xff\xff\xff\xff")}) {
    SCOPED_TRACE(::testing::PrintToString(malformed));
    const MetricsSnapshot before = Scrape();
    const RawStreamResult result = RunRawStream(
        channel_, {StreamMessage("first", "A dog runs."), StreamMessage("second", "A boy."),
                   malformed, StreamMessage("after", "A man sleeps.")});
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << Describe(result.status);
    EXPECT_THAT(result.status.error_message(),
                HasSubstr("message 3 of the stream (mtserve.v1.TranslateStreamRequest) is not a "
                          "valid message"));
    ASSERT_EQ(result.answers.count("first"), 1u);
    ASSERT_EQ(result.answers.count("second"), 1u);
    EXPECT_TRUE(result.answers.at("first").has_translation());
    EXPECT_TRUE(result.answers.at("second").has_translation());
    EXPECT_EQ(result.answers.count("after"), 0u) << "read past the malformed message";
    const MetricsSnapshot after = Scrape();
    EXPECT_EQ(after.Since(before, "mtserve_requests_total",
                          RequestLabels("TranslateStream", "INVALID_ARGUMENT", "none")),
              1);
  }
}

// Bytes that are not a TranslateRequest get INVALID_ARGUMENT with a message (gRPC's own parsing
// answered UNIMPLEMENTED without one), and are counted.
TEST_F(ServerTest, MalformedRequestIsInvalidArgumentAndCounted) {
  grpc::GenericStub generic(channel_);
  for (const std::string& malformed :
       {std::string("\xff\xff\xff\xff"), ProtoField(1, "model \xff")}) {
    SCOPED_TRACE(::testing::PrintToString(malformed));
    const MetricsSnapshot before = Scrape();
    grpc::Slice slice(malformed);
    grpc::ByteBuffer response;
    const grpc::Status status = RawUnaryCall(generic, "/mtserve.v1.Translator/Translate",
                                             grpc::ByteBuffer(&slice, 1), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
    EXPECT_THAT(status.error_message(),
                HasSubstr("the request (mtserve.v1.TranslateRequest) is not a valid message"));
    EXPECT_EQ(Scrape().Since(before, "mtserve_requests_total",
                             RequestLabels("Translate", "INVALID_ARGUMENT", "none")),
              1);
  }
}

// A model name of any length is echoed cut short: a 100 KB name in the message made gRPC answer
// RESOURCE_EXHAUSTED ("received initial metadata size exceeds limit") instead of NOT_FOUND.
TEST_F(ServerTest, LongModelNameIsNotFoundWithAShortMessage) {
  const std::string name(100 * 1024, 'm');
  const grpc::Status status = TranslateError(*stub_, Request({"A dog runs."}, Greedy(), name));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("(102400 bytes)\" is not served"));
  EXPECT_LT(status.error_message().size(), 300u);
}

// The queue: --max_queued_texts=2 bounds the sentences queued and the texts waiting for room.
TEST_F(QueueTest, TextsWaitingOverTheBoundAreResourceExhausted) {
  // More texts than the bound can never wait: --max_texts_per_request is at most
  // --max_queued_texts (the server refuses to start otherwise), so such a request is invalid.
  const std::vector<std::string> three = {"A dog runs.", "A cat sleeps.", "A man walks."};
  grpc::Status status = TranslateError(*stub_, Request(three, Greedy()));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_texts_per_request"));

  // Behind the long decode, two texts of options of their own fill the queue: they leave at
  // their deadline.
  StartLongDecodeAhead();
  const MetricsSnapshot before = Scrape();
  std::vector<grpc::Status> stuck(2);
  std::vector<std::thread> stuck_threads;
  for (int i = 0; i < 2; ++i) {
    stuck_threads.emplace_back([&, i] {
      v1::DecodingOptions options = Greedy();
      options.set_max_length(100 + i);
      v1::TranslateResponse response;
      stuck[i] = Translate(*stub_, Request({three[i]}, options), &response, 1000ms);
    });
  }
  WaitForMetrics([](const MetricsSnapshot& m) { return m.Sum("mtserve_queue_depth") == 2; });
  // A request of two texts waits for room; it is counted in the queue depth too.
  v1::TranslateResponse waited;
  grpc::Status waited_status;
  std::thread waiting([&] {
    waited_status = Translate(
        *stub_, Request({"A bird sings.", "A man walks."}, WithScores(Greedy())), &waited);
  });
  const MetricsSnapshot full =
      WaitForMetrics([](const MetricsSnapshot& m) { return m.Sum("mtserve_queue_depth") == 4; });
  ASSERT_EQ(full.Sum("mtserve_queue_depth"), 4);
  // With two texts waiting, one more is over the bound.
  status = TranslateError(*stub_, Request({"A cat sleeps."}, Greedy()));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("2 texts waiting to be queued"));

  // The stuck texts' deadline passes: the waiting request is queued, and once the worker is free
  // it is translated as offline.
  for (std::thread& t : stuck_threads) t.join();
  for (const grpc::Status& s : stuck) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << Describe(s);
  }
  WaitForMetrics([](const MetricsSnapshot& m) { return m.Sum("mtserve_queue_depth") == 2; });
  CancelLongDecode();
  waiting.join();
  ASSERT_TRUE(waited_status.ok()) << Describe(waited_status);
  const auto expected = RunMttranslate({"A bird sings.", "A man walks."}, {}, 1);
  ASSERT_EQ(expected.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(waited.translations(i).hypotheses(0).text(), expected[i][0].text);
    EXPECT_NEAR(waited.translations(i).hypotheses(0).score(), expected[i][0].score, 1e-4);
  }

  const MetricsSnapshot after = WaitForMetrics(
      [](const MetricsSnapshot& m) { return m.Sum("mtserve_in_flight_requests") == 0; });
  EXPECT_EQ(after.Since(before, "mtserve_requests_total",
                        RequestLabels("Translate", "RESOURCE_EXHAUSTED")),
            1);
  EXPECT_EQ(after.Sum("mtserve_queue_depth"), 0);
}

// A document of 5,000 sentences, about five times the queue's bound (1,024), is translated: its
// sentences are queued as the queue drains. Two tokens a sentence keep it quick, and say so:
// every sentence's translation ("Ein Hund läuft.") is longer, so each is counted as cut at its
// bound.
TEST_F(ServerTest, ADocumentOfThousandsOfSentencesIsTranslated) {
  constexpr int kSentences = 5000;
  std::string document;
  for (int i = 0; i < kSentences; ++i) absl::StrAppend(&document, i > 0 ? " " : "", "A dog runs.");
  v1::DecodingOptions options = Greedy();
  options.set_max_length(2);
  v1::TranslateResponse response;
  const grpc::Status status = Translate(*stub_, Request({document}, options), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.translations_size(), 1);
  EXPECT_EQ(response.translations(0).sentences_size(), kSentences);
  ASSERT_EQ(response.translations(0).hypotheses_size(), 1);
  EXPECT_EQ(response.translations(0).hypotheses(0).sentences_size(), kSentences);
  EXPECT_EQ(response.translations(0).hypotheses(0).truncated_sentences(), kSentences);
}

// =============================================================================================
// 4. Health and shutdown.

TEST_F(ServerTest, HealthServing) {
  TranslationClient client(server_->address());
  ExpectHealth(client, HealthResponse::SERVING);
  const absl::StatusOr<HealthStatus> unknown = client.Health("no.such.Service");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound) << unknown.status();
}

// Models that take seconds to load: copies of an OPUS-MT-base-shaped random checkpoint (about a
// second each), made by make_random_checkpoint. What a loading server answers is checked well
// within that time. (A FIFO as config.json held a load for as long as a test liked; loading now
// refuses FIFOs, which hung it forever.)
class SlowModels {
 public:
  explicit SlowModels(int copies) : copies_(copies) {
    char pattern[] = "/tmp/mtserve-server-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    const std::string make =
        (std::filesystem::path(ServerBinary()).parent_path() / "make_random_checkpoint").string();
    const std::string command =
        absl::StrCat(make, " --tokenizer_dir=", MTSERVE_TEST_DATA_DIR,
                     "/opus-mt/en-mg --out=", (dir_ / "model").string(), " --seed=1 >/dev/null");
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  }
  ~SlowModels() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // --model's value: the copies, the first named `first_name`.
  std::string Spec(const std::string& first_name) const {
    std::string spec = absl::StrCat(first_name, "=", (dir_ / "model").string());
    for (int i = 1; i < copies_; ++i) {
      absl::StrAppend(&spec, ",copy", i, "=", (dir_ / "model").string());
    }
    return spec;
  }

 private:
  int copies_;
  std::filesystem::path dir_;
};

// Prints the server's stderr when the current test has failed, on scope exit.
class StderrOnFailure {
 public:
  explicit StderrOnFailure(const ChildProcess* process) : process_(process) {}
  ~StderrOnFailure() {
    if (::testing::Test::HasFailure() && process_ != nullptr) {
      std::fprintf(stderr, "mtserve stderr:\n%s\n", process_->StderrText().c_str());
    }
  }

 private:
  const ChildProcess* process_;
};

// The stderr of mtserve started with `flags` (no metrics or HTTP port), which must refuse to
// start: exit status 1.
std::string RefusedStartUp(const std::vector<std::string>& flags) {
  std::vector<std::string> all = {"--listen=127.0.0.1:0", "--metrics_listen=", "--http_listen="};
  all.insert(all.end(), flags.begin(), flags.end());
  ChildProcess server(ServerBinary(), all);
  const std::optional<int> exit_status = server.WaitForExit(60s);
  EXPECT_TRUE(exit_status.has_value() && WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 1)
      << exit_status.value_or(-1);
  return server.StderrText();
}

// Flags that could never work together are refused at start-up, naming both: a request of more
// texts than the queue holds used to get RESOURCE_EXHAUSTED "retry later", forever.
TEST(LifecycleTest, RefusesARequestLimitOverTheQueueAtStartUp) {
  EXPECT_THAT(RefusedStartUp({"--max_texts_per_request=10", "--max_queued_texts=5"}),
              HasSubstr("--max_texts_per_request (10) must not exceed --max_queued_texts (5)"));
}

// A sentence is cut into pieces of a token and </s> at least.
TEST(LifecycleTest, RefusesATokenLimitBelowTwoAtStartUp) {
  EXPECT_THAT(RefusedStartUp({"--max_input_tokens=1"}),
              HasSubstr("--max_input_tokens must be at least 2"));
}

TEST(LifecycleTest, RefusesATextLimitOverTheMessageLimitAtStartUp) {
  EXPECT_THAT(
      RefusedStartUp({"--max_text_bytes=2MiB", "--max_message_bytes=1048576"}),
      HasSubstr("--max_text_bytes (2097152) must not exceed --max_message_bytes (1048576)"));
}

// The file API's flags that could never work are refused at start-up, naming the flag.
TEST(LifecycleTest, RefusesFileJobFlagsThatCannotWork) {
  EXPECT_THAT(RefusedStartUp({"--max_file_bytes=0"}),
              HasSubstr("--max_file_bytes must be at least 1"));
  EXPECT_THAT(RefusedStartUp({"--max_file_bytes=2MiB", "--job_results_bytes=1MiB"}),
              HasSubstr("--job_results_bytes (1048576) must be at least --max_file_bytes "
                        "(2097152)"));
  EXPECT_THAT(RefusedStartUp({"--file_job_timeout=0s"}),
              HasSubstr("--file_job_timeout must be positive and finite, not 0"));
  EXPECT_THAT(RefusedStartUp({"--job_retention=-1s"}),
              HasSubstr("--job_retention must be positive and finite, not -1s"));
  EXPECT_THAT(RefusedStartUp({"--max_jobs=0"}), HasSubstr("--max_jobs must be at least 1"));
  // A directory that cannot be made.
  EXPECT_THAT(RefusedStartUp({"--job_dir=/proc/mtserve-jobs"}),
              HasSubstr("--job_dir=/proc/mtserve-jobs: "));
}

// --ready_file in a directory that does not exist stops start-up before the ports open, naming
// the flag (not once the ports are open, or never: a harness would wait for the file).
TEST(LifecycleTest, RefusesAReadyFileInAMissingDirectory) {
  const std::string text = RefusedStartUp({"--ready_file=/nonexistent-mtserve-dir/ready.json"});
  EXPECT_THAT(text, HasSubstr("--ready_file=/nonexistent-mtserve-dir/ready.json: its directory "
                              "/nonexistent-mtserve-dir does not exist"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("listening on")));
}

// The ready file gives the ports the start-up lines print, "null" for a listener that is off,
// then says "serving", and "draining" once SIGTERM drains (and stays so after the exit).
TEST(LifecycleTest, ReadyFileFollowsTheLifecycle) {
  ServerProcess server(ServerBinary(), {"--workers=1", "--http_listen=127.0.0.1:0"});
  StderrOnFailure dump(&server.process());
  std::optional<nlohmann::json> ready = server.ReadyFile();
  ASSERT_TRUE(ready.has_value());
  const int http_port = (*ready)["http"].get<int>();
  EXPECT_THAT(
      server.process().StderrText(),
      HasSubstr("(port " + std::to_string(server.grpc_port()) + "), metrics on 127.0.0.1:0 (port " +
                std::to_string(server.metrics_port()) + ")\n"));
  EXPECT_THAT(server.process().StderrText(),
              HasSubstr("mtserve: HTTP on 127.0.0.1:0 (port " + std::to_string(http_port) + ")\n"));
  ASSERT_TRUE(server.WaitUntilServing());
  ready = server.ReadyFile();
  EXPECT_EQ(*ready, nlohmann::json({{"state", "serving"},
                                    {"grpc", server.grpc_port()},
                                    {"http", http_port},
                                    {"metrics", server.metrics_port()}}));
  ASSERT_TRUE(server.process().Signal(SIGTERM));
  const std::optional<int> exit_status = server.process().WaitForExit(60s);
  ASSERT_TRUE(exit_status.has_value() && WIFEXITED(*exit_status));
  EXPECT_EQ(WEXITSTATUS(*exit_status), 0);
  ready = server.ReadyFile();
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ((*ready)["state"], "draining");
  EXPECT_EQ((*ready)["grpc"], server.grpc_port());

  ServerProcess off(ServerBinary(), {"--workers=1", "--metrics_listen="});
  ready = off.ReadyFile();
  ASSERT_TRUE(ready.has_value());
  EXPECT_TRUE((*ready)["http"].is_null());
  EXPECT_TRUE((*ready)["metrics"].is_null());
}

// Without a metrics endpoint the start-up line says so (it read "metrics on  (port 0)").
TEST(LifecycleTest, MetricsOffIsSaid) {
  ServerProcess server(ServerBinary(), {"--workers=1", "--metrics_listen="});
  EXPECT_EQ(server.metrics_port(), 0);
  EXPECT_THAT(server.process().StderrText(),
              HasSubstr("(port " + std::to_string(server.grpc_port()) + "), metrics off\n"));
  ASSERT_TRUE(server.WaitUntilServing()) << server.process().StderrText();
}

TEST(LifecycleTest, NotServingUntilModelsAreLoaded) {
  SlowModels models(6);
  ServerProcess server(ServerBinary(), {"--workers=1", "--model=" + models.Spec(kModel)});
  StderrOnFailure dump(&server.process());
  TranslationClient client(server.address());
  auto stub = v1::Translator::NewStub(NewChannel(server.address()));

  // Listening, the models not loaded.
  ExpectHealth(client, HealthResponse::NOT_SERVING);
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub, Request({"A dog runs."}, Greedy()), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("loading"));
  {
    grpc::ClientContext context;
    SetTimeout(context, 60s);
    v1::ListModelsResponse models;
    status = stub->ListModels(&context, v1::ListModelsRequest(), &models);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  }
  // Metrics are up already.
  EXPECT_TRUE(testing::ScrapeMetrics(server.metrics_port()).Has("process_resident_memory_bytes"));

  // All of that happened before the last model loaded.
  EXPECT_FALSE(server.process().StderrText().find("mtserve: serving") != std::string::npos);
  ASSERT_TRUE(server.WaitUntilServing()) << server.process().StderrText();
  ExpectHealth(client, HealthResponse::SERVING);
  v1::DecodingOptions short_output = Greedy();
  short_output.set_max_length(4);  // Random weights: the output is noise, whatever its length.
  status = Translate(*stub, Request({"A dog runs."}, short_output), &response);
  EXPECT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(response.model(), kModel);
}

TEST(LifecycleTest, SigtermDrainsThenExitsZero) {
  std::string error;
  std::unique_ptr<ServerProcess> server =
      StartServer({"--workers=1", "--threads_per_worker=1", "--shutdown_grace=240s"}, &error);
  ASSERT_NE(server, nullptr) << error;
  StderrOnFailure dump(&server->process());
  TranslationClient client(server->address());
  auto stub = v1::Translator::NewStub(NewChannel(server->address()));
  auto scrape = [&] { return testing::ScrapeMetrics(server->metrics_port()); };

  // A stream kept open across the signal, the client never closing it: one text answered before,
  // one long text still being translated when the signal comes.
  grpc::ClientContext stream_context;
  auto stream = stub->TranslateStream(&stream_context);
  v1::TranslateStreamRequest text;
  text.set_id("before");
  text.set_text("A dog runs.");
  ASSERT_TRUE(stream->Write(text));
  v1::TranslateStreamResponse answer;
  ASSERT_TRUE(stream->Read(&answer));
  EXPECT_EQ(answer.id(), "before");
  ASSERT_TRUE(answer.has_translation()) << answer.error().message();
  text.set_id("long");
  text.set_text(TestLines()[2]);
  *text.mutable_options() = Long();
  ASSERT_TRUE(stream->Write(text));

  // A long request, running when the signal comes.
  v1::TranslateResponse long_response;
  grpc::Status long_status;
  // Its deadline and the grace period leave room for a sanitizer build on a busy machine, where
  // the three long texts on one worker took over a minute.
  std::thread long_call([&] {
    long_status = Translate(*stub, Request({TestLines()[0], TestLines()[1]}, Long()),
                            &long_response, std::chrono::seconds(240));
  });
  const MetricsSnapshot running = testing::WaitForMetrics(
      server->metrics_port(),
      [](const MetricsSnapshot& m) { return m.Sum("mtserve_queue_wait_seconds_count") >= 4; });
  ASSERT_GE(running.Sum("mtserve_queue_wait_seconds_count"), 4);  // 2 streamed + 2 long.

  ASSERT_TRUE(server->process().Signal(SIGTERM));
  ASSERT_TRUE(server->process().WaitForStderr("mtserve: Terminated: draining", 60s).has_value())
      << server->process().StderrText();
  // The long request and the long streamed text are still being translated (they take far
  // longer than these checks).
  EXPECT_EQ(scrape().Sum("mtserve_in_flight_requests"), 2);

  ExpectHealth(client, HealthResponse::NOT_SERVING);

  v1::TranslateResponse refused;
  grpc::Status status = Translate(*stub, Request({"A dog runs."}, Greedy()), &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
  // So is ListModels, and a new stream.
  {
    grpc::ClientContext context;
    SetTimeout(context, 60s);
    v1::ListModelsResponse models;
    status = stub->ListModels(&context, v1::ListModelsRequest(), &models);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  }
  {
    grpc::ClientContext context;
    auto late = stub->TranslateStream(&context);
    late->Write(text);
    v1::TranslateStreamResponse none;
    EXPECT_FALSE(late->Read(&none));
    status = late->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  }

  // The open stream gets its long text's translation, then ends: UNAVAILABLE, telling the
  // client that what it sent after was not read.
  ASSERT_TRUE(stream->Read(&answer));
  EXPECT_EQ(answer.id(), "long");
  ASSERT_TRUE(answer.has_translation()) << answer.error().message();
  EXPECT_EQ(answer.translation().hypotheses(0).num_tokens(), 512u);
  EXPECT_FALSE(stream->Read(&answer));
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(status);
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));

  // The request in flight finishes normally.
  long_call.join();
  ASSERT_TRUE(long_status.ok()) << Describe(long_status);
  ASSERT_EQ(long_response.translations_size(), 2);
  for (const v1::Translation& t : long_response.translations()) {
    EXPECT_EQ(t.hypotheses(0).num_tokens(), 512u);  // min_length 512: never ends on </s>.
  }

  // Nothing is left in flight: the server exits 0, without waiting out the grace period, though
  // the client never closed its stream.
  const std::optional<int> exit_status = server->process().WaitForExit(60s);
  ASSERT_TRUE(exit_status.has_value()) << server->process().StderrText();
  EXPECT_TRUE(WIFEXITED(*exit_status)) << *exit_status;
  EXPECT_EQ(WEXITSTATUS(*exit_status), 0) << server->process().StderrText();
  EXPECT_THAT(server->process().StderrText(), HasSubstr("mtserve: stopped"));
  EXPECT_THAT(server->process().StderrText(), ::testing::Not(HasSubstr("grace period over")));
}

// =============================================================================================
// 5. Metrics.

TEST_F(ServerTest, MetricsMoveWithTraffic) {
  const MetricsSnapshot before = Scrape();
  // Present before any traffic.
  EXPECT_EQ(before.Sum("mtserve_model_info", {{"model", kModel},
                                              {"source_language", "en"},
                                              {"target_language", "de"},
                                              {"compute_type", "float32"}}),
            1);
  EXPECT_GT(before.Sum("process_resident_memory_bytes"), 0);
  EXPECT_TRUE(before.Has("process_cpu_seconds_total"));
  EXPECT_GT(before.Sum("process_start_time_seconds"), 0);

  // Traffic: one Translate of 3 texts, 2 streamed texts, one refused request.
  const std::vector<std::string> texts = {TestLines()[200], TestLines()[201], TestLines()[202]};
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub_, Request(texts, Greedy()), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  int input_tokens = 0;
  int generated_tokens = 0;
  for (const v1::Translation& t : response.translations()) {
    input_tokens += t.source_tokens();
    generated_tokens += t.hypotheses(0).num_tokens();
  }
  {
    grpc::ClientContext context;
    SetTimeout(context, 120s);
    auto stream = stub_->TranslateStream(&context);
    for (int i = 0; i < 2; ++i) {
      v1::TranslateStreamRequest request;
      request.set_id(absl::StrCat(i));
      request.set_text(TestLines()[203 + i]);
      *request.mutable_options() = Beam(2, 2);
      ASSERT_TRUE(stream->Write(request));
    }
    ASSERT_TRUE(stream->WritesDone());
    for (v1::TranslateStreamResponse answer; stream->Read(&answer);) {
      ASSERT_TRUE(answer.has_translation()) << answer.error().message();
      input_tokens += answer.translation().source_tokens();
      generated_tokens += answer.translation().hypotheses(0).num_tokens();  // The best only.
    }
    status = stream->Finish();
    ASSERT_TRUE(status.ok()) << Describe(status);
  }
  TranslateError(*stub_, Request({"A dog runs."}, Beam(17, 1)));  // Over --max_beam_size (16).
  EXPECT_GT(input_tokens, 0);
  EXPECT_GT(generated_tokens, 0);

  // Token counters and request counts are added after the answers are sent: wait for them (the
  // checks below then say whether they are right).
  const MetricsSnapshot after = WaitForMetrics([&](const MetricsSnapshot& m) {
    return m.Since(before, "mtserve_input_tokens_total") >= input_tokens &&
           m.Since(before, "mtserve_generated_tokens_total") >= generated_tokens &&
           m.Since(before, "mtserve_requests_total") >= 4 &&
           m.Since(before, "mtserve_request_duration_seconds_count") >= 4;
  });
  auto delta = [&](const std::string& name, const Labels& labels = {}) {
    return after.Since(before, name, labels);
  };
  EXPECT_EQ(delta("mtserve_requests_total", RequestLabels("Translate", "OK")), 1);
  EXPECT_EQ(delta("mtserve_requests_total", RequestLabels("TranslateStream", "OK")), 2);
  EXPECT_EQ(delta("mtserve_requests_total", RequestLabels("Translate", "INVALID_ARGUMENT")), 1);
  EXPECT_EQ(delta("mtserve_requests_total"), 4);
  EXPECT_EQ(delta("mtserve_request_duration_seconds_count", RequestLabels("Translate", "OK")), 1);
  EXPECT_EQ(delta("mtserve_request_duration_seconds_count"), 4);
  EXPECT_GT(delta("mtserve_request_duration_seconds_sum"), 0);
  // Every computed text waited in the queue once and ran in one batch.
  EXPECT_EQ(delta("mtserve_queue_wait_seconds_count", {{"model", kModel}}), 5);
  // The batch size is observed when a decode starts and whenever texts join it, as the texts
  // then decoding together: each observation brings at least one of the 5 texts, and each text
  // is counted at least once (exactly once unless a text joined a running decode, as the
  // second streamed text may when the first has started: under ASan, say).
  const double batches = delta("mtserve_batch_size_sentences_count");
  EXPECT_GE(batches, 2);  // Two sets of options.
  EXPECT_LE(batches, 5);
  EXPECT_GE(delta("mtserve_batch_size_sentences_sum"), 5);
  EXPECT_LE(delta("mtserve_batch_size_sentences_sum"), 5 * batches);
  EXPECT_EQ(delta("mtserve_batch_size_tokens_count"), delta("mtserve_batch_size_sentences_count"));
  EXPECT_GE(delta("mtserve_batch_size_tokens_sum"), input_tokens);  // Padded.
  EXPECT_EQ(delta("mtserve_input_tokens_total", {{"model", kModel}}), input_tokens);
  EXPECT_EQ(delta("mtserve_generated_tokens_total", {{"model", kModel}}), generated_tokens);
  EXPECT_EQ(after.Sum("mtserve_queue_depth", {{"model", kModel}}), 0);
  EXPECT_TRUE(after.Has("mtserve_queue_depth", {{"model", kModel}}));
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests", {{"model", kModel}}), 0);
  EXPECT_TRUE(after.Has("mtserve_in_flight_requests", {{"model", kModel}}));
  EXPECT_GT(after.Sum("process_cpu_seconds_total"), 0);
  EXPECT_GE(after.Sum("process_cpu_seconds_total"), before.Sum("process_cpu_seconds_total"));
  EXPECT_GT(after.Sum("process_resident_memory_bytes"), 0);
  // Histogram buckets are cumulative, +Inf equals the count.
  EXPECT_EQ(after.Sum("mtserve_batch_size_sentences_bucket", {{"le", "+Inf"}}),
            after.Sum("mtserve_batch_size_sentences_count"));
}

// The gauges while a request is queued (behind the long decode) and once it ran.
TEST_F(QueueTest, GaugesShowQueuedAndInFlight) {
  StartLongDecodeAhead();
  const MetricsSnapshot before = Scrape();
  v1::TranslateResponse first;
  grpc::Status first_status;
  std::thread waiting(
      [&] { first_status = Translate(*stub_, Request({"A dog runs."}, Greedy()), &first); });
  const MetricsSnapshot queued =
      WaitForMetrics([](const MetricsSnapshot& m) { return m.Sum("mtserve_queue_depth") == 1; });
  EXPECT_EQ(queued.Sum("mtserve_queue_depth", {{"model", kModel}}), 1);
  // This request and the long decode's.
  EXPECT_EQ(queued.Sum("mtserve_in_flight_requests", {{"model", kModel}}), 2);
  EXPECT_EQ(queued.Sum("mtserve_queue_wait_seconds_count"),
            before.Sum("mtserve_queue_wait_seconds_count"));
  CancelLongDecode();
  waiting.join();
  ASSERT_TRUE(first_status.ok()) << Describe(first_status);
  const MetricsSnapshot after = WaitForMetrics(
      [](const MetricsSnapshot& m) { return m.Sum("mtserve_in_flight_requests") == 0; });
  EXPECT_EQ(after.Sum("mtserve_queue_depth"), 0);
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 0);
  EXPECT_EQ(after.Since(before, "mtserve_queue_wait_seconds_count"), 1);
}

// A sentence translated before with the same model and options is answered from the cache, the
// same as it was translated; sampling without a seed never is.
TEST_F(ServerTest, RepeatedSentencesComeFromTheCache) {
  const std::string text = "A purple cow sings on the moon. A dog runs.";
  const MetricsSnapshot start = Scrape();
  v1::TranslateResponse first, second;
  ASSERT_TRUE(Translate(*stub_, Request({text}, WithScores(Beam(2, 2))), &first).ok());
  const MetricsSnapshot middle = Scrape();
  EXPECT_EQ(middle.Since(start, "mtserve_cache_misses_total", {}), 2);
  EXPECT_EQ(middle.Since(start, "mtserve_cache_hits_total", {}), 0);
  EXPECT_GE(middle.Sum("mtserve_cache_entries"), 2);
  EXPECT_GT(middle.Sum("mtserve_cache_bytes"), 0);
  // The second sentence alone, then the text again: all hits, the same translation.
  v1::TranslateResponse alone;
  ASSERT_TRUE(Translate(*stub_, Request({"A dog runs."}, WithScores(Beam(2, 2))), &alone).ok());
  ASSERT_TRUE(Translate(*stub_, Request({text}, WithScores(Beam(2, 2))), &second).ok());
  const MetricsSnapshot end = Scrape();
  EXPECT_EQ(end.Since(middle, "mtserve_cache_hits_total", {}), 3);
  EXPECT_EQ(end.Since(middle, "mtserve_cache_misses_total", {}), 0);
  ExpectSameTranslation(second.translations(0), first.translations(0), "cached");
  // Other options are other entries; sampling without a seed is not even looked up.
  ASSERT_TRUE(Translate(*stub_, Request({"A dog runs."}, Greedy()), &alone).ok());
  ASSERT_TRUE(Translate(*stub_, Request({"A dog runs."}, Sampling(20, 1.0f, 0)), &alone).ok());
  v1::DecodingOptions unseeded = Greedy();
  unseeded.set_sampling_topk(20);
  ASSERT_TRUE(Translate(*stub_, Request({"A dog runs."}, unseeded), &alone).ok());
  ASSERT_TRUE(Translate(*stub_, Request({"A dog runs."}, unseeded), &alone).ok());
  const MetricsSnapshot last = Scrape();
  EXPECT_EQ(last.Since(end, "mtserve_cache_hits_total", {}), 0);
  EXPECT_EQ(last.Since(end, "mtserve_cache_misses_total", {}), 2);
}

// =============================================================================================
// 6. Deadlines and cancellation.

TEST_F(QueueTest, DeadlineWhileQueued) {
  // The texts wait behind the long decode: the deadline passes in the queue. Each request has
  // options of its own so that no two of them can fill a batch together (the server may see a
  // deadline a little later than the client does).
  StartLongDecodeAhead();
  const MetricsSnapshot before = Scrape();
  int options_key = 0;
  for (auto timeout : {1ms, 300ms}) {
    v1::DecodingOptions options = Greedy();
    options.set_max_length(100 + options_key++);
    v1::TranslateResponse response;
    const grpc::Status status =
        Translate(*stub_, Request({"A dog runs."}, options), &response,
                  std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << Describe(status);
  }
  // The server answers the expired texts and keeps nothing queued. The client's deadline passes
  // on its own clock, so the server may take the 300 ms call up only after the client gave up:
  // wait for it to be recorded, not only for the queue to be empty.
  // (In flight: the long decode's request.)
  const MetricsSnapshot after = WaitForMetrics([&](const MetricsSnapshot& m) {
    return m.Sum("mtserve_queue_depth") == 0 && m.Sum("mtserve_in_flight_requests") == 1 &&
           m.Since(before, "mtserve_requests_total",
                   RequestLabels("Translate", "DEADLINE_EXCEEDED")) >= 1;
  });
  EXPECT_EQ(after.Sum("mtserve_queue_depth"), 0);
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 1);
  // The 300 ms one reached the server for sure; it is recorded as a deadline, not a success.
  EXPECT_GE(after.Since(before, "mtserve_requests_total",
                        RequestLabels("Translate", "DEADLINE_EXCEEDED")),
            1)
      << after.text();
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", {{"code", "OK"}}), 0) << after.text();
  // A deadline is not a cancellation, even though gRPC also cancels the call when it passes.
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", {{"code", "CANCELLED"}}), 0)
      << after.text();
  EXPECT_EQ(after.Sum("mtserve_queue_wait_seconds_count"),
            before.Sum("mtserve_queue_wait_seconds_count"));  // Never computed.

  // Served normally afterwards.
  CancelLongDecode();
  v1::TranslateResponse response;
  const grpc::Status ok =
      Translate(*stub_, Request({"A dog runs.", "A cat."}, Greedy()), &response);
  EXPECT_TRUE(ok.ok()) << Describe(ok);
}

// A document's deadline covers all its sentences: when it passes, the sentences not yet
// translated are dropped from the queue, not computed, and the server is free at once.
TEST_F(ServerTest, ADocumentsDeadlineCoversAllItsSentences) {
  std::string document;
  for (int i = 0; i < 600; ++i) absl::StrAppend(&document, TestLines()[i], " ");
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub_, Request({document}, Beam(4, 1)), &response, 500ms);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << Describe(status);
  const MetricsSnapshot after = WaitForMetrics([](const MetricsSnapshot& m) {
    return m.Sum("mtserve_in_flight_requests") == 0 && m.Sum("mtserve_queue_depth") == 0;
  });
  EXPECT_EQ(after.Sum("mtserve_queue_depth"), 0) << after.text();
  // Far fewer of its 600 different sentences were translated (each became a cache entry) than
  // the document holds: about 0.5 s of the two workers' time, not the 3 s all would take.
  EXPECT_LT(after.Sum("mtserve_cache_entries"), 300) << after.text();
  status = Translate(*stub_, Request({TestLines()[0]}, Greedy()), &response);
  EXPECT_TRUE(status.ok()) << Describe(status);
}

TEST_F(ServerTest, DeadlineDuringTranslation) {
  const MetricsSnapshot before = Scrape();
  // A tiny deadline on a busy server.
  v1::TranslateResponse busy_response;
  grpc::Status busy_status;
  std::thread busy([&] {
    busy_status =
        Translate(*stub_, Request({TestLines()[2], TestLines()[3]}, Long()), &busy_response, 300ms);
  });
  v1::TranslateResponse response;
  grpc::Status status = Translate(*stub_, Request({TestLines()[4]}, Long()), &response, 1ms);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << Describe(status);
  busy.join();
  EXPECT_EQ(busy_status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << Describe(busy_status);

  // The server stopped them and recorded them as deadlines.
  const MetricsSnapshot after = WaitForMetrics([](const MetricsSnapshot& m) {
    return m.Sum("mtserve_in_flight_requests") == 0 && m.Sum("mtserve_queue_depth") == 0;
  });
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 0);
  EXPECT_GE(after.Since(before, "mtserve_requests_total",
                        RequestLabels("Translate", "DEADLINE_EXCEEDED")),
            1)
      << after.text();
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", {{"code", "OK"}}), 0) << after.text();
  // A deadline is not a cancellation, even though gRPC also cancels the call when it passes.
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", {{"code", "CANCELLED"}}), 0)
      << after.text();

  // Served normally afterwards.
  status = Translate(*stub_, Request({TestLines()[0]}, Greedy()), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  EXPECT_EQ(response.translations(0).hypotheses(0).text(), Golden()[0].greedy_text);
}

TEST_F(ServerTest, CancelledRequestStops) {
  const MetricsSnapshot before = Scrape();
  // Long enough (8 texts x beam 16 x 512 tokens) to be running when cancelled.
  std::vector<std::string> texts(TestLines().begin() + 5, TestLines().begin() + 13);
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::minutes(5));
  v1::TranslateResponse response;
  grpc::Status status;
  std::thread call([&] { status = stub_->Translate(&context, Request(texts, Long()), &response); });
  // Running: its texts have left the queue for a batch.
  const MetricsSnapshot running = WaitForMetrics([&](const MetricsSnapshot& m) {
    return m.Since(before, "mtserve_queue_wait_seconds_count") >= 8;
  });
  ASSERT_GE(running.Since(before, "mtserve_queue_wait_seconds_count"), 8);
  EXPECT_EQ(running.Sum("mtserve_in_flight_requests"), 1);
  context.TryCancel();
  call.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << Describe(status);

  // The server stops the batch and records the request as cancelled.
  const MetricsSnapshot after = WaitForMetrics([&](const MetricsSnapshot& m) {
    return m.Since(before, "mtserve_requests_total", RequestLabels("Translate", "CANCELLED")) >= 1;
  });
  EXPECT_EQ(after.Since(before, "mtserve_requests_total", RequestLabels("Translate", "CANCELLED")),
            1)
      << after.text();
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 0);
  // Nothing was generated for it.
  EXPECT_EQ(after.Sum("mtserve_generated_tokens_total"),
            before.Sum("mtserve_generated_tokens_total"));

  // A following request is served normally, and the server is alive.
  v1::TranslateResponse next;
  const grpc::Status ok = Translate(*stub_, Request({TestLines()[0]}, Greedy()), &next);
  ASSERT_TRUE(ok.ok()) << Describe(ok);
  EXPECT_EQ(next.translations(0).hypotheses(0).text(), Golden()[0].greedy_text);
  EXPECT_FALSE(server_->process().exited());
}

TEST_F(ServerTest, CancelledStreamStops) {
  const MetricsSnapshot before = Scrape();
  grpc::ClientContext context;
  auto stream = stub_->TranslateStream(&context);
  for (int i = 0; i < 4; ++i) {
    v1::TranslateStreamRequest request;
    request.set_id(absl::StrCat(i));
    request.set_text(TestLines()[30 + i]);
    *request.mutable_options() = Long();
    ASSERT_TRUE(stream->Write(request));
  }
  // All four received (in flight), and at least one being translated (the others may wait for
  // a worker: each streamed text is queued on its own).
  const MetricsSnapshot running = WaitForMetrics([&](const MetricsSnapshot& m) {
    return m.Sum("mtserve_in_flight_requests") == 4 &&
           m.Since(before, "mtserve_queue_wait_seconds_count") >= 1;
  });
  ASSERT_EQ(running.Sum("mtserve_in_flight_requests"), 4);
  context.TryCancel();
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << Describe(status);
  const MetricsSnapshot after = WaitForMetrics(
      [](const MetricsSnapshot& m) { return m.Sum("mtserve_in_flight_requests") == 0; });
  EXPECT_EQ(after.Sum("mtserve_in_flight_requests"), 0);
  // Every text stopped, whether running or queued, and is counted as cancelled.
  EXPECT_EQ(after.Since(before, "mtserve_requests_total",
                        {{"method", "TranslateStream"}, {"code", "OK"}}),
            0);
  EXPECT_EQ(after.Since(before, "mtserve_requests_total",
                        {{"method", "TranslateStream"}, {"code", "CANCELLED"}}),
            4)
      << after.text();
  v1::TranslateResponse next;
  const grpc::Status ok = Translate(*stub_, Request({TestLines()[0]}, Greedy()), &next);
  ASSERT_TRUE(ok.ok()) << Describe(ok);
  EXPECT_FALSE(server_->process().exited());
}

// =============================================================================================
// 7. TranslateStream and ListModels.

TEST_F(ServerTest, StreamAnswersEqualUnary) {
  struct Item {
    std::string text;
    v1::DecodingOptions options;
  };
  std::vector<Item> items;
  for (int i = 0; i < 10; ++i) {
    items.push_back({TestLines()[40 + i], i % 3 == 0   ? WithScores(Beam(4, 2))
                                          : i % 3 == 1 ? WithScores(Sampling(20, 0.7f, 5 + i))
                                                       : WithScores(Greedy())});
  }
  items.insert(items.begin() + 4, Item{"", WithScores(Beam(2, 2))});
  items.insert(items.begin() + 7, Item{"A dog \xff\xfe runs.", Greedy()});  // Not UTF-8.

  grpc::ClientContext context;
  SetTimeout(context, 120s);
  auto stream = stub_->TranslateStream(&context);
  for (size_t i = 0; i < items.size(); ++i) {
    v1::TranslateStreamRequest request;
    request.set_id(absl::StrCat("id-", i));
    request.set_text(items[i].text);
    *request.mutable_options() = items[i].options;
    ASSERT_TRUE(stream->Write(request));
  }
  ASSERT_TRUE(stream->WritesDone());
  std::map<std::string, v1::TranslateStreamResponse> answers;
  for (v1::TranslateStreamResponse answer; stream->Read(&answer);) {
    EXPECT_TRUE(answers.emplace(answer.id(), answer).second) << "answered twice: " << answer.id();
  }
  const grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(answers.size(), items.size());

  for (size_t i = 0; i < items.size(); ++i) {
    const std::string id = absl::StrCat("id-", i);
    SCOPED_TRACE(id);
    ASSERT_EQ(answers.count(id), 1u);
    const v1::TranslateStreamResponse& a = answers[id];
    if (i == 7) {  // The text that is not UTF-8.
      ASSERT_TRUE(a.has_error());
      EXPECT_FALSE(a.has_translation());
      EXPECT_EQ(a.error().code(), 3);
      EXPECT_THAT(a.error().message(), HasSubstr("text is not valid UTF-8"));
      continue;
    }
    EXPECT_FALSE(a.has_error()) << a.error().message();
    ASSERT_TRUE(a.has_translation());
    EXPECT_EQ(a.model(), kModel);
    if (i == 4) {  // The empty text: as the unary call answers it beside another text.
      EXPECT_EQ(a.translation().source_tokens(), 0u);
      ASSERT_EQ(a.translation().hypotheses_size(), 2);
      v1::TranslateResponse unary;
      const grpc::Status u = Translate(*stub_, Request({"", "A dog."}, items[i].options), &unary);
      ASSERT_TRUE(u.ok()) << Describe(u);
      ExpectSameTranslation(a.translation(), unary.translations(0), "stream vs unary");
      continue;
    }
    v1::TranslateResponse unary;
    const grpc::Status u = Translate(*stub_, Request({items[i].text}, items[i].options), &unary);
    ASSERT_TRUE(u.ok()) << Describe(u);
    ExpectSameTranslation(a.translation(), unary.translations(0), "stream vs unary");
  }
  // The unary call refuses the text that is not UTF-8 with the same code.
  const grpc::Status refused = TranslateError(*stub_, Request({items[7].text}, Greedy()));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerTest, ListModels) {
  grpc::ClientContext context;
  SetTimeout(context, 60s);
  v1::ListModelsResponse response;
  const grpc::Status status = stub_->ListModels(&context, v1::ListModelsRequest(), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.models_size(), 1);
  const v1::ModelInfo& m = response.models(0);
  EXPECT_EQ(m.name(), kModel);
  EXPECT_TRUE(m.is_default());
  EXPECT_EQ(m.source_language(), "en");
  EXPECT_EQ(m.target_language(), "de");
  EXPECT_EQ(m.vocab_size(), static_cast<uint32_t>(kVocabSize));
  // The embedded model's config.json.
  EXPECT_EQ(m.encoder_layers(), 3u);
  EXPECT_EQ(m.decoder_layers(), 3u);
  EXPECT_EQ(m.d_model(), 256u);
  EXPECT_EQ(m.attention_heads(), 4u);
  EXPECT_EQ(m.ffn_dim(), 1024u);
  EXPECT_EQ(m.compute_type(), "float32");
  EXPECT_THAT(m.architecture(), HasSubstr("vocab 7708"));
  EXPECT_EQ(m.max_input_tokens(), 512u);
  EXPECT_EQ(m.max_output_tokens(), 512u);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(m.path()) / "config.json")) << m.path();
  // The server's limits: the flags' documented defaults where the fixture sets none.
  EXPECT_EQ(response.limits().max_beam_size(), 16u);
  EXPECT_EQ(response.limits().max_file_bytes(), uint64_t{10} << 20);  // --max_file_bytes, 10 MiB.
  if (ServerBinary() == MTSERVE_BINARY) {  // This build's server: this checkout's model.
    EXPECT_EQ(std::filesystem::weakly_canonical(m.path()),
              std::filesystem::weakly_canonical(MTSERVE_DEFAULT_MODEL_DIR));
  }
}

// --model is repeatable; the first is the default, a model without NAME= is named after its
// directory, and each model has its own metrics.
TEST(ModelsTest, SeveralModelsByName) {
  const std::string dir = MTSERVE_DEFAULT_MODEL_DIR;
  ServerProcess server(ServerBinary(), {"--workers=1", "--model=first=" + dir, "--model",
                                        "second=" + dir, "--model=" + dir});
  StderrOnFailure dump(&server.process());
  ASSERT_TRUE(server.WaitUntilServing());
  auto stub = v1::Translator::NewStub(NewChannel(server.address()));

  grpc::ClientContext context;
  SetTimeout(context, 60s);
  v1::ListModelsResponse models;
  const grpc::Status listed = stub->ListModels(&context, v1::ListModelsRequest(), &models);
  ASSERT_TRUE(listed.ok()) << Describe(listed);
  ASSERT_EQ(models.models_size(), 3);
  EXPECT_EQ(models.models(0).name(), "first");
  EXPECT_TRUE(models.models(0).is_default());
  EXPECT_EQ(models.models(1).name(), "second");
  EXPECT_FALSE(models.models(1).is_default());
  EXPECT_EQ(models.models(2).name(), std::filesystem::path(dir).filename().string());

  // The same checkpoint under each name gives the same translation; no name means "first".
  std::vector<std::string> texts;
  for (const auto& [name, expected_model] :
       std::vector<std::pair<std::string, std::string>>{{"", "first"}, {"second", "second"}}) {
    v1::TranslateResponse response;
    const grpc::Status status =
        Translate(*stub, Request({TestLines()[0]}, Greedy(), name), &response);
    ASSERT_TRUE(status.ok()) << Describe(status);
    EXPECT_EQ(response.model(), expected_model);
    texts.push_back(response.translations(0).hypotheses(0).text());
  }
  EXPECT_EQ(texts[0], Golden()[0].greedy_text);
  EXPECT_EQ(texts[1], Golden()[0].greedy_text);

  const MetricsSnapshot metrics = testing::ScrapeMetrics(server.metrics_port());
  for (const std::string name : {"first", "second"}) {
    EXPECT_EQ(metrics.Sum("mtserve_model_info", {{"model", name}}), 1) << name;
    EXPECT_EQ(metrics.Sum("mtserve_requests_total", {{"model", name}, {"code", "OK"}}), 1) << name;
  }
}

TEST_F(LimitsTest, ListModelsShowsTheLimits) {
  TranslationClient client(server_->address());
  absl::StatusOr<v1::ListModelsResponse> response = client.ListModels();
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->models_size(), 1);
  EXPECT_EQ(response->models(0).max_input_tokens(), 16u);
  EXPECT_EQ(response->models(0).max_output_tokens(), 40u);
}

// =============================================================================================
// Compute types: --compute_type, per-model @TYPE, MTSERVE_COMPUTE_TYPE.

// Sets an environment variable for the servers started in its scope (children inherit it).
class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_.c_str()); }

 private:
  std::string name_;
};

v1::ListModelsResponse ListModels(v1::Translator::Stub& stub) {
  grpc::ClientContext context;
  SetTimeout(context, 60s);
  v1::ListModelsResponse response;
  const grpc::Status status = stub.ListModels(&context, v1::ListModelsRequest(), &response);
  EXPECT_TRUE(status.ok()) << Describe(status);
  return response;
}

// ListModels and mtserve_model_info report the type the model computes in, and it is not
// float32's arithmetic: the scores differ from float32's (int8's rounding of weights and
// activations), while the text equals mttranslate's in int8.
TEST_F(Int8ServerTest, ReportsAndComputesInt8) {
  const v1::ListModelsResponse models = ListModels(*stub_);
  ASSERT_EQ(models.models_size(), 1);
  EXPECT_EQ(models.models(0).compute_type(), "int8");
  const MetricsSnapshot metrics = Scrape();
  EXPECT_EQ(metrics.Sum("mtserve_model_info", {{"model", kModel}, {"compute_type", "int8"}}), 1);
  EXPECT_EQ(metrics.Sum("mtserve_model_info", {{"model", kModel}, {"compute_type", "float32"}}), 0);
  EXPECT_THAT(server_->process().StderrText(), HasSubstr("; int8) loaded from"));

  const std::vector<std::string> lines(TestLines().begin(), TestLines().begin() + 8);
  const auto float32 = RunMttranslate(lines, {"--compute_type=float32"}, 1);
  const auto int8 = RunMttranslate(lines, {"--compute_type=int8"}, 1);
  v1::TranslateResponse response;
  const grpc::Status status = Translate(*stub_, Request(lines, WithScores(Greedy())), &response);
  ASSERT_TRUE(status.ok()) << Describe(status);
  ASSERT_EQ(response.translations_size(), static_cast<int>(lines.size()));
  int differ_from_float32 = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const v1::Hypothesis& h = response.translations(i).hypotheses(0);
    EXPECT_EQ(h.text(), int8[i][0].text) << lines[i];
    EXPECT_NEAR(h.score(), int8[i][0].score, 1e-4) << lines[i];
    if (std::abs(h.score() - float32[i][0].score) > 1e-3) ++differ_from_float32;
  }
  EXPECT_GT(differ_from_float32, 0) << "int8 scores equal float32's: the model computes in float32";
}

// @TYPE sets one model's type over --compute_type's; each model reports its own, in ListModels
// and in the metrics, and translates as mttranslate does in that type.
TEST(ModelsTest, ComputeTypePerModel) {
  const std::string dir = MTSERVE_DEFAULT_MODEL_DIR;
  ServerProcess server(ServerBinary(),
                       {"--workers=1", "--compute_type=int8", "--model=exact=" + dir + "@float32",
                        "--model=fast=" + dir});
  StderrOnFailure dump(&server.process());
  ASSERT_TRUE(server.WaitUntilServing());
  auto stub = v1::Translator::NewStub(NewChannel(server.address()));

  const v1::ListModelsResponse models = ListModels(*stub);
  ASSERT_EQ(models.models_size(), 2);
  EXPECT_EQ(models.models(0).name(), "exact");
  EXPECT_EQ(models.models(0).compute_type(), "float32");
  EXPECT_EQ(models.models(1).name(), "fast");
  EXPECT_EQ(models.models(1).compute_type(), "int8");
  const MetricsSnapshot metrics = testing::ScrapeMetrics(server.metrics_port());
  EXPECT_EQ(metrics.Sum("mtserve_model_info", {{"model", "exact"}, {"compute_type", "float32"}}),
            1);
  EXPECT_EQ(metrics.Sum("mtserve_model_info", {{"model", "fast"}, {"compute_type", "int8"}}), 1);

  // The same sentence through both: each model's own result (not the other's from the cache).
  const std::vector<std::string> lines = {TestLines()[3], TestLines()[4]};
  for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"exact", "float32"}, {"fast", "int8"}, {"exact", "float32"}}) {
    SCOPED_TRACE(name);
    const auto expected = RunMttranslate(lines, {"--compute_type=" + type}, 1);
    v1::TranslateResponse response;
    const grpc::Status status =
        Translate(*stub, Request(lines, WithScores(Greedy()), name), &response);
    ASSERT_TRUE(status.ok()) << Describe(status);
    ASSERT_EQ(response.translations_size(), 2);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(response.translations(i).hypotheses(0).text(), expected[i][0].text);
      EXPECT_NEAR(response.translations(i).hypotheses(0).score(), expected[i][0].score, 1e-4);
    }
  }
}

// MTSERVE_COMPUTE_TYPE works as every MTSERVE_<FLAG> does, and "auto" is reported as the type it
// chose for this CPU, never as "auto".
TEST(ModelsTest, ComputeTypeFromTheEnvironment) {
  for (const char* value : {"int8", "auto"}) {
    SCOPED_TRACE(value);
    const ScopedEnv env("MTSERVE_COMPUTE_TYPE", value);
    ServerProcess server(ServerBinary(), {"--workers=1"});
    StderrOnFailure dump(&server.process());
    ASSERT_TRUE(server.WaitUntilServing());
    auto stub = v1::Translator::NewStub(NewChannel(server.address()));
    const v1::ListModelsResponse models = ListModels(*stub);
    ASSERT_EQ(models.models_size(), 1);
    if (std::string(value) == "auto") {
      EXPECT_THAT(models.models(0).compute_type(), ::testing::AnyOf("int8", "float32"));
    } else {
      EXPECT_EQ(models.models(0).compute_type(), value);
    }
  }
}

// Start-up refuses, before loading anything: an unknown type (from the flag, the environment or
// @TYPE), and a type this CPU cannot run, naming the model. ONEDNN_MAX_CPU_ISA=AVX2 hides
// AVX-512 from oneDNN, so bfloat16 is unsupported on any CPU.
TEST(LifecycleTest, RefusesComputeTypesItCannotUse) {
  const std::string dir = MTSERVE_DEFAULT_MODEL_DIR;
  const std::string unknown = "compute type \"fp16\" is not one of float32, bfloat16, int8, auto";
  struct Case {
    std::vector<std::string> flags;
    std::vector<std::string> env;  // Empty, or a name and a value.
    std::vector<std::string> messages;
  };
  const std::vector<Case> cases = {
      // absl's own message for a flag's bad value, with ours.
      {{"--compute_type=fp16"}, {}, {"'compute_type'", unknown}},
      {{}, {"MTSERVE_COMPUTE_TYPE", "fp16"}, {"MTSERVE_COMPUTE_TYPE=fp16: ", unknown}},
      {{"--model=en-de=" + dir + "@fp16"}, {}, {"--model=en-de=" + dir + "@fp16: " + unknown}},
      {{"--model=en-de=" + dir + "@bfloat16"},
       {"ONEDNN_MAX_CPU_ISA", "AVX2"},
       {"model en-de: compute type bfloat16 needs AVX-512"}},
      {{"--compute_type=bfloat16", "--model=a=" + dir + "@int8", "--model=b=" + dir},
       {"ONEDNN_MAX_CPU_ISA", "AVX2"},
       {"model b: compute type bfloat16 needs AVX-512"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrJoin(c.flags, " ") + " " + absl::StrJoin(c.env, "="));
    std::optional<ScopedEnv> env;
    if (!c.env.empty()) env.emplace(c.env[0], c.env[1]);
    std::vector<std::string> flags = {"--listen=127.0.0.1:0",
                                      "--metrics_listen=", "--http_listen="};
    flags.insert(flags.end(), c.flags.begin(), c.flags.end());
    ChildProcess server(ServerBinary(), flags);
    const std::optional<int> exit_status = server.WaitForExit(60s);
    ASSERT_TRUE(exit_status.has_value());
    EXPECT_TRUE(WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 1) << *exit_status;
    for (const std::string& message : c.messages) {
      EXPECT_THAT(server.StderrText(), HasSubstr(message));
    }
    EXPECT_THAT(server.StderrText(), ::testing::Not(HasSubstr("listening on")));
  }
}

// --max_message_bytes takes units like the other size flags, from the command line and from the
// environment (16MiB stopped start-up: the flag took a plain number only). A 5 MiB message, over
// the default 4 MiB, then arrives and is refused for its text's size, not for the message's.
TEST(LifecycleTest, MaxMessageBytesTakesUnits) {
  const std::string text(5 << 20, 'a');
  for (const bool from_environment : {false, true}) {
    SCOPED_TRACE(from_environment ? "MTSERVE_MAX_MESSAGE_BYTES=16MiB"
                                  : "--max_message_bytes=16MiB");
    std::optional<ScopedEnv> env;
    std::vector<std::string> flags = {"--workers=1"};
    if (from_environment) {
      env.emplace("MTSERVE_MAX_MESSAGE_BYTES", "16MiB");
    } else {
      flags.push_back("--max_message_bytes=16MiB");
    }
    ServerProcess server(ServerBinary(), flags);
    StderrOnFailure dump(&server.process());
    ASSERT_TRUE(server.WaitUntilServing());
    auto stub = v1::Translator::NewStub(NewChannel(server.address()));
    const grpc::Status status = TranslateError(*stub, Request({text}, Greedy()));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
    EXPECT_THAT(status.error_message(), HasSubstr("--max_text_bytes"));
  }
  // gRPC takes the limit as an int: beyond it, start-up stops naming the flag and the bound.
  EXPECT_THAT(RefusedStartUp({"--max_message_bytes=2GiB"}),
              HasSubstr("--max_message_bytes is 2147483648; it must be 1 to 2147483647"));
}

// The metrics port answers a scrape while connections that send nothing are open, and closes
// them itself (at their deadline, --http_timeout): once it had one thread and a 30 s request
// timeout, so one idle socket (the Kubernetes manifests listen on every address) held every
// scrape back. The sockets' 30 s timeouts only catch that hang.
TEST(LifecycleTest, IdleConnectionsDoNotBlockScrapes) {
  ServerProcess server(ServerBinary(), {"--workers=1"});
  StderrOnFailure dump(&server.process());
  std::vector<int> idle;
  auto open_idle = [&](int count) {
    for (int i = 0; i < count; ++i) {
      idle.push_back(testing::ConnectLoopback(server.metrics_port()));
      ASSERT_GE(idle.back(), 0);
    }
  };
  // A few idle connections: the scrape is answered beside them.
  open_idle(3);
  EXPECT_TRUE(testing::HttpGet(server.metrics_port()).has_value())
      << "a scrape waited behind 3 idle connections";
  // More: connections hold no thread, so the scrape is still answered beside them.
  open_idle(12);
  EXPECT_TRUE(testing::HttpGet(server.metrics_port()).has_value())
      << "a scrape waited behind 15 idle connections";
  for (const int fd : idle) {
    EXPECT_TRUE(testing::ClosedByPeer(fd)) << "an idle connection stayed open";
    close(fd);
  }
}

}  // namespace
}  // namespace mtserve
