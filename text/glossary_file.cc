// DeepL's glossary entry formats, TSV and CSV, read within limits (glossary_file.h).
#include "text/glossary_file.h"

#include <cstddef>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";
// Room for a language column (a BCP 47 tag is rarely past 35 characters).
constexpr int64_t kLanguageColumnBytes = 35;

// One record of the file: its fields as written (CSV's quotes undone) and its first line.
struct Record {
  std::vector<std::string> fields;
  int line = 0;
};

absl::string_view FormatName(GlossaryFileFormat format) {
  return format == GlossaryFileFormat::kCsv ? "CSV" : "TSV";
}

// Spaces and tabs around `text` removed.
absl::string_view TrimBlanks(absl::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool IsBlank(absl::string_view text) { return TrimBlanks(text).empty(); }

class Reader {
 public:
  Reader(const GlossaryFileOptions& options, absl::string_view what)
      : options_(options), what_(what) {}

  absl::Status Error(int line, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(what_, ", line ", line, ": ", message));
  }

  // `term` (the record's `role`: "source" or "target") trimmed and checked.
  absl::StatusOr<std::string> Term(absl::string_view term, absl::string_view role, int line) const {
    term = TrimBlanks(term);
    if (term.empty()) return Error(line, absl::StrCat("the ", role, " is empty"));
    if (term.size() > static_cast<size_t>(options_.limits.max_term_bytes)) {
      return Error(line,
                   absl::StrCat("the ", role, " is ", term.size(), " bytes, over the limit of ",
                                options_.limits.max_term_bytes, " bytes a term"));
    }
    if (!IsValidUtf8(term)) return Error(line, absl::StrCat("the ", role, " is not valid UTF-8"));
    if (const std::optional<uint32_t> control = FirstControlCharacter(term); control.has_value()) {
      return Error(line,
                   absl::StrFormat("the %s holds a control character (U+%04X)", role, *control));
    }
    return std::string(term);
  }

  // A language column of a CSV record: the glossary's `expected` language, if any.
  absl::Status Language(absl::string_view given, const std::string& expected,
                        absl::string_view role, int line) const {
    given = TrimBlanks(given);
    if (!IsValidUtf8(given)) {
      return Error(line, absl::StrCat("the ", role, " language is not valid UTF-8"));
    }
    if (!expected.empty() && !absl::EqualsIgnoreCase(given, expected)) {
      return Error(line, absl::StrCat("the ", role, " language is \"", given.substr(0, 35),
                                      "\", not the glossary's ", expected));
    }
    return absl::OkStatus();
  }

  absl::Status Add(const Record& record) {
    const size_t columns = record.fields.size();
    const bool csv = options_.format == GlossaryFileFormat::kCsv;
    if (columns != 2 && !(csv && columns == 4)) {
      return Error(
          record.line,
          absl::StrCat(columns, columns == 1 ? " field" : " fields", "; a ",
                       FormatName(options_.format), " line is source",
                       csv ? ",target or source,target,source_lang,target_lang" : "<TAB>target"));
    }
    absl::StatusOr<std::string> source = Term(record.fields[0], "source", record.line);
    if (!source.ok()) return source.status();
    absl::StatusOr<std::string> target = Term(record.fields[1], "target", record.line);
    if (!target.ok()) return target.status();
    if (columns == 4) {
      if (absl::Status status =
              Language(record.fields[2], options_.source_language, "source", record.line);
          !status.ok()) {
        return status;
      }
      if (absl::Status status =
              Language(record.fields[3], options_.target_language, "target", record.line);
          !status.ok()) {
        return status;
      }
    }
    auto it = index_.find(*source);
    if (it == index_.end()) {
      if (entries_.size() >= static_cast<size_t>(options_.limits.max_entries)) {
        return Error(record.line, absl::StrCat("more than ", options_.limits.max_entries,
                                               " entries, the limit of a glossary"));
      }
      index_.emplace(*source, entries_.size());
      entries_.push_back(GlossaryEntry{*std::move(source), {*std::move(target)}});
      return absl::OkStatus();
    }
    std::vector<std::string>& targets = entries_[it->second].targets;
    for (const std::string& known : targets) {
      if (known == *target) return absl::OkStatus();
    }
    if (targets.size() >= static_cast<size_t>(options_.limits.max_targets)) {
      return Error(record.line, absl::StrCat("more than ", options_.limits.max_targets,
                                             " targets for the source \"", *source,
                                             "\", the limit of an entry"));
    }
    targets.push_back(*std::move(target));
    return absl::OkStatus();
  }

  // Each line of `text` (no byte order mark) as a record of tab-separated fields.
  absl::Status ReadTsv(absl::string_view text) {
    int line = 0;
    for (absl::string_view row : absl::StrSplit(text, '\n')) {
      ++line;
      if (absl::EndsWith(row, "\r")) row.remove_suffix(1);
      if (IsBlank(row)) continue;
      Record record;
      record.line = line;
      for (absl::string_view field : absl::StrSplit(row, '\t')) {
        record.fields.emplace_back(field);
        if (record.fields.size() > 4) break;  // Refused whatever follows.
      }
      if (absl::Status status = Add(record); !status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // RFC 4180's records of `text` (no byte order mark).
  absl::Status ReadCsv(absl::string_view text) {
    size_t i = 0;
    int line = 1;
    while (i < text.size()) {
      Record record;
      record.line = line;
      bool record_done = false;
      bool all_unquoted = true;
      while (!record_done) {
        if (record.fields.size() > 4) {
          return Error(record.line,
                       "more than 4 fields; a CSV line is source,target or "
                       "source,target,source_lang,target_lang");
        }
        // One field, from i.
        size_t start = i;
        while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
        std::string field;
        if (start < text.size() && text[start] == '"') {
          all_unquoted = false;
          const int opened = line;
          size_t j = start + 1;
          while (true) {
            if (j >= text.size()) {
              return Error(opened, "a quoted field is not closed by the end of the file");
            }
            if (text[j] == '"') {
              if (j + 1 < text.size() && text[j + 1] == '"') {
                field += '"';
                j += 2;
                continue;
              }
              ++j;
              break;
            }
            if (text[j] == '\n') ++line;
            field += text[j];
            ++j;
          }
          while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
          if (j < text.size() && text[j] != ',' && text[j] != '\n' &&
              !(text[j] == '\r' && j + 1 < text.size() && text[j + 1] == '\n')) {
            return Error(line, "a quoted field is followed by something other than a comma");
          }
          i = j;
          record.fields.push_back(std::move(field));
        } else {
          size_t j = i;
          while (j < text.size() && text[j] != ',' && text[j] != '\n') {
            if (text[j] == '"') {
              return Error(line,
                           "a quote inside an unquoted field (quote the field, and write a "
                           "quote in it as \"\")");
            }
            ++j;
          }
          absl::string_view raw = text.substr(i, j - i);
          if (j > i && (j == text.size() || text[j] == '\n') && absl::EndsWith(raw, "\r")) {
            raw.remove_suffix(1);
          }
          record.fields.emplace_back(raw);
          i = j;
        }
        // After a field: a comma, a line's end or the file's.
        if (i >= text.size()) {
          record_done = true;
        } else if (text[i] == ',') {
          ++i;
        } else {
          if (text[i] == '\r') ++i;
          ++i;  // '\n'.
          ++line;
          record_done = true;
        }
      }
      if (all_unquoted && record.fields.size() == 1 && IsBlank(record.fields[0])) continue;
      if (absl::Status status = Add(record); !status.ok()) return status;
    }
    return absl::OkStatus();
  }

  std::vector<GlossaryEntry> Take() { return std::move(entries_); }

 private:
  const GlossaryFileOptions& options_;
  const absl::string_view what_;
  std::vector<GlossaryEntry> entries_;
  absl::flat_hash_map<std::string, size_t> index_;  // Source -> its entry.
};

}  // namespace

GlossaryFileLimits GlossaryFileLimitsFor(int max_entries, const TerminologyLimits& terms) {
  GlossaryFileLimits limits;
  limits.max_entries = max_entries;
  limits.max_targets = terms.max_targets;
  limits.max_term_bytes = terms.max_term_bytes;
  // A line: two terms, each quoted with every byte a doubled quote, three commas, two language
  // columns and CRLF.
  const int64_t line =
      2 * (2 * int64_t{terms.max_term_bytes} + 2) + 3 + 2 * kLanguageColumnBytes + 2;
  limits.max_bytes = int64_t{max_entries} * line;
  return limits;
}

absl::StatusOr<std::vector<GlossaryEntry>> ParseGlossaryFile(absl::string_view bytes,
                                                             const GlossaryFileOptions& options,
                                                             absl::string_view what) {
  GlossaryFileOptions resolved = options;
  if (resolved.limits.max_bytes <= 0) {
    TerminologyLimits terms;
    terms.max_targets = options.limits.max_targets;
    terms.max_term_bytes = options.limits.max_term_bytes;
    resolved.limits.max_bytes = GlossaryFileLimitsFor(options.limits.max_entries, terms).max_bytes;
  }
  if (static_cast<int64_t>(bytes.size()) > resolved.limits.max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", bytes.size(), " bytes, over the limit of ", resolved.limits.max_bytes,
        " bytes for a glossary of at most ", resolved.limits.max_entries, " entries"));
  }
  if (absl::StartsWith(bytes, kByteOrderMark)) bytes.remove_prefix(kByteOrderMark.size());
  Reader reader(resolved, what);
  const absl::Status status =
      options.format == GlossaryFileFormat::kCsv ? reader.ReadCsv(bytes) : reader.ReadTsv(bytes);
  if (!status.ok()) return status;
  return reader.Take();
}

std::string WriteGlossaryTsv(const std::vector<GlossaryEntry>& entries) {
  std::string out;
  for (const GlossaryEntry& entry : entries) {
    for (const std::string& target : entry.targets) {
      absl::StrAppend(&out, entry.source, "\t", target, "\n");
    }
  }
  return out;
}

}  // namespace mtserve
