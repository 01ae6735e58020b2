#include "text/keep_patterns.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace mtserve {
namespace {

bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }
bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }
bool IsAlpha(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); }

// The scanners see `text` cut to the range they search: positions are bytes of `s`.
struct Scan {
  absl::string_view s;
  std::vector<PatternSpan>& out;
  size_t offset;  // Of `s` in the caller's text.

  void Add(size_t begin, size_t end, KeepPattern pattern) {
    if (begin < end) out.push_back({{offset + begin, offset + end}, pattern});
  }
  // The code point at `i` and its length (an ill-formed sequence: -1 and its length).
  UChar32 At(size_t i, size_t& length) const {
    int32_t j = static_cast<int32_t>(i);
    UChar32 c;
    U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), j, static_cast<int32_t>(s.size()), c);
    length = static_cast<size_t>(j) - i;
    return c;
  }
  // Whether the code point that ends at `i` is a letter or digit (any script).
  bool WordBefore(size_t i) const {
    if (i == 0) return false;
    int32_t j = static_cast<int32_t>(i);
    UChar32 c;
    U8_PREV(reinterpret_cast<const uint8_t*>(s.data()), 0, j, c);
    return c >= 0 && (u_isalnum(c) || (u_getCombiningClass(c) != 0));
  }
  // Whether the code point at `i` is a letter or digit (any script) or a combining mark.
  bool WordAt(size_t i) const {
    if (i >= s.size()) return false;
    size_t length;
    const UChar32 c = At(i, length);
    return c >= 0 && (u_isalnum(c) || (u_getCombiningClass(c) != 0));
  }
  bool StartsWithAt(size_t i, absl::string_view prefix, bool ignore_case) const {
    const absl::string_view rest = s.substr(i, prefix.size());
    return ignore_case ? absl::EqualsIgnoreCase(rest, prefix) : rest == prefix;
  }
};

// URLs: a scheme or "www." at a word start, up to whitespace, a quote or an angle bracket, less
// trailing punctuation.
void FindUrls(Scan& scan) {
  const absl::string_view s = scan.s;
  for (size_t i = 0; i < s.size(); ++i) {
    if (scan.WordBefore(i)) continue;
    size_t host = 0;
    for (absl::string_view prefix : {"https://", "http://", "ftp://", "www."}) {
      if (scan.StartsWithAt(i, prefix, true)) {
        host = i + prefix.size();
        break;
      }
    }
    if (host == 0 || host >= s.size() || !IsAlnum(s[host])) continue;
    size_t end = host;
    while (end < s.size()) {
      size_t length;
      const UChar32 c = scan.At(end, length);
      if (c < 0 || u_isUWhiteSpace(c) || u_iscntrl(c) || c == '"' || c == '<' || c == '>' ||
          c == '`') {
        break;
      }
      end += length;
    }
    // Trailing punctuation belongs to the sentence; a closing parenthesis or bracket to the URL
    // only if it opened one.
    while (end > host) {
      const char c = s[end - 1];
      if (c == ')' || c == ']') {
        const char open = c == ')' ? '(' : '[';
        const absl::string_view url = s.substr(i, end - i);
        if (std::count(url.begin(), url.end(), open) >= std::count(url.begin(), url.end(), c)) {
          break;
        }
      } else if (!absl::StrContains(".,;:!?'*", c)) {
        break;
      }
      --end;
    }
    scan.Add(i, end, KeepPattern::kUrls);
    i = end - 1;
  }
}

bool IsLocalChar(char c) { return IsAlnum(c) || absl::StrContains("._%+-", c); }
bool IsDomainChar(char c) { return IsAlnum(c) || c == '-' || c == '.'; }

// E-mail addresses: around each @, the local part before it and a dotted host after.
void FindEmails(Scan& scan) {
  const absl::string_view s = scan.s;
  size_t after_previous = 0;  // Where the previous address (or @) ended: no local part before.
  for (size_t at = s.find('@'); at != absl::string_view::npos; at = s.find('@', at + 1)) {
    size_t begin = at;
    while (begin > after_previous && IsLocalChar(s[begin - 1])) --begin;
    while (begin < at && !IsAlnum(s[begin])) ++begin;  // Starts with a letter or digit.
    after_previous = at + 1;
    if (begin == at || scan.WordBefore(begin)) continue;
    size_t end = at + 1;
    while (end < s.size() && IsDomainChar(s[end])) ++end;
    while (end > at + 1 && !IsAlnum(s[end - 1])) --end;  // "a@b.com." ends before the dot.
    const absl::string_view host = s.substr(at + 1, end - at - 1);
    const size_t dot = host.rfind('.');
    if (host.empty() || !IsAlnum(host[0]) || dot == absl::string_view::npos ||
        host.size() - dot - 1 < 2 || !IsAlpha(host[dot + 1]) || absl::StrContains(host, "..") ||
        scan.WordAt(end)) {
      continue;
    }
    scan.Add(begin, end, KeepPattern::kEmails);
    after_previous = end;
  }
}

