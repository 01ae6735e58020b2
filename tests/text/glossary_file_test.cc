// DeepL's glossary entry formats (text/glossary_file.h): TSV and CSV, quoting, merged sources,
// limits, and errors that name the line.
#include "text/glossary_file.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

MATCHER_P2(Entry, source, targets, "") {
  return arg.source == source && arg.targets == std::vector<std::string>(targets);
}

GlossaryFileOptions Options(GlossaryFileFormat format) {
  GlossaryFileOptions options;
  options.format = format;
  return options;
}

absl::StatusOr<std::vector<GlossaryEntry>> Tsv(absl::string_view bytes) {
  return ParseGlossaryFile(bytes, Options(GlossaryFileFormat::kTsv), "g.tsv");
}

absl::StatusOr<std::vector<GlossaryEntry>> Csv(
    absl::string_view bytes, GlossaryFileOptions options = Options(GlossaryFileFormat::kCsv)) {
  return ParseGlossaryFile(bytes, options, "g.csv");
}

using Targets = std::vector<std::string>;

TEST(GlossaryFileTest, TsvLinesWithLfCrlfBomAndBlankLines) {
  const auto entries =
      Tsv("\xEF\xBB\xBF"
          "car\tWagen\r\n\r\n  \nbig house \t Schloss\nEnd\tEnde");
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(*entries,
              ElementsAre(Entry("car", Targets{"Wagen"}), Entry("big house", Targets{"Schloss"}),
                          Entry("End", Targets{"Ende"})));
}

TEST(GlossaryFileTest, RepeatedSourceGathersItsTargetsAndMergesRepeatedLines) {
  const auto entries = Tsv("car\tWagen\nhouse\tHaus\ncar\tAuto\ncar\tWagen\n");
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(*entries,
              ElementsAre(Entry("car", Targets{"Wagen", "Auto"}), Entry("house", Targets{"Haus"})));
}

TEST(GlossaryFileTest, TsvRefusesOtherFieldCountsNamingTheLine) {
  for (const absl::string_view bad : {"a\tb\nonly one\n", "a\tb\nx\ty\tz\n"}) {
    const auto entries = Tsv(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(entries.status())) << bad;
    EXPECT_THAT(entries.status().message(), HasSubstr("g.tsv, line 2:")) << bad;
    EXPECT_THAT(entries.status().message(), HasSubstr("source<TAB>target")) << bad;
  }
}

TEST(GlossaryFileTest, CsvQuotingCommasQuotesAndLanguageColumns) {
  GlossaryFileOptions options = Options(GlossaryFileFormat::kCsv);
  options.source_language = "en";
  options.target_language = "de";
  const auto entries =
      Csv("\"Smith, John\",\"Smith, John\"\r\n"
          "\"say \"\"hi\"\"\",\"sag \"\"hallo\"\"\",EN,de\n"
          "plain , schlicht\n"
          "\n"
          "\"\",",
          options);
  // The last record's source is empty: refused on its line, after three good ones.
  EXPECT_TRUE(absl::IsInvalidArgument(entries.status()));
  EXPECT_THAT(entries.status().message(), HasSubstr("g.csv, line 5: the source is empty"));
  const auto good =
      Csv("\"Smith, John\",\"Smith, John\"\r\n"
          "\"say \"\"hi\"\"\",\"sag \"\"hallo\"\"\",EN,de\n"
          "plain , schlicht\n",
          options);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_THAT(*good, ElementsAre(Entry("Smith, John", Targets{"Smith, John"}),
                                 Entry("say \"hi\"", Targets{"sag \"hallo\""}),
                                 Entry("plain", Targets{"schlicht"})));
}

TEST(GlossaryFileTest, CsvLanguageColumnsMustBeTheGlossarys) {
  GlossaryFileOptions options = Options(GlossaryFileFormat::kCsv);
  options.source_language = "en";
  options.target_language = "de";
  const auto entries = Csv("a,b,en,de\nc,d,en,fr\n", options);
  EXPECT_TRUE(absl::IsInvalidArgument(entries.status()));
  EXPECT_THAT(entries.status().message(),
              HasSubstr("line 2: the target language is \"fr\", not the glossary's de"));
  // Without languages to hold them to, any are taken.
  EXPECT_TRUE(Csv("a,b,en,de\nc,d,en,fr\n").ok());
}

TEST(GlossaryFileTest, CsvErrorsNameTheLine) {
  struct Case {
    absl::string_view csv;
    absl::string_view needle;
  };
  for (const Case& c : std::vector<Case>{
           {"a,b\n\"open,b\n\n", "line 2: a quoted field is not closed by the end of the file"},
           {"a,b\n\"x\"y,b\n",
            "line 2: a quoted field is followed by something other than a comma"},
           {"a,b\nx\"y,b\n", "line 2: a quote inside an unquoted field"},
           {"a,b\na,b,c\n",
            "line 2: 3 fields; a CSV line is source,target or "
            "source,target,source_lang,target_lang"},
           {"a,b\na,b,c,d,e,f\n", "line 2: more than 4 fields"},
           // A quoted line break is a control character in the term; the record starts on line 2.
           {"a,b\n\"x\ny\",b\n", "line 2: the source holds a control character (U+000A)"},
           {"a,b\r\n\r\n  \r\nc,\n", "line 4: the target is empty"},
       }) {
    const auto entries = Csv(c.csv);
    EXPECT_TRUE(absl::IsInvalidArgument(entries.status())) << c.csv;
    EXPECT_THAT(entries.status().message(), HasSubstr(c.needle)) << c.csv;
  }
}

