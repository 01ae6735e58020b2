// An office document's package (text/office/office_package.h): real documents made by
// python3-docx and python3-odf (tools/make_office_fixtures.py) opened, read and written back with
// untouched entries compared with libzip's own view of their raw bytes; hostile archives, written
// byte by byte (tests/test_lib/zip_bytes.h) or by libzip, each refused naming the entry and the
// limit or the fault.
#include "text/office/office_package.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zip.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/test_lib/zip_bytes.h"

namespace mtserve {
namespace {

using testing::DeflatedEntry;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::RawZip;
using testing::RawZipEntry;
using ::testing::StartsWith;
using testing::StoredEntry;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(MTSERVE_TEST_DATA_DIR) + "/office/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_FALSE(bytes.str().empty()) << name;
  return bytes.str();
}

// What libzip itself sees of each entry of `bytes`: name, method, CRC, sizes, raw data, mtime,
// extra fields (local and central).
struct RawView {
  std::string name;
  int method;
  uint32_t crc;
  uint64_t size, comp_size;
  time_t mtime;
  std::string raw;
  std::string extra_local, extra_central;
  bool operator==(const RawView&) const = default;
};

std::string Extra(zip_t* zip, zip_uint64_t i, zip_flags_t where) {
  std::string out;
  const zip_int16_t count = zip_file_extra_fields_count(zip, i, where);
  for (zip_int16_t f = 0; f < count; ++f) {
    zip_uint16_t id = 0, length = 0;
    const zip_uint8_t* data = zip_file_extra_field_get(zip, i, f, &id, &length, where);
    absl::StrAppend(&out, id, ":", std::string(reinterpret_cast<const char*>(data), length), ";");
  }
  return out;
}

std::vector<RawView> LibzipView(const std::string& bytes) {
  std::vector<RawView> views;
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  EXPECT_NE(zip, nullptr) << zip_error_strerror(&error);
  if (zip == nullptr) return views;
  for (zip_int64_t i = 0; i < zip_get_num_entries(zip, 0); ++i) {
    zip_stat_t stat;
    zip_stat_index(zip, i, 0, &stat);
    RawView view{stat.name,
                 stat.comp_method,
                 stat.crc,
                 stat.size,
                 stat.comp_size,
                 stat.mtime,
                 std::string(stat.comp_size, '\0'),
                 "",
                 ""};
    zip_file_t* file = zip_fopen_index(zip, i, ZIP_FL_COMPRESSED);
    EXPECT_EQ(zip_fread(file, view.raw.data(), view.raw.size()),
              static_cast<zip_int64_t>(view.raw.size()));
    zip_fclose(file);
    view.extra_local = Extra(zip, i, ZIP_FL_LOCAL);
    view.extra_central = Extra(zip, i, ZIP_FL_CENTRAL);
    views.push_back(std::move(view));
  }
  zip_discard(zip);
  return views;
}

// An archive libzip writes, for what it can make that the format's readers should refuse.
struct LibzipEntry {
  std::string name, content;
  zip_int32_t method = ZIP_CM_DEFLATE;
  zip_uint16_t encryption = ZIP_EM_NONE;
};

std::string LibzipArchive(const std::vector<LibzipEntry>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* out = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* zip = zip_open_from_source(out, ZIP_TRUNCATE, &error);
  zip_source_keep(out);
  for (const LibzipEntry& entry : entries) {
    zip_source_t* data = zip_source_buffer(zip, entry.content.data(), entry.content.size(), 0);
    const zip_int64_t i = zip_file_add(zip, entry.name.c_str(), data, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(i, 0) << zip_strerror(zip);
    EXPECT_EQ(zip_set_file_compression(zip, i, entry.method, 0), 0) << zip_strerror(zip);
    if (entry.encryption != ZIP_EM_NONE) {
      EXPECT_EQ(zip_file_set_encryption(zip, i, entry.encryption, "secret"), 0)
          << zip_strerror(zip);
    }
  }
  EXPECT_EQ(zip_close(zip), 0) << zip_strerror(zip);
  zip_stat_t stat;
  zip_source_stat(out, &stat);
  std::string bytes(stat.size, '\0');
  zip_source_open(out);
  EXPECT_EQ(zip_source_read(out, bytes.data(), bytes.size()),
            static_cast<zip_int64_t>(bytes.size()));
  zip_source_close(out);
  zip_source_free(out);
  return bytes;
}

absl::Status OpenStatus(const std::string& bytes, const PackageLimits& limits = {}) {
  return OfficePackage::Open(bytes, limits).status();
}

// --- Real documents ---

TEST(OfficePackageTest, OpensADocxAndReadsItsEntries) {
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(Fixture("simple.docx"));
  ASSERT_TRUE(package.ok()) << package.status();
  // The names and sizes Python's zipfile lists for the file.
  EXPECT_THAT(
      package->names(),
      ElementsAre("[Content_Types].xml", "_rels/.rels", "docProps/core.xml", "docProps/app.xml",
                  "word/document.xml", "word/_rels/document.xml.rels", "word/styles.xml",
                  "word/stylesWithEffects.xml", "word/settings.xml", "word/webSettings.xml",
                  "word/fontTable.xml", "word/theme/theme1.xml", "customXml/item1.xml",
                  "customXml/_rels/item1.xml.rels", "customXml/itemProps1.xml",
                  "word/numbering.xml", "word/header1.xml", "docProps/thumbnail.jpeg"));
  EXPECT_TRUE(package->Has("word/document.xml"));
  EXPECT_FALSE(package->Has("word/document.xm"));
  absl::StatusOr<std::string> document = package->Read("word/document.xml");
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_EQ(document->size(), 2822u);
  EXPECT_THAT(*document, HasSubstr("The weather was "));
  EXPECT_THAT(*document, StartsWith("<?xml"));
  absl::StatusOr<std::string> styles = package->Read("word/styles.xml");
  ASSERT_TRUE(styles.ok()) << styles.status();
  EXPECT_EQ(styles->size(), 349458u);

  const absl::Status missing = package->Read("word/missing.xml").status();
  EXPECT_TRUE(absl::IsInvalidArgument(missing));
  EXPECT_THAT(std::string(missing.message()), HasSubstr("\"word/missing.xml\""));
}

TEST(OfficePackageTest, OpensAnOdtWithItsStoredMimetype) {
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(Fixture("simple.odt"));
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_THAT(package->names(), ElementsAre("mimetype", "styles.xml", "content.xml", "meta.xml",
                                            "META-INF/manifest.xml"));
  absl::StatusOr<std::string> mimetype = package->Read("mimetype");
  ASSERT_TRUE(mimetype.ok()) << mimetype.status();
  EXPECT_EQ(*mimetype, "application/vnd.oasis.opendocument.text");
}

TEST(OfficePackageTest, IsMovable) {
  absl::StatusOr<OfficePackage> opened = OfficePackage::Open(Fixture("simple.odt"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  OfficePackage moved = std::move(*opened);
  std::vector<OfficePackage> packages;
  packages.push_back(std::move(moved));
  packages.emplace_back(*OfficePackage::Open(Fixture("simple.docx")));
  ASSERT_TRUE(packages[0].Read("mimetype").ok());
  ASSERT_TRUE(packages[1].Read("word/document.xml").ok());
}

// --- Write ---

TEST(OfficePackageTest, WriteWithoutReplacementsIsTheArchive) {
  const std::string bytes = Fixture("simple.docx");
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_EQ(package->Write({}), bytes);
}

TEST(OfficePackageTest, WriteReplacesEntriesAndCopiesTheOthers) {
  const std::string bytes = Fixture("simple.docx");
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  const std::string document = "<?xml version=\"1.0\"?><w:document>translated</w:document>";
  const std::string header = std::string(5000, 'h');
  const std::string written =
      package->Write({{"word/document.xml", document}, {"word/header1.xml", header}});

  absl::StatusOr<OfficePackage> reopened = OfficePackage::Open(written);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(reopened->names(), package->names());
  EXPECT_EQ(*reopened->Read("word/document.xml"), document);
  EXPECT_EQ(*reopened->Read("word/header1.xml"), header);

  // As the bytes hold them (no zip library): every untouched entry's record, times, extra
  // fields and compressed data unchanged, in the same order.
  const std::vector<testing::ZipRecord> records = testing::ReadZipRecords(bytes),
                                        written_records = testing::ReadZipRecords(written);
  ASSERT_EQ(records.size(), written_records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(records[i].name);
    EXPECT_EQ(written_records[i].name, records[i].name);
    EXPECT_EQ(written_records[i].time, records[i].time);
    EXPECT_EQ(written_records[i].date, records[i].date);
    if (records[i].name != "word/document.xml" && records[i].name != "word/header1.xml") {
      EXPECT_EQ(written_records[i], records[i]);
    }
  }

  const std::vector<RawView> before = LibzipView(bytes), after = LibzipView(written);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    SCOPED_TRACE(before[i].name);
    if (before[i].name == "word/document.xml" || before[i].name == "word/header1.xml") {
      EXPECT_EQ(after[i].name, before[i].name);
      EXPECT_EQ(after[i].method, ZIP_CM_DEFLATE);
      EXPECT_EQ(after[i].mtime, before[i].mtime);
      EXPECT_LT(after[i].comp_size, after[i].size);  // Deflated, not stored.
    } else {
      EXPECT_EQ(after[i], before[i]);
    }
  }
}

TEST(OfficePackageTest, WriteLeavesOutRemovedEntriesAndCopiesTheOthers) {
  const std::string bytes = Fixture("simple.docx");
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  const std::string document = "<w:document>translated</w:document>";
  const std::string written =
      package->Write({{"word/document.xml", document}}, {"docProps/core.xml"});
  absl::StatusOr<OfficePackage> reopened = OfficePackage::Open(written);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  std::vector<std::string> expected = package->names();
  expected.erase(std::find(expected.begin(), expected.end(), "docProps/core.xml"));
  EXPECT_EQ(reopened->names(), expected);
  EXPECT_FALSE(reopened->Has("docProps/core.xml"));
  EXPECT_EQ(*reopened->Read("word/document.xml"), document);
  // The others as the bytes hold them, in order.
  std::vector<testing::ZipRecord> records = testing::ReadZipRecords(bytes);
  const std::vector<testing::ZipRecord> written_records = testing::ReadZipRecords(written);
  records.erase(std::find_if(records.begin(), records.end(), [](const testing::ZipRecord& r) {
    return r.name == "docProps/core.xml";
  }));
  ASSERT_EQ(written_records.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].name != "word/document.xml") {
      EXPECT_EQ(written_records[i], records[i]);
    }
  }
  // Removals alone write the archive too.
  absl::StatusOr<OfficePackage> only =
      OfficePackage::Open(package->Write({}, {"docProps/app.xml"}));
  ASSERT_TRUE(only.ok()) << only.status();
  EXPECT_EQ(only->names().size(), package->names().size() - 1);
  EXPECT_FALSE(only->Has("docProps/app.xml"));
}

TEST(OfficePackageTest, WriteKeepsAStoredEntryStoredAndFirst) {
  const std::string bytes = Fixture("simple.odt");
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  const std::string written =
      package->Write({{"mimetype", "application/vnd.oasis.opendocument.presentation"},
                      {"content.xml", "<office:document-content>x</office:document-content>"}});
  const std::vector<RawView> before = LibzipView(bytes), after = LibzipView(written);
  ASSERT_EQ(after.size(), 5u);
  EXPECT_EQ(after[0].name, "mimetype");
  EXPECT_EQ(after[0].method, ZIP_CM_STORE);
  EXPECT_EQ(after[0].raw, "application/vnd.oasis.opendocument.presentation");
  EXPECT_EQ(after[0].extra_local, "");  // ODF: no extra field before the mimetype's bytes.
  // As the bytes hold it: stored, no data descriptor, its text right after its local header.
  const testing::ZipRecord mimetype = testing::ReadZipRecords(written)[0];
  EXPECT_EQ(mimetype.method, 0);
  EXPECT_EQ(mimetype.flags & 8, 0);
  EXPECT_EQ(mimetype.local_extra, "");
  EXPECT_EQ(mimetype.data, "application/vnd.oasis.opendocument.presentation");
  EXPECT_EQ(written.substr(30, 8), "mimetype");
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(after[2].name, "content.xml");
  EXPECT_EQ(after[3], before[3]);
  EXPECT_EQ(after[4], before[4]);
}

TEST(OfficePackageTest, WriteKeepsUntouchedEntriesExtraFields) {
  // An extended timestamp (0x5455) in both headers of the untouched entry.
  RawZipEntry kept = DeflatedEntry("kept.xml", "<kept/>");
  kept.extra = std::string("\x55\x54\x05\x00\x01\x00\x00\x00\x60", 9);
  const std::string bytes =
      RawZip({StoredEntry("mimetype", "x/y"), kept, DeflatedEntry("content.xml", "<old/>")});
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  const std::string written = package->Write({{"content.xml", "<new/>"}});
  const std::vector<RawView> before = LibzipView(bytes), after = LibzipView(written);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_THAT(before[1].extra_local, HasSubstr("21589:"));
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(*OfficePackage::Open(written)->Read("content.xml"), "<new/>");
  const std::vector<testing::ZipRecord> records = testing::ReadZipRecords(bytes),
                                        written_records = testing::ReadZipRecords(written);
  ASSERT_EQ(written_records.size(), 3u);
  EXPECT_EQ(written_records[0], records[0]);
  EXPECT_EQ(written_records[1], records[1]);
  EXPECT_EQ(written_records[1].local_extra, kept.extra);
  EXPECT_EQ(written_records[1].central_extra, kept.extra);
}

TEST(OfficePackageTest, ReadsAndWritesEntriesWithDataDescriptors) {
  // Python's zipfile writing to a stream that cannot seek: sizes after each entry's data.
  const std::string bytes = Fixture("streamed.zip");
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_THAT(package->names(), ElementsAre("mimetype", "content.xml"));
  EXPECT_EQ(*package->Read("mimetype"), "application/epub+zip");
  EXPECT_EQ(*package->Read("content.xml"),
            "<?xml version=\"1.0\"?><a><b>text</b> <b>more text</b></a>");
  const std::string written = package->Write({{"content.xml", "<a>new</a>"}});
  const std::vector<RawView> before = LibzipView(bytes), after = LibzipView(written);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0], before[0]);
  absl::StatusOr<OfficePackage> reopened = OfficePackage::Open(written);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(*reopened->Read("mimetype"), "application/epub+zip");
  EXPECT_EQ(*reopened->Read("content.xml"), "<a>new</a>");
}

