// The --model flag (server/model_specs.h): NAME=DIR or DIR, each with an optional
// @TYPE, checked; --compute_type's values; and --model_dir's scan of a directory of models.
#include "server/model_specs.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/marshalling.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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
    EXPECT_EQ(spec.model_dir, "") << spec.name << ": not from a --model_dir";
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
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("\"a\" is given twice"));
}

// "none" and "several" label the metrics of requests that named no served model or went to
// several: a model of either name would be counted with them (and its in-flight gauge confused
// with theirs).
TEST(ModelSpecsTest, NoneAndSeveralAreReserved) {
  for (const std::vector<std::string>& values : std::vector<std::vector<std::string>>{
           {"none=/x"}, {"/models/none"}, {"a=/x", "none=/y"}, {"several=/x"}}) {
    const auto specs = ParseModelSpecs(values, "/d");
    EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(specs.status().message()), HasSubstr("\" is reserved"));
  }
}

// A model directory's checkpoints: subfolders with a config.json, in name order, named by the
// folder or their mtserve.json.
TEST(ModelDirectoryTest, SubfoldersWithAConfigAreModelsInNameOrder) {
  testing::TempDir dir;
  for (const char* folder : {"zh-en", "de-en", "fr-en", "notes"}) {
    std::filesystem::create_directory(dir.path() / folder);
  }
  dir.Write("zh-en/config.json", "{}");
  dir.Write("de-en/config.json", "{}");
  dir.Write("fr-en/config.json", "{}");
  dir.Write("fr-en/mtserve.json", R"({"name": "french", "compute_type": "int8"})");
  dir.Write("notes/README.md", "not a checkpoint");
  dir.Write("config.json", "{}");  // A file at the top is no subfolder.
  auto specs = ScanModelDirectory(dir.path().string());
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "de-en");
  EXPECT_EQ((*specs)[0].dir, (dir.path() / "de-en").string());
  EXPECT_EQ((*specs)[0].model_dir, dir.path().string());
  EXPECT_FALSE((*specs)[0].compute_type.has_value());
  EXPECT_EQ((*specs)[1].name, "french");
  EXPECT_EQ((*specs)[1].compute_type, ComputeType::kInt8);
  EXPECT_EQ((*specs)[2].name, "zh-en");
}

// ModelFolders: the subfolders holding a config.json, as paths, sorted byte-wise by name;
// folders starting with "." (a checkpoint being copied in), files, and folders without a
// config.json are not models.
TEST(ModelDirectoryTest, ModelFoldersSkipsDotFoldersFilesAndFoldersWithoutAConfig) {
  testing::TempDir dir;
  for (const char* folder : {"zh-en", "B-upper", "de-en", ".fr-en", ".hidden", "empty", "a.b"}) {
    std::filesystem::create_directory(dir.path() / folder);
  }
  for (const char* config : {"zh-en/config.json", "B-upper/config.json", "de-en/config.json",
                             ".fr-en/config.json", ".hidden/config.json", "a.b/config.json"}) {
    dir.Write(config, "{}");
  }
  dir.Write("empty/model.safetensors", "");  // A folder without a config.json.
  dir.Write("config.json", "{}");            // Files at the top are no folders.
  dir.Write("en-it", "a file named like a model");
  dir.Write(".en-es", "a dot-file");
  auto folders = ModelFolders(dir.path().string());
  ASSERT_TRUE(folders.ok()) << folders.status();
  const auto at = [&dir](const char* name) { return (dir.path() / name).string(); };
  // Byte order: upper case before lower case.
  EXPECT_THAT(*folders, ElementsAre(at("B-upper"), at("a.b"), at("de-en"), at("zh-en")));

  // A directory with nothing in it has no models (not an error); one that is missing cannot be
  // read, and says which.
  testing::TempDir empty;
  auto none = ModelFolders(empty.path().string());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(*none, ElementsAre());
  const std::string missing = (dir.path() / "missing").string();
  auto unreadable = ModelFolders(missing);
  EXPECT_EQ(unreadable.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unreadable.status().message()),
              HasSubstr("--model_dir=" + missing + ": cannot be read"));
  // A file given as the directory cannot be read as one either.
  EXPECT_EQ(ModelFolders(dir.File("en-it")).status().code(), absl::StatusCode::kInvalidArgument);
}