TEST(GlossaryFileTest, TermsMustBeUtf8WithoutControlCharacters) {
  const auto latin1 = Tsv("ok\tgut\ncaf\xE9\tCaf\xE9\n");
  EXPECT_THAT(latin1.status().message(), HasSubstr("line 2: the source is not valid UTF-8"));
  const auto bell = Tsv("a\tb\x07\n");
  EXPECT_THAT(bell.status().message(), HasSubstr("line 1: the target holds a control character "
                                                 "(U+0007)"));
  const auto c1 = Tsv("a\xC2\x85z\tb\n");  // U+0085, NEXT LINE.
  EXPECT_THAT(c1.status().message(), HasSubstr("(U+0085)"));
  const auto separator = Tsv("a\tb\xE2\x80\xA8z\n");  // U+2028, LINE SEPARATOR.
  EXPECT_THAT(separator.status().message(), HasSubstr("(U+2028)"));
  // A byte order mark is the file's only at its start: inside a line (after spaces, found by
  // fuzzing) it would be written back at a line's start and read as the file's.
  const auto bom =
      Tsv("  \xEF\xBB\xBF"
          "0c\tit\n");
  EXPECT_THAT(bom.status().message(), HasSubstr("(U+FEFF)"));
  ASSERT_TRUE(Tsv("\xEF\xBB\xBF"
                  "0c\tit\n")
                  .ok());
  // Not control characters: other letters of the same lead bytes.
  const auto fine = Tsv("\xC2\xA9 x\t\xE2\x80\x94\n");  // (c) x -> em dash.
  ASSERT_TRUE(fine.ok()) << fine.status();
}

TEST(GlossaryFileTest, LimitsOfEntriesTargetsTermsAndBytesNameTheLimit) {
  GlossaryFileOptions options = Options(GlossaryFileFormat::kTsv);
  options.limits.max_entries = 2;
  options.limits.max_targets = 2;
  options.limits.max_term_bytes = 5;
  const auto entries = ParseGlossaryFile("a\tb\nc\td\ne\tf\n", options, "g.tsv");
  EXPECT_THAT(entries.status().message(),
              HasSubstr("g.tsv, line 3: more than 2 entries, the limit of a glossary"));
  const auto targets = ParseGlossaryFile("a\tb\na\tc\na\td\n", options, "g.tsv");
  EXPECT_THAT(targets.status().message(),
              HasSubstr("line 3: more than 2 targets for the source \"a\", the limit of an entry"));
  const auto term = ParseGlossaryFile("a\tb\nabcdef\tx\n", options, "g.tsv");
  EXPECT_THAT(term.status().message(),
              HasSubstr("line 2: the source is 6 bytes, over the limit of 5 bytes a term"));
  // A term at the limit is taken; spaces around it do not count.
  EXPECT_TRUE(ParseGlossaryFile("  abcde \tx\n", options, "g.tsv").ok());
  options.limits.max_bytes = 10;
  const auto bytes = ParseGlossaryFile("abc\tdef\ng\th\n", options, "g.tsv");
  EXPECT_TRUE(absl::IsInvalidArgument(bytes.status()));
  EXPECT_THAT(bytes.status().message(), HasSubstr("g.tsv is 12 bytes, over the limit of 10 bytes"));
}

TEST(GlossaryFileTest, DefaultByteLimitHoldsAFullGlossaryOfLongestTerms) {
  TerminologyLimits terms;
  terms.max_term_bytes = 4;
  terms.max_targets = 1;
  const GlossaryFileLimits limits = GlossaryFileLimitsFor(3, terms);
  // Three CSV lines of two 4-byte terms, each all quotes (8 bytes doubled, 10 quoted), with
  // 35-byte language columns and CRLF: 10 + 1 + 10 + 1 + 35 + 1 + 35 + 2 = 95 bytes a line.
  EXPECT_EQ(limits.max_bytes, 3 * 95);
  EXPECT_EQ(limits.max_entries, 3);
  EXPECT_EQ(limits.max_term_bytes, 4);
}

TEST(GlossaryFileTest, WrittenTsvReadsBackAsTheSameEntries) {
  const std::vector<GlossaryEntry> entries = {{"car", {"Wagen", "Auto"}}, {"a, \"b\"", {"c"}}};
  EXPECT_EQ(WriteGlossaryTsv(entries), "car\tWagen\ncar\tAuto\na, \"b\"\tc\n");
  const auto read = Tsv(WriteGlossaryTsv(entries));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(*read,
              ElementsAre(Entry("car", Targets{"Wagen", "Auto"}), Entry("a, \"b\"", Targets{"c"})));
}

TEST(GlossaryFileTest, EmptyFileHasNoEntries) {
  const auto tsv = Tsv("");
  ASSERT_TRUE(tsv.ok());
  EXPECT_TRUE(tsv->empty());
  const auto csv = Csv("\xEF\xBB\xBF\r\n");
  ASSERT_TRUE(csv.ok());
  EXPECT_TRUE(csv->empty());
}

}  // namespace
}  // namespace mtserve