// --- Hostile archives ---

TEST(OfficePackageTest, RefusesAZipBombFromItsDeclaredSize) {
  uint32_t crc = 0;
  RawZipEntry bomb;
  bomb.name = "word/document.xml";
  bomb.data = testing::RawDeflateZeros(200u << 20, &crc);
  bomb.method = 8;
  bomb.crc = crc;
  bomb.size = 200u << 20;
  const absl::Status status = OpenStatus(RawZip({bomb}));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "entry \"word/document.xml\": inflates to more than 67108864 bytes (the limit on one "
            "entry)");
}

TEST(OfficePackageTest, RefusesAZipBombFromItsRatio) {
  uint32_t crc = 0;
  RawZipEntry bomb;
  bomb.name = "content.xml";
  bomb.data = testing::RawDeflateZeros(10u << 20, &crc);  // About 1000 to 1.
  bomb.method = 8;
  bomb.crc = crc;
  bomb.size = 10u << 20;
  const absl::Status status = OpenStatus(RawZip({bomb}));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()),
              StartsWith("entry \"content.xml\": compressed 10485760 bytes"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("a ratio over 200 (the limit on compression ratio)"));
  // Under a ratio allowed, it opens and reads.
  PackageLimits loose;
  loose.max_ratio = 100000;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({bomb}), loose);
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_EQ(*package->Read("content.xml"), std::string(10u << 20, '\0'));
}

