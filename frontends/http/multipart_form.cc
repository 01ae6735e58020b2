#include "frontends/http/multipart_form.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

constexpr size_t kMaxBoundary = 70;  // RFC 2046.

bool IsBoundaryChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("'()+_,-./:=? ").find(c) != absl::string_view::npos;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

absl::string_view TrimSpace(absl::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// RFC 7230's token characters (a header field's name, a parameter's name).
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

// A header field's value taken apart: "type; name=value; name="quoted value"".
struct FieldValue {
  std::string type;                                             // Lowercase.
  std::vector<std::pair<std::string, std::string>> parameters;  // Names lowercase.

  const std::string* Find(absl::string_view name) const {
    for (const auto& [n, v] : parameters) {
      if (n == name) return &v;
    }
    return nullptr;
  }
};

// `value` of the field `field` (named in errors as `where`'s FIELD).
absl::StatusOr<FieldValue> ParseFieldValue(absl::string_view value, absl::string_view where) {
  FieldValue parsed;
  const size_t semicolon = value.find(';');
  parsed.type = absl::AsciiStrToLower(TrimSpace(value.substr(0, semicolon)));
  if (semicolon == absl::string_view::npos) return parsed;
  absl::string_view rest = value.substr(semicolon);
  while (!rest.empty()) {
    // At a ';' (or the end).
    rest.remove_prefix(1);
    rest = TrimSpace(rest);
    if (rest.empty()) break;  // A trailing ';'.
    size_t n = 0;
    while (n < rest.size() && IsTokenChar(rest[n])) ++n;
    const std::string name = absl::AsciiStrToLower(rest.substr(0, n));
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has a parameter without a name at \"", Excerpt(rest), "\""));
    }
    rest.remove_prefix(n);
    rest = TrimSpace(rest);
    if (rest.empty() || rest.front() != '=') {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'s parameter ", name, " has no value"));
    }
    rest.remove_prefix(1);
    rest = TrimSpace(rest);
    std::string parameter;
    if (!rest.empty() && rest.front() == '"') {
      // A quoted string; a backslash quotes the character after it.
      size_t i = 1;
      bool closed = false;
      for (; i < rest.size(); ++i) {
        if (rest[i] == '\\' && i + 1 < rest.size()) {
          parameter.push_back(rest[++i]);
        } else if (rest[i] == '"') {
          closed = true;
          break;
        } else {
          parameter.push_back(rest[i]);
        }
      }
      if (!closed) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "'s parameter ", name, " has no closing quote"));
      }
      rest.remove_prefix(i + 1);
      rest = TrimSpace(rest);
    } else {
      const size_t end = rest.find(';');
      parameter = std::string(TrimSpace(rest.substr(0, end)));
      rest = end == absl::string_view::npos ? absl::string_view() : rest.substr(end);
    }
    if (!rest.empty() && rest.front() != ';') {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "'s parameter ", name, " is followed by \"", Excerpt(rest), "\", not ';'"));
    }
    if (parsed.Find(name) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " gives the parameter ", name, " twice"));
    }
    parsed.parameters.emplace_back(name, std::move(parameter));
  }
  return parsed;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// An RFC 8187 ext-value (charset'language'percent-encoded), UTF-8 only.
absl::StatusOr<std::string> DecodeExtValue(absl::string_view value, absl::string_view where) {
  const size_t first = value.find('\'');
  const size_t second = first == absl::string_view::npos ? first : value.find('\'', first + 1);
  if (second == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "'s filename* is not CHARSET'LANGUAGE'VALUE"));
  }
  const absl::string_view charset = value.substr(0, first);
  if (!absl::EqualsIgnoreCase(charset, "utf-8")) {
    return absl::InvalidArgumentError(absl::StrCat(where, "'s filename* is in the charset \"",
                                                   Excerpt(charset), "\"; only UTF-8 is read"));
  }
  const absl::string_view encoded = value.substr(second + 1);
  std::string decoded;
  for (size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '%') {
      const int high = i + 2 < encoded.size() ? HexValue(encoded[i + 1]) : -1;
      const int low = i + 2 < encoded.size() ? HexValue(encoded[i + 2]) : -1;
      if (high < 0 || low < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "'s filename* has a '%' not followed by two hex digits"));
      }
      decoded.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               absl::string_view("!#$&+-.^_`|~").find(c) != absl::string_view::npos) {
      decoded.push_back(c);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, "'s filename* has the character '",
                                                     Excerpt(absl::string_view(&c, 1)),
                                                     "', which must be percent-encoded"));
    }
  }
  return decoded;
}