// Units after a number, longest first where one is another's prefix (checked whole-word).
constexpr absl::string_view kUnits[] = {"km/h",
                                        "kWh",
                                        "mAh",
                                        "kHz",
                                        "MHz",
                                        "GHz",
                                        "THz",
                                        "KiB",
                                        "MiB",
                                        "GiB",
                                        "TiB",
                                        "kbps",
                                        "Mbps",
                                        "Gbps",
                                        "kcal",
                                        "hPa",
                                        "kPa",
                                        "MPa",
                                        "psi",
                                        "mph",
                                        "rpm",
                                        "dpi",
                                        "min",
                                        "sec",
                                        "lbs",
                                        "m/s",
                                        "\xC2\xB0\x43",
                                        "\xC2\xB0\x46",
                                        "\xC2\xB5m",
                                        "\xC2\xB5s",
                                        "\xC2\xB5g",
                                        "mm",
                                        "cm",
                                        "km",
                                        "nm",
                                        "mg",
                                        "kg",
                                        "ml",
                                        "mL",
                                        "cl",
                                        "dl",
                                        "ms",
                                        "ns",
                                        "Hz",
                                        "KB",
                                        "kB",
                                        "MB",
                                        "GB",
                                        "TB",
                                        "PB",
                                        "mV",
                                        "kV",
                                        "mA",
                                        "kW",
                                        "MW",
                                        "Wh",
                                        "kJ",
                                        "Pa",
                                        "px",
                                        "ft",
                                        "lb",
                                        "oz",
                                        "mi",
                                        "h",
                                        "s",
                                        "m",
                                        "g",
                                        "l",
                                        "L",
                                        "W",
                                        "V",
                                        "J",
                                        "B",
                                        "t",
                                        "%",
                                        "\xE2\x80\xB0",
                                        "\xC2\xB0",
                                        "\xE2\x82\xAC",  // ‰ ° €
                                        "\xC2\xA3",
                                        "$",
                                        "USD",
                                        "EUR",
                                        "GBP",
                                        "CHF",
                                        "JPY"};

// The length of the unit at `i` (0: none). A unit of letters must end a word.
size_t UnitAt(const Scan& scan, size_t i) {
  size_t best = 0;
  for (absl::string_view unit : kUnits) {
    if (unit.size() <= best || !scan.StartsWithAt(i, unit, false)) continue;
    const char last = unit.back();
    if ((IsAlnum(last) || static_cast<unsigned char>(last) >= 0x80) &&
        scan.WordAt(i + unit.size())) {
      continue;
    }
    best = unit.size();
  }
  return best;
}

// Numbers with units (25 kg, 3.5 GHz, 100 %, 1,000 €) and times of day (12:30, 08:15:00).
void FindNumbersWithUnits(Scan& scan) {
  const absl::string_view s = scan.s;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsDigit(s[i]) || scan.WordBefore(i) || (i > 0 && (s[i - 1] == '.' || s[i - 1] == ','))) {
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsDigit(s[end])) ++end;
    const size_t first_group = end - i;
    // A time of day: h:mm or hh:mm, then :ss optionally.
    if (first_group <= 2 && end + 2 < s.size() && s[end] == ':' && IsDigit(s[end + 1]) &&
        IsDigit(s[end + 2]) && (end + 3 >= s.size() || !IsDigit(s[end + 3]))) {
      size_t time_end = end + 3;
      if (time_end + 2 < s.size() && s[time_end] == ':' && IsDigit(s[time_end + 1]) &&
          IsDigit(s[time_end + 2]) && (time_end + 3 >= s.size() || !IsDigit(s[time_end + 3]))) {
        time_end += 3;
      }
      if (!scan.WordAt(time_end)) {
        scan.Add(i, time_end, KeepPattern::kNumbersWithUnits);
        i = time_end - 1;
        continue;
      }
    }
    while (end + 1 < s.size() && (s[end] == '.' || s[end] == ',') && IsDigit(s[end + 1])) {
      end += 1;
      while (end < s.size() && IsDigit(s[end])) ++end;
    }
    size_t unit = end;
    if (unit < s.size() && s[unit] == ' ') {
      unit += 1;
    } else if (scan.StartsWithAt(unit, "\xC2\xA0", false)) {  // No-break space.
      unit += 2;
    } else if (scan.StartsWithAt(unit, "\xE2\x80\xAF", false)) {  // Narrow no-break space.
      unit += 3;
    }
    size_t length = UnitAt(scan, unit);
    if (length == 0 && unit != end) {
      unit = end;  // "5 %" failed after the space: "5%" may still hold.
      length = UnitAt(scan, unit);
    }
    if (length == 0) {
      i = end - 1;
      continue;
    }
    scan.Add(i, unit + length, KeepPattern::kNumbersWithUnits);
    i = unit + length - 1;
  }
}