TEST(OfficePackageTest, RefusesAllEntriesTogetherOverTheTotal) {
  PackageLimits limits;
  limits.max_total_bytes = 1000;
  const std::string half(600, 'a');
  const absl::Status status =
      OpenStatus(RawZip({StoredEntry("a.xml", half), StoredEntry("b.xml", half)}), limits);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "entry \"b.xml\": the entries up to it inflate to more than 1000 bytes (the limit on "
            "all entries together)");
}

TEST(OfficePackageTest, ReadRefusesAnEntryThatInflatesBeyondItsDeclaredSize) {
  // The central directory and local header say 1000 bytes; the data inflates to 2 MiB.
  RawZipEntry liar = DeflatedEntry("word/document.xml", std::string(2u << 20, 'a'));
  liar.size = 1000;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({liar}));
  ASSERT_TRUE(package.ok()) << package.status();
  const absl::Status status = package->Read("word/document.xml").status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "entry \"word/document.xml\": inflates to more than its declared 1000 bytes");
}

TEST(OfficePackageTest, ReadRefusesAStoredEntryLongerThanDeclared) {
  RawZipEntry liar = StoredEntry("mimetype", "application/vnd.oasis.opendocument.text");
  liar.size = 5;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({liar}));
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_EQ(package->Read("mimetype").status().message(),
            "entry \"mimetype\": inflates to more than its declared 5 bytes");
}

