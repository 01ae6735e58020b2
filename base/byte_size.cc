#include "base/byte_size.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mtserve {
namespace {

struct Unit {
  const char* suffix;
  int shift;
};
// Largest first, for formatting.
constexpr Unit kUnits[] = {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};

}  // namespace

bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error) {
  text = absl::StripAsciiWhitespace(text);
  int shift = 0;
  for (const Unit& unit : kUnits) {
    if (absl::EndsWith(text, unit.suffix)) {
      text.remove_suffix(3);
      shift = unit.shift;
      break;
    }
  }
  int64_t count;
  if (!absl::SimpleAtoi(text, &count) || count < 0) {
    *error = "expected a size such as 512MiB, 1GiB or a number of bytes";
    return false;
  }
  if (count > (std::numeric_limits<int64_t>::max() >> shift)) {
    *error = "size too large";
    return false;
  }
  size->bytes = count << shift;
  return true;
}

std::string AbslUnparseFlag(ByteSize size) {
  for (const Unit& unit : kUnits) {
    const int64_t one = int64_t{1} << unit.shift;
    if (size.bytes != 0 && size.bytes % one == 0)
      return absl::StrCat(size.bytes / one, unit.suffix);
  }
  return absl::StrCat(size.bytes);
}

std::string FormatBytes(int64_t bytes) {
  for (const Unit& unit : kUnits) {
    const int64_t one = int64_t{1} << unit.shift;
    if (bytes >= one) {
      const double value = static_cast<double>(bytes) / static_cast<double>(one);
      return value < 10 ? absl::StrFormat("%.1f %s", value, unit.suffix)
                        : absl::StrFormat("%.0f %s", value, unit.suffix);
    }
  }
  return absl::StrCat(bytes, " bytes");
}

}  // namespace mtserve
