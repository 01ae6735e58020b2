// The --model flag (server/model_specs.h): NAME=DIR or DIR, each with an optional
// @TYPE, checked; and --compute_type's values.
#include "server/model_specs.h"

#include <string>
#include <vector>

#include "absl/flags/marshalling.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

TEST(ModelSpecsTest, NamesAndDirectories) {
  auto specs = ParseModelSpecs({"en-de=/m/opus", "/models/opus-mt-en-fr/", "rel/dir"}, "/default");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "en-de");
  EXPECT_EQ((*specs)[0].dir, "/m/opus");
  EXPECT_EQ((*specs)[1].name, "opus-mt-en-fr");
  EXPECT_EQ((*specs)[2].name, "dir");
  for (const ModelSpec& spec : *specs) {
    EXPECT_FALSE(spec.compute_type.has_value()) << spec.name << ": --compute_type's applies";
  }
}

TEST(ModelSpecsTest, ComputeTypePerModel) {
  auto specs = ParseModelSpecs({"en-de=/m/opus@int8", "/models/opus-mt-en-fr/@bfloat16",
                                "a@b=/x@float32", "plain=/y", "best=/z@auto"},
                               "/default");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 5u);
  EXPECT_EQ((*specs)[0].name, "en-de");
  EXPECT_EQ((*specs)[0].dir, "/m/opus");
  EXPECT_EQ((*specs)[0].compute_type, ComputeType::kInt8);
  // Without NAME=, the name comes from the directory, not from the type.
  EXPECT_EQ((*specs)[1].name, "opus-mt-en-fr");
  EXPECT_EQ((*specs)[1].dir, "/models/opus-mt-en-fr/");
  EXPECT_EQ((*specs)[1].compute_type, ComputeType::kBFloat16);
  // An "@" in the name is the name's.
  EXPECT_EQ((*specs)[2].name, "a@b");
  EXPECT_EQ((*specs)[2].dir, "/x");
  EXPECT_EQ((*specs)[2].compute_type, ComputeType::kFloat32);
  EXPECT_FALSE((*specs)[3].compute_type.has_value());
  // "auto" is resolved for this CPU when parsed.
  EXPECT_EQ((*specs)[4].compute_type, AutoComputeType());
}

// The last "@" starts the type: a directory with an "@" in it is written with its type.
TEST(ModelSpecsTest, DirectoryWithAnAt) {
  auto specs = ParseModelSpecs({"v=/models/opus@2024@int8"}, "/default");
  ASSERT_TRUE(specs.ok()) << specs.status();
  EXPECT_EQ((*specs)[0].dir, "/models/opus@2024");
  EXPECT_EQ((*specs)[0].compute_type, ComputeType::kInt8);
  const auto unwritten = ParseModelSpecs({"v=/models/opus@2024"}, "/default");
  EXPECT_EQ(unwritten.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelSpecsTest, BadComputeTypeNamesTheValueAndTheTypes) {
  for (const std::string value : {"en-de=/m/opus@fp16", "/m/opus@", "/m/opus@INT8"}) {
    const auto specs = ParseModelSpecs({"ok=/x", value}, "/default");
    EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument) << value;
    const std::string message(specs.status().message());
    EXPECT_THAT(message, HasSubstr("--model=" + value + ":"));
    EXPECT_THAT(message, HasSubstr("float32, bfloat16, int8, auto"));
  }
  // A type with nothing to apply it to.
  EXPECT_EQ(ParseModelSpecs({"a=@int8"}, "/d").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseModelSpecs({"@int8"}, "/d").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelSpecsTest, ComputeTypeFlag) {
  for (const std::string name : {"float32", "bfloat16", "int8", "auto"}) {
    ComputeTypeFlag flag;
    std::string error;
    ASSERT_TRUE(absl::ParseFlag(name, &flag, &error)) << name << ": " << error;
    // "auto" stays "auto" (resolved when the models load), so --help shows what was asked for.
    EXPECT_EQ(flag.name, name);
    EXPECT_EQ(absl::UnparseFlag(flag), name);
  }
  ComputeTypeFlag flag;
  std::string error;
  EXPECT_FALSE(absl::ParseFlag("fp16", &flag, &error));
  EXPECT_THAT(error, HasSubstr("float32, bfloat16, int8, auto"));
  EXPECT_EQ(flag.name, "float32");  // The default, untouched.
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