TEST(OfficePackageTest, RefusesOrCatchesACentralDirectoryThatLiesAboutSize) {
  // Only the central directory lies (the local header says 2 MiB): ZIP_CHECKCONS refuses the
  // disagreement, or Read catches the lie; never are 2 MiB returned as 1000 bytes.
  RawZipEntry liar = DeflatedEntry("word/document.xml", std::string(2u << 20, 'a'));
  liar.central_size = 1000;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({liar}));
  if (!package.ok()) {
    EXPECT_TRUE(absl::IsInvalidArgument(package.status()));
    EXPECT_THAT(std::string(package.status().message()), StartsWith("corrupt zip archive: "));
    return;
  }
  EXPECT_EQ(package->Read("word/document.xml").status().message(),
            "entry \"word/document.xml\": inflates to more than its declared 1000 bytes");
}

TEST(OfficePackageTest, ReadRefusesABadCrc) {
  RawZipEntry bad = DeflatedEntry("content.xml", "<office:document-content/>");
  bad.crc ^= 1;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({bad}));
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_EQ(package->Read("content.xml").status().message(),
            "entry \"content.xml\": fails its CRC check");
}

TEST(OfficePackageTest, ReadRefusesCorruptDeflateData) {
  RawZipEntry bad = DeflatedEntry("content.xml", std::string(3000, 'x'));
  bad.data = std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({bad}));
  ASSERT_TRUE(package.ok()) << package.status();
  const absl::Status status = package->Read("content.xml").status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()), StartsWith("entry \"content.xml\": "));
}