// ScanModelFolder: one folder's model, named after the folder unless its mtserve.json says
// otherwise, loaded on demand, and knowing the --model_dir it came from.
TEST(ModelDirectoryTest, ScanModelFolderNamesTheModelAndKeepsItsDirectory) {
  testing::TempDir dir;
  for (const char* folder : {"plain", "named", "typed"}) {
    std::filesystem::create_directory(dir.path() / folder);
    dir.Write(std::string(folder) + "/config.json", "{}");
  }
  dir.Write("named/mtserve.json", R"({"name": "fr-en"})");
  dir.Write("typed/mtserve.json", R"({"compute_type": "bfloat16"})");
  const std::string root = dir.path().string();

  auto plain = ScanModelFolder(root, dir.File("plain"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->name, "plain");
  EXPECT_EQ(plain->dir, dir.File("plain"));
  EXPECT_EQ(plain->model_dir, root);
  EXPECT_TRUE(plain->on_demand);
  EXPECT_FALSE(plain->compute_type.has_value()) << "--compute_type's applies";

  auto named = ScanModelFolder(root, dir.File("named"));
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->name, "fr-en");
  EXPECT_EQ(named->dir, dir.File("named"));
  EXPECT_FALSE(named->compute_type.has_value());

  auto typed = ScanModelFolder(root, dir.File("typed"));
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(typed->name, "typed");
  EXPECT_EQ(typed->compute_type, ComputeType::kBFloat16);

  // The directory as given, not as the folder's path spells it.
  auto slashed = ScanModelFolder(root + "/", dir.File("plain"));
  ASSERT_TRUE(slashed.ok()) << slashed.status();
  EXPECT_EQ(slashed->model_dir, root + "/");
}

TEST(ModelDirectoryTest, ScanModelFolderRefusesSettingsItCannotUse) {
  struct Case {
    const char* contents;  // Of mtserve.json; nullptr: a folder named mtserve.json.
    const char* message;
  };
  const Case cases[] = {
      {R"({"name": ""})", "mtserve.json: name is empty"},
      {R"({"name": "several"})", "\"several\" is reserved"},
      {R"({"name": "x", "preload": "yes"})", "\"preload\" is not a string setting here"},
      {R"({"compute_type": 8})", "\"compute_type\" is not a string setting here"},
      {R"({"compute_type": "auto8"})", "mtserve.json: compute_type: "},
      {"null", "expected an object"},
      {nullptr, "mtserve.json: not a regular file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    testing::TempDir dir;
    std::filesystem::create_directory(dir.path() / "m");
    dir.Write("m/config.json", "{}");
    if (c.contents == nullptr) {
      std::filesystem::create_directory(dir.path() / "m" / "mtserve.json");
    } else {
      dir.Write("m/mtserve.json", c.contents);
    }
    auto spec = ScanModelFolder(dir.path().string(), dir.File("m"));
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.message));
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(dir.File("m")));
  }
  // Settings longer than any real one are refused before they are parsed, naming the file.
  testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "m");
  dir.Write("m/config.json", "{}");
  dir.Write("m/mtserve.json", R"({"name": ")" + std::string(5000, 'x') + R"("})");
  auto spec = ScanModelFolder(dir.path().string(), dir.File("m"));
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr(dir.File("m/mtserve.json")));
}

