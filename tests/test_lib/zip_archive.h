// Zip archives made in a test (libzip, in memory), as office programs write their packages: for
// tests of what reads office documents (text/file_format.h's detection, the file jobs). A test
// that includes this links libzip (PkgConfig::LIBZIP, text/CMakeLists.txt).
#ifndef MTSERVE_TESTS_TEST_LIB_ZIP_ARCHIVE_H_
#define MTSERVE_TESTS_TEST_LIB_ZIP_ARCHIVE_H_

#include <gtest/gtest.h>
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

namespace mtserve::testing {

// A zip archive of `entries` (name, bytes) in order: each entry deflated, but a first entry named
// "mimetype" stored (as ODF and EPUB require).
inline std::string ZipArchive(const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr) << zip_error_strerror(&error);
  if (archive == nullptr) return "";
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, bytes] = entries[i];
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(index, 0) << name;
    const bool stored = i == 0 && name == "mimetype";
    zip_set_file_compression(archive, index, stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
  }
  EXPECT_EQ(zip_close(archive), 0);
  std::string bytes;
  EXPECT_EQ(zip_source_open(buffer), 0);
  char chunk[4096];
  for (zip_int64_t n; (n = zip_source_read(buffer, chunk, sizeof(chunk))) > 0;) {
    bytes.append(chunk, static_cast<size_t>(n));
  }
  zip_source_close(buffer);
  zip_source_free(buffer);
  zip_error_fini(&error);
  return bytes;
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_ZIP_ARCHIVE_H_