TEST(OfficePackageTest, ReadRefusesAnEntryShorterThanDeclared) {
  RawZipEntry short_entry = DeflatedEntry("content.xml", "abc");
  short_entry.size = 10;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(RawZip({short_entry}));
  ASSERT_TRUE(package.ok()) << package.status();
  const absl::Status status = package->Read("content.xml").status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()), StartsWith("entry \"content.xml\": "));
}

TEST(OfficePackageTest, RefusesMoreEntriesThanTheLimit) {
  std::vector<RawZipEntry> entries;
  for (int i = 0; i < 10001; ++i) entries.push_back(StoredEntry(absl::StrCat("e", i), ""));
  const absl::Status status = OpenStatus(RawZip(entries));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "more than 10000 entries (the limit on entries)");
  entries.pop_back();
  EXPECT_TRUE(OpenStatus(RawZip(entries)).ok());
}

TEST(OfficePackageTest, RefusesNamesThatEscapeOrAreAmbiguous) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"../evil.xml", "entry \"../evil.xml\": a \"..\" segment in its name"},
      {"word/../../evil.xml", "entry \"word/../../evil.xml\": a \"..\" segment in its name"},
      {"word/..", "entry \"word/..\": a \"..\" segment in its name"},
      {"/etc/passwd", "entry \"/etc/passwd\": an absolute name"},
      {"C:/evil.xml", "entry \"C:/evil.xml\": an absolute name (a drive letter)"},
      {"word\\document.xml", "entry \"word\\document.xml\": a backslash in its name"},
  };
  for (const auto& [name, message] : cases) {
    const absl::Status status =
        OpenStatus(RawZip({StoredEntry("mimetype", "x"), StoredEntry(name, "<a/>")}));
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_EQ(status.message(), message);
  }
  // Dots that are not a ".." segment are fine.
  EXPECT_TRUE(OpenStatus(RawZip({StoredEntry("a..b/..c/d..", "x")})).ok());
}

TEST(OfficePackageTest, RefusesAnEmptyName) {
  const absl::Status status = OpenStatus(RawZip({StoredEntry("a", "x"), StoredEntry("", "y")}));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "entry 1: an empty name");
}