// An entry that cannot be examined (here a symbolic link loop, as a folder without permission is
// for a user other than root) is an error naming it: std::filesystem's exceptions would end the
// process, at start or at a re-read while serving.
TEST(ModelDirectoryTest, AnEntryThatCannotBeExaminedIsAnErrorNamingIt) {
  const auto loop = [](const std::filesystem::path& path) {
    std::filesystem::create_symlink(path.filename(), path);
  };
  {
    testing::TempDir dir;
    std::filesystem::create_directory(dir.path() / "m");
    dir.Write("m/config.json", "{}");
    loop(dir.path() / ".hidden-loop");  // Skipped unexamined, as every dot-name.
    auto folders = ModelFolders(dir.path().string());
    ASSERT_TRUE(folders.ok()) << folders.status();
    EXPECT_THAT(*folders, ElementsAre(dir.File("m")));
    loop(dir.path() / "loop");
    folders = ModelFolders(dir.path().string());
    EXPECT_EQ(folders.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(folders.status().message()),
                HasSubstr(dir.File("loop") + ": cannot be read: "));
  }
  {
    testing::TempDir dir;
    std::filesystem::create_directory(dir.path() / "m");
    loop(dir.path() / "m" / "config.json");
    const auto folders = ModelFolders(dir.path().string());
    EXPECT_EQ(folders.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(folders.status().message()),
                HasSubstr(dir.File("m/config.json") + ": cannot be read: "));
  }
  for (const char* file : {"mtserve.json", "vocab.json"}) {
    SCOPED_TRACE(file);
    testing::TempDir dir;
    std::filesystem::create_directory(dir.path() / "m");
    dir.Write("m/config.json", "{}");
    loop(dir.path() / "m" / file);
    const auto spec = ScanModelFolder(dir.path().string(), dir.File("m"));
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()),
                HasSubstr(dir.File(std::string("m/") + file) + ": cannot be read: "));
    EXPECT_EQ(ScanModelDirectory(dir.path().string()).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(ModelDirectoryTest, RefusalsNameTheFile) {
  struct Case {
    const char* file;
    const char* contents;
    const char* message;
  };
  const Case cases[] = {
      {"mtserve.json", R"({"name": 3})", "\"name\" is not a string setting here"},
      {"mtserve.json", R"({"colour": "red"})", "\"colour\" is not a string setting here"},
      {"mtserve.json", R"({"compute_type": "float64"})", "compute_type: "},
      {"mtserve.json", R"(["x"])", "expected an object"},
      {"mtserve.json", R"({"name": "none"})", "\"none\" is reserved"},
      {"mtserve.json", "{", "mtserve.json"},
      {"vocab.json", R"({"<pad>": 0, ">>deu<<": 1, ">>fra<<": 2})", "a multi-target checkpoint"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.contents);
    testing::TempDir dir;
    std::filesystem::create_directory(dir.path() / "m");
    dir.Write("m/config.json", "{}");
    dir.Write(std::string("m/") + c.file, c.contents);
    auto specs = ScanModelDirectory(dir.path().string());
    EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(specs.status().message()), HasSubstr(c.message));
    EXPECT_THAT(std::string(specs.status().message()), HasSubstr((dir.path() / "m").string()));
  }
  // A vocabulary whose tokens merely hold ">>" is one target's.
  testing::TempDir plain;
  std::filesystem::create_directory(plain.path() / "m");
  plain.Write("m/config.json", "{}");
  plain.Write("m/vocab.json", R"({">>": 0, "a>>b<<": 1, ">><<": 2})");
  EXPECT_TRUE(ScanModelDirectory(plain.path().string()).ok());
  EXPECT_EQ(ScanModelDirectory((plain.path() / "missing").string()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The real OPUS-MT files: en-mg is one target's; en-pt-tc-big has >>por<< and >>pob<<.
TEST(ModelDirectoryTest, ARealMultiTargetCheckpointIsRefusedAndTheTrainedModelsAreFound) {
  auto opus = ScanModelDirectory(testing::TestDataDir() + "/opus-mt");
  EXPECT_EQ(opus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(opus.status().message()),
              AllOf(HasSubstr("en-pt-tc-big: a multi-target checkpoint"), Not(HasSubstr("en-mg"))));
  auto models = ScanModelDirectory(testing::ModelsDir());
  ASSERT_TRUE(models.ok()) << models.status();
  std::vector<std::string> names;
  for (const ModelSpec& spec : *models) names.push_back(spec.name);
  EXPECT_THAT(names, ElementsAre("multi30k-de-en", "multi30k-en-de", "multi30k-fr-en"));
}

TEST(ModelDirectoryTest, NamesAreUniqueAcrossModelsAndDirectories) {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "en-de");
  dir.Write("en-de/config.json", "{}");
  auto joined = JoinModelSpecs(*ParseModelSpecs({"en-de=/elsewhere"}, "/d"), {dir.path().string()});
  EXPECT_EQ(joined.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(joined.status().message()),
              HasSubstr("two models are named \"en-de\": /elsewhere and "));
  joined = JoinModelSpecs(*ParseModelSpecs({"main=/m"}, "/d"), {dir.path().string()});
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_EQ(joined->size(), 2u);
  EXPECT_EQ((*joined)[0].name, "main");  // --model first: the default model.
  EXPECT_EQ((*joined)[0].model_dir, "");
  EXPECT_EQ((*joined)[1].name, "en-de");
  EXPECT_EQ((*joined)[1].model_dir, dir.path().string());
}

}  // namespace
}  // namespace mtserve