// The fields of one part's header that the form uses, filled line by line.
struct PartHeader {
  bool has_disposition = false;
  bool has_type = false;
  FormPart part;
};

absl::Status ParseHeaderLine(absl::string_view line, absl::string_view where, PartHeader& header) {
  for (char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'s header has the control character ", static_cast<int>(u)));
    }
  }
  const size_t colon = line.find(':');
  const absl::string_view name = line.substr(0, colon);
  if (colon == absl::string_view::npos || name.empty() ||
      !std::all_of(name.begin(), name.end(), IsTokenChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "'s header line \"", Excerpt(line), "\" is not NAME: VALUE"));
  }
  const absl::string_view value = TrimSpace(line.substr(colon + 1));
  if (absl::EqualsIgnoreCase(name, "content-disposition")) {
    if (header.has_disposition) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has two Content-Disposition"));
    }
    header.has_disposition = true;
    const std::string field = absl::StrCat(where, "'s Content-Disposition");
    absl::StatusOr<FieldValue> parsed = ParseFieldValue(value, field);
    if (!parsed.ok()) return parsed.status();
    if (parsed->type != "form-data") {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " is \"", Excerpt(parsed->type), "\", not form-data"));
    }
    const std::string* part_name = parsed->Find("name");
    if (part_name == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(field, " has no name"));
    header.part.name = *part_name;
    if (const std::string* extended = parsed->Find("filename*"); extended != nullptr) {
      absl::StatusOr<std::string> decoded = DecodeExtValue(*extended, where);
      if (!decoded.ok()) return decoded.status();
      header.part.file_name = *std::move(decoded);
    } else if (const std::string* plain = parsed->Find("filename"); plain != nullptr) {
      header.part.file_name = *plain;
    }
    if (header.part.file_name.has_value() && !IsValidUtf8(*header.part.file_name)) {
      return absl::InvalidArgumentError(absl::StrCat(field, "'s file name is not UTF-8"));
    }
    if (!IsValidUtf8(header.part.name)) {
      return absl::InvalidArgumentError(absl::StrCat(field, "'s name is not UTF-8"));
    }
  } else if (absl::EqualsIgnoreCase(name, "content-type")) {
    if (header.has_type) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has two Content-Type"));
    }
    header.has_type = true;
    header.part.content_type = std::string(value);
  } else if (absl::EqualsIgnoreCase(name, "content-transfer-encoding")) {
    // RFC 7578 deprecates it; an encoding other than an identity would be read as the bytes.
    const std::string encoding = absl::AsciiStrToLower(value);
    if (encoding != "7bit" && encoding != "8bit" && encoding != "binary") {
      return absl::InvalidArgumentError(absl::StrCat(where, "'s Content-Transfer-Encoding \"",
                                                     Excerpt(value),
                                                     "\" is not accepted (only binary)"));
    }
  }
  // Other fields carry nothing a form needs.
  return absl::OkStatus();
}

// How errors name part `index` (0-based) once its name may be known.
std::string PartName(absl::string_view what, size_t index, const PartHeader* header) {
  std::string name = absl::StrCat(what, "'s part ", index + 1);
  if (header != nullptr && header->has_disposition) {
    absl::StrAppend(&name, " (\"", Excerpt(header->part.name), "\")");
  }
  return name;
}

}  // namespace

absl::StatusOr<std::string> MultipartBoundary(absl::string_view content_type) {
  absl::StatusOr<FieldValue> parsed = ParseFieldValue(content_type, "the Content-Type");
  if (!parsed.ok()) return parsed.status();
  if (parsed->type != "multipart/form-data") {
    return absl::InvalidArgumentError(absl::StrCat("the Content-Type is \"", Excerpt(parsed->type),
                                                   "\", not multipart/form-data"));
  }
  const std::string* boundary = parsed->Find("boundary");
  if (boundary == nullptr || boundary->empty()) {
    return absl::InvalidArgumentError("the Content-Type multipart/form-data has no boundary");
  }
  if (boundary->size() > kMaxBoundary) {
    return absl::InvalidArgumentError(absl::StrCat("the Content-Type's boundary has ",
                                                   boundary->size(), " characters, more than ",
                                                   kMaxBoundary));
  }
  if (!std::all_of(boundary->begin(), boundary->end(), IsBoundaryChar) || boundary->back() == ' ') {
    return absl::InvalidArgumentError(
        absl::StrCat("the Content-Type's boundary \"", Excerpt(*boundary),
                     "\" has characters RFC 2046 does not allow in one"));
  }
  return *boundary;
}