TEST(OfficePackageTest, RefusesANulInAName) {
  const absl::Status status =
      OpenStatus(RawZip({StoredEntry(std::string("word/a\0.xml", 11), "x")}));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "entry \"word/a\\x00.xml\": a NUL in its name");
}

TEST(OfficePackageTest, RefusesDuplicateNames) {
  const absl::Status status =
      OpenStatus(RawZip({StoredEntry("word/document.xml", "a"), StoredEntry("x", "b"),
                         StoredEntry("word/document.xml", "c")}));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "entry \"word/document.xml\": two entries of that name");
}

TEST(OfficePackageTest, RefusesAnEncryptedEntry) {
  const std::string bytes = LibzipArchive(
      {{"mimetype", "x"}, {"content.xml", "<a/>", ZIP_CM_DEFLATE, ZIP_EM_TRAD_PKWARE}});
  const absl::Status status = OpenStatus(bytes);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "entry \"content.xml\": encrypted");
  // The flag bit alone (set by hand), without libzip's help.
  RawZipEntry flagged = StoredEntry("content.xml", "<a/>");
  flagged.flags = 1;
  EXPECT_EQ(OpenStatus(RawZip({flagged})).message(), "entry \"content.xml\": encrypted");
}

TEST(OfficePackageTest, RefusesCompressionOtherThanStoredAndDeflated) {
  if (zip_compression_method_supported(ZIP_CM_BZIP2, 1)) {
    const std::string bytes =
        LibzipArchive({{"mimetype", "x", ZIP_CM_STORE}, {"content.xml", "<a/>", ZIP_CM_BZIP2}});
    EXPECT_EQ(OpenStatus(bytes).message(),
              "entry \"content.xml\": compression method 12 is not accepted (only stored and "
              "deflated)");
  }
  RawZipEntry lzma = StoredEntry("content.xml", "<a/>");
  lzma.method = 14;
  EXPECT_EQ(OpenStatus(RawZip({lzma})).message(),
            "entry \"content.xml\": compression method 14 is not accepted (only stored and "
            "deflated)");
}

TEST(OfficePackageTest, RefusesWhatIsNotAZipArchive) {
  EXPECT_EQ(OpenStatus("").message(), "not a zip archive (no bytes)");
  EXPECT_EQ(OpenStatus("just some text, not an archive").message(), "not a zip archive");
  std::string random(4096, '\0');
  uint32_t x = 12345;
  for (char& c : random) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  const absl::Status status = OpenStatus(random);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "not a zip archive");
}

TEST(OfficePackageTest, RefusesATruncatedArchive) {
  const std::string bytes = Fixture("simple.docx");
  for (size_t cut : {bytes.size() / 2, bytes.size() - 30, bytes.size() - 1}) {
    const absl::Status status = OpenStatus(bytes.substr(0, cut));
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << cut;
    EXPECT_THAT(
        std::string(status.message()),
        ::testing::AnyOf(StartsWith("not a zip archive"), StartsWith("corrupt zip archive: ")))
        << cut;
  }
}

TEST(OfficePackageTest, RefusesADirectoryPointingPastItsData) {
  // The entry's offset in the central directory moved past the end of the data.
  std::string bytes = RawZip({StoredEntry("a.xml", "<a/>")});
  const size_t central = bytes.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  bytes[central + 42] = '\x40';
  const absl::Status status = OpenStatus(bytes);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()), ::testing::AnyOf(StartsWith("not a zip archive"),
                                                              StartsWith("corrupt zip archive: ")));
}

TEST(OfficePackageTest, ReadsAnArchiveAfterJunk) {
  // Bytes before the first entry (as a self-extracting archive has): read as the directory says.
  const std::string bytes =
      RawZip({DeflatedEntry("content.xml", "<a>text</a>")}, std::string(1000, 'j'));
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  ASSERT_TRUE(package.ok()) << package.status();
  EXPECT_EQ(*package->Read("content.xml"), "<a>text</a>");
  const std::string written = package->Write({{"content.xml", "<b/>"}});
  absl::StatusOr<OfficePackage> reopened = OfficePackage::Open(written);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(*reopened->Read("content.xml"), "<b/>");
}

}  // namespace
}  // namespace mtserve