bool IsNameChar(char c) { return IsAlnum(c) || c == '_' || c == '.' || c == '-'; }

// {name}, {0}, {}, {{var}}, {{ var }}, ${var}, $VAR, printf conversions, <0> </0> <1/>.
void FindPlaceholders(Scan& scan) {
  const absl::string_view s = scan.s;
  constexpr size_t kMaxName = 64;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    size_t end = 0;
    if (c == '{' && i + 1 < s.size() && s[i + 1] == '{') {
      size_t j = i + 2;
      while (j < s.size() && j - i < kMaxName && (IsNameChar(s[j]) || s[j] == ' ' || s[j] == '|')) {
        ++j;
      }
      const absl::string_view inside = s.substr(i + 2, j - i - 2);
      if (scan.StartsWithAt(j, "}}", false) && std::any_of(inside.begin(), inside.end(), IsAlnum)) {
        end = j + 2;
      }
    } else if (c == '{' || (c == '$' && i + 1 < s.size() && s[i + 1] == '{')) {
      size_t j = i + (c == '$' ? 2 : 1);
      const size_t name = j;
      while (j < s.size() && j - name < kMaxName && IsNameChar(s[j])) ++j;
      if (j < s.size() && s[j] == '}' && (c == '{' || j > name)) end = j + 1;
    } else if (c == '$' && i + 1 < s.size() && (IsAlpha(s[i + 1]) || s[i + 1] == '_') &&
               !scan.WordBefore(i) && (i == 0 || s[i - 1] != '$')) {
      size_t j = i + 1;
      while (j < s.size() && j - i < kMaxName && (IsAlnum(s[j]) || s[j] == '_')) ++j;
      if (!scan.WordAt(j)) end = j;
    } else if (c == '%') {
      size_t j = i + 1;
      if (j < s.size() && s[j] == '%') {
        end = j + 1;
      } else {
        // %[position$][flags][width][.precision][length]conversion; no ' ' flag ("50% of").
        size_t k = j;
        while (k < s.size() && IsDigit(s[k])) ++k;
        if (k > j && k < s.size() && s[k] == '$') j = k + 1;
        while (j < s.size() && absl::StrContains("-+#0", s[j])) ++j;
        while (j < s.size() && (IsDigit(s[j]) || s[j] == '*')) ++j;
        if (j + 1 < s.size() && s[j] == '.') {
          ++j;
          while (j < s.size() && (IsDigit(s[j]) || s[j] == '*')) ++j;
        }
        for (absl::string_view length : {"hh", "ll", "h", "l", "L", "z", "j", "t", "q"}) {
          if (scan.StartsWithAt(j, length, false)) {
            j += length.size();
            break;
          }
        }
        if (j < s.size() && absl::StrContains("diouxXfFeEgGaAcspn@", s[j]) &&
            (j + 1 >= s.size() || !IsAlnum(s[j + 1])) && j - i < kMaxName) {
          end = j + 1;
        }
      }
    } else if (c == '<') {
      size_t j = i + 1;
      if (j < s.size() && s[j] == '/') ++j;
      const size_t digits = j;
      while (j < s.size() && j - digits < 9 && IsDigit(s[j])) ++j;
      if (j > digits) {
        if (j < s.size() && s[j] == '/' && s[i + 1] != '/') ++j;
        if (j < s.size() && s[j] == '>') end = j + 1;
      }
    }
    if (end > i) {
      scan.Add(i, end, KeepPattern::kPlaceholders);
      i = end - 1;
    }
  }
}

}  // namespace

std::vector<PatternSpan> FindKeepPatterns(absl::string_view text, Segment within,
                                          absl::Span<const KeepPattern> patterns) {
  std::vector<PatternSpan> out;
  const size_t end = std::min(within.end, text.size());
  const size_t begin = std::min(within.begin, end);
  Scan scan{text.substr(begin, end - begin), out, begin};
  auto wanted = [&](KeepPattern p) {
    return std::find(patterns.begin(), patterns.end(), p) != patterns.end();
  };
  if (wanted(KeepPattern::kUrls)) FindUrls(scan);
  if (wanted(KeepPattern::kEmails)) FindEmails(scan);
  if (wanted(KeepPattern::kNumbersWithUnits)) FindNumbersWithUnits(scan);
  if (wanted(KeepPattern::kPlaceholders)) FindPlaceholders(scan);
  std::stable_sort(out.begin(), out.end(), [](const PatternSpan& a, const PatternSpan& b) {
    if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
    return a.range.end > b.range.end;
  });
  return out;
}

}  // namespace mtserve
