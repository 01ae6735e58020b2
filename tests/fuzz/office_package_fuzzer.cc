// An office document's package through OfficePackage and its XML parts through ParseXmlPart, as
// the office formats read them, on the server's request threads' stack (the input itself is also
// read as an XML part): any bytes open within
// small limits or are refused INVALID_ARGUMENT; every entry reads within its limit or is refused
// the same way; every .xml entry that parses writes back to XML that parses again; and the
// archive written with one entry replaced reopens with the same names in the same order, the
// replaced entry holding its new bytes and every other entry reading as it did.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/office/office_package.h"
#include "text/office/xml_part.h"

namespace {

using mtserve::OfficePackage;
using mtserve::PackageLimits;

// An XML part parses or is refused INVALID_ARGUMENT; what is written reads back as the same
// tree: written again, the same bytes.
void CheckXml(const std::string& name, const std::string& bytes) {
  auto document = mtserve::ParseXmlPart(name, bytes);
  if (!document.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(document.status()));
    return;
  }
  const std::string written = mtserve::WriteXmlPart(**document);
  auto again = mtserve::ParseXmlPart(name, written);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(mtserve::WriteXmlPart(**again) == written);
}

void Check(const std::string& bytes) {
  // The input as an XML part too: mutations inside a package's deflated, CRC-checked entries
  // rarely reach the XML parser.
  CheckXml("input.xml", bytes);
  PackageLimits limits;
  limits.max_entries = 64;
  limits.max_total_bytes = 4 << 20;
  limits.max_entry_bytes = 2 << 20;
  limits.max_ratio = 50;
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes, limits);
  if (!package.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(package.status()));
    return;
  }
  const std::vector<std::string>& names = package->names();
  FUZZ_CHECK(static_cast<int64_t>(names.size()) <= limits.max_entries);
  absl::flat_hash_set<std::string> unique(names.begin(), names.end());
  FUZZ_CHECK(unique.size() == names.size());
  absl::flat_hash_map<std::string, std::string> contents;
  for (const std::string& name : names) {
    FUZZ_CHECK(package->Has(name));
    FUZZ_CHECK(!name.empty() && name.find('\\') == std::string::npos && name[0] != '/');
    absl::StatusOr<std::string> content = package->Read(name);
    if (!content.ok()) {
      FUZZ_CHECK(absl::IsInvalidArgument(content.status()));
      continue;
    }
    FUZZ_CHECK(static_cast<int64_t>(content->size()) <= limits.max_entry_bytes);
    if (absl::EndsWith(name, ".xml")) CheckXml(name, *content);
    contents[name] = *std::move(content);
  }
  FUZZ_CHECK(package->Write({}) == bytes);
  if (names.empty()) return;
  const std::string& replaced = names[bytes.size() % names.size()];
  const std::string replacement = "<?xml version=\"1.0\"?><replaced>text</replaced>";
  const std::string written = package->Write({{replaced, replacement}});
  // The replacement is small and compresses little: what the limits took before, they take now.
  absl::StatusOr<OfficePackage> reopened = OfficePackage::Open(written, limits);
  FUZZ_CHECK(reopened.ok());
  FUZZ_CHECK(reopened->names() == names);
  absl::StatusOr<std::string> read = reopened->Read(replaced);
  FUZZ_CHECK(read.ok() && *read == replacement);
  for (const auto& [name, content] : contents) {
    if (name == replaced) continue;
    absl::StatusOr<std::string> again = reopened->Read(name);
    FUZZ_CHECK(again.ok() && *again == content);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  mtserve::RunOnRequestThreadStack([&bytes] { Check(bytes); });
  return 0;
}
