// The --model flag (server/model_specs.h): repeatable, NAME=DIR or DIR, checked.
#include "server/model_specs.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Values(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return RepeatedFlagValues(static_cast<int>(argv.size()), argv.data(), "model");
}

TEST(ModelSpecsTest, EveryOccurrenceInOrder) {
  EXPECT_THAT(Values({"mtserve", "--model=a=/x", "--listen=:1", "--model", "b=/y", "-model=/z",
                      "--model=c=/u,d=/v"}),
              ElementsAre("a=/x", "b=/y", "/z", "c=/u", "d=/v"));
  EXPECT_THAT(Values({"mtserve", "--models=a=/x", "--", "--model=b=/y"}), ElementsAre());
}

TEST(ModelSpecsTest, NamesAndDirectories) {
  auto specs = ParseModelSpecs({"en-de=/m/opus", "/models/opus-mt-en-fr/", "rel/dir"}, "/default");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "en-de");
  EXPECT_EQ((*specs)[0].dir, "/m/opus");
  EXPECT_EQ((*specs)[1].name, "opus-mt-en-fr");
  EXPECT_EQ((*specs)[2].name, "dir");
}

TEST(ModelSpecsTest, NoneMeansTheDefaultModel) {
  auto specs = ParseModelSpecs({}, "/opt/models/multi30k-en-de");
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 1u);
  EXPECT_EQ((*specs)[0].name, "multi30k-en-de");
  EXPECT_EQ((*specs)[0].dir, "/opt/models/multi30k-en-de");
}

TEST(ModelSpecsTest, Errors) {
  EXPECT_EQ(ParseModelSpecs({"=/x"}, "/d").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseModelSpecs({"a="}, "/d").status().code(), absl::StatusCode::kInvalidArgument);
  const auto twice = ParseModelSpecs({"a=/x", "a=/y"}, "/d");
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.status().message()), testing::HasSubstr("\"a\" is given twice"));
}

// "none" labels the metrics of requests that named no served model: a model of that name would
// be counted with them (and its in-flight gauge confused with theirs).
TEST(ModelSpecsTest, NoneIsReserved) {
  for (const std::vector<std::string>& values :
       std::vector<std::vector<std::string>>{{"none=/x"}, {"/models/none"}, {"a=/x", "none=/y"}}) {
    const auto specs = ParseModelSpecs(values, "/d");
    EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(specs.status().message()),
                ::testing::HasSubstr("the name \"none\" is reserved"));
  }
}

}  // namespace
}  // namespace mtserve