absl::StatusOr<std::vector<FormPart>> ParseMultipartForm(absl::string_view body,
                                                         absl::string_view boundary,
                                                         const MultipartLimits& limits,
                                                         absl::string_view what) {
  if (body.size() > limits.max_body_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has ", body.size(), " bytes, more than the limit of ", limits.max_body_bytes));
  }
  if (boundary.empty()) return absl::InvalidArgumentError("the boundary is empty");
  const std::string delimiter = absl::StrCat("--", boundary);
  const std::string next_delimiter = absl::StrCat("\r\n", delimiter);
  // The first delimiter: at the start, or after the preamble's last CRLF.
  size_t pos = 0;
  if (!absl::StartsWith(body, delimiter)) {
    pos = body.find(next_delimiter);
    if (pos == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has no delimiter line of its boundary \"", Excerpt(boundary), "\""));
    }
    pos += 2;
  }
  std::vector<FormPart> parts;
  while (true) {
    // At a delimiter: "--BOUNDARY", then "--" (the last) or whitespace and CRLF (a part).
    size_t p = pos + delimiter.size();
    if (body.substr(p, 2) == "--") {
      if (parts.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " has no parts"));
      return parts;  // The epilogue is ignored.
    }
    const std::string part_name = PartName(what, parts.size(), nullptr);
    while (p < body.size() && IsSpace(body[p])) ++p;
    if (p >= body.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ends after a delimiter line, without the closing \"",
                       Excerpt(delimiter), "--\" (truncated?)"));
    }
    if (body.substr(p, 2) != "\r\n") {
      return absl::InvalidArgumentError(absl::StrCat("the delimiter line before ", part_name,
                                                     " is followed by \"",
                                                     Excerpt(body.substr(p, 16)), "\", not CRLF"));
    }
    if (parts.size() >= limits.max_parts) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has more than the limit of ", limits.max_parts, " parts"));
    }
    // The part's header: lines up to an empty one, within max_header_bytes.
    const size_t header_start = p + 2;
    const size_t header_limit = std::min(body.size(), header_start + limits.max_header_bytes);
    PartHeader header;
    std::vector<absl::string_view> lines;
    size_t q = header_start;
    size_t body_start = 0;
    while (true) {
      const size_t eol = body.substr(0, header_limit).find("\r\n", q);
      if (eol == absl::string_view::npos) {
        if (header_limit < body.size()) {
          return absl::InvalidArgumentError(absl::StrCat(part_name,
                                                         "'s header is longer than the limit of ",
                                                         limits.max_header_bytes, " bytes"));
        }
        return absl::InvalidArgumentError(
            absl::StrCat(what, " ends in ", part_name, "'s header (truncated?)"));
      }
      if (eol == q) {
        body_start = eol + 2;
        break;
      }
      lines.push_back(body.substr(q, eol - q));
      q = eol + 2;
    }
    for (const absl::string_view line : lines) {
      if (IsSpace(line.front())) {
        return absl::InvalidArgumentError(
            absl::StrCat(part_name, "'s header folds a line (obsolete; not accepted)"));
      }
    }
    for (const absl::string_view line : lines) {
      const absl::Status parsed =
          ParseHeaderLine(line, PartName(what, parts.size(), &header), header);
      if (!parsed.ok()) return parsed;
    }
    if (!header.has_disposition) {
      return absl::InvalidArgumentError(absl::StrCat(part_name, " has no Content-Disposition"));
    }
    // Its body: up to the CRLF before the next delimiter.
    const size_t end = body.find(next_delimiter, body_start);
    if (end == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ends in ", PartName(what, parts.size(), &header),
                       "'s body, without the closing \"", Excerpt(delimiter), "--\" (truncated?)"));
    }
    header.part.body = body.substr(body_start, end - body_start);
    parts.push_back(std::move(header.part));
    pos = end + 2;
  }
}

const FormPart* FindFormPart(const std::vector<FormPart>& parts, absl::string_view name) {
  for (const FormPart& part : parts) {
    if (part.name == name) return &part;
  }
  return nullptr;
}

}  // namespace mtserve
