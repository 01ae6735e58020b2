// Reading CTranslate2's vocabulary maps and Marian's text lexical shortlists (shortlist.h), and a
// sentence's candidates from one.
#include "model/shortlist.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "base/utf8.h"

namespace mtserve {
namespace {

// The lines of a list's text, numbered from 1, without their line ends ("\n" or "\r\n") and the
// byte order mark of the first; a line that is not UTF-8 is an error naming it.
class Lines {
 public:
  Lines(absl::string_view text, const std::string& path) : rest_(text), path_(path) {
    if (absl::StartsWith(rest_, "\xEF\xBB\xBF")) rest_.remove_prefix(3);
  }

  // The next line into `line`, false at the end, or an error.
  absl::StatusOr<bool> Next(absl::string_view& line) {
    if (rest_.empty()) return false;
    const size_t end = rest_.find('\n');
    line = rest_.substr(0, end);
    rest_.remove_prefix(end == absl::string_view::npos ? rest_.size() : end + 1);
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    ++number_;
    if (!IsValidUtf8(line)) return Error("not valid UTF-8");
    return true;
  }

  int number() const { return number_; }

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ", line ", number_, ": ", message));
  }

 private:
  absl::string_view rest_;
  const std::string& path_;
  int number_ = 0;
};

void SortUnique(std::vector<int>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ids.shrink_to_fit();
}

absl::Status NothingLeft(const std::string& path, int64_t rules, absl::string_view why) {
  if (rules == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": holds no rule"));
  return absl::InvalidArgumentError(absl::StrCat(path, ": none of its ", rules,
                                                 " rules is left: ", why,
                                                 " (a list made for another model's vocabulary?)"));
}

}  // namespace

absl::StatusOr<Shortlist> Shortlist::ParseVocabularyMap(absl::string_view text,
                                                        const std::string& path,
                                                        const Vocab& vocab) {
  Shortlist list;
  list.path_ = path;
  Lines lines(text, path);
  int64_t rules_read = 0;
  std::vector<int> source, targets;
  absl::string_view line;
  while (true) {
    MT_ASSIGN_OR_RETURN(const bool more, lines.Next(line));
    if (!more) break;
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == absl::string_view::npos) {
      return lines.Error(absl::StrCat("no tab after the source '", Excerpt(line),
                                      "' (expected SOURCE<TAB>TARGET TARGET ...)"));
    }
    const absl::string_view target_text = line.substr(tab + 1);
    if (target_text.find('\t') != absl::string_view::npos) {
      return lines.Error("more than one tab (expected SOURCE<TAB>TARGET TARGET ...)");
    }
    ++rules_read;
    const std::vector<absl::string_view> source_pieces =
        absl::StrSplit(line.substr(0, tab), ' ', absl::SkipEmpty());
    if (source_pieces.size() > static_cast<size_t>(kMaxNgram)) {
      return lines.Error(absl::StrCat("the source has ", source_pieces.size(),
                                      " pieces; the limit is ", kMaxNgram));
    }
    source.clear();
    for (absl::string_view piece : source_pieces) {
      if (std::optional<int> id = vocab.Find(piece)) source.push_back(*id);
    }
    // A source with a piece the vocabulary lacks never matches: the rule is skipped.
    if (source.size() < source_pieces.size()) {
      list.skipped_pieces_ += static_cast<int64_t>(source_pieces.size() - source.size());
      continue;
    }
    targets.clear();
    for (absl::string_view piece : absl::StrSplit(target_text, ' ', absl::SkipEmpty())) {
      if (std::optional<int> id = vocab.Find(piece)) {
        targets.push_back(*id);
      } else {
        ++list.skipped_pieces_;
      }
    }
    if (targets.empty()) continue;
    std::vector<int>* into = &list.always_;
    if (!source.empty()) {
      into = &list.rules_[source];
      if (list.rules_.size() > static_cast<size_t>(kMaxRules)) {
        return lines.Error(
            absl::StrCat("one source too many: the limit is ", kMaxRules, " distinct sources"));
      }
      list.max_ngram_ = std::max(list.max_ngram_, static_cast<int>(source.size()));
    }
    into->insert(into->end(), targets.begin(), targets.end());
  }
  if (list.always_.empty() && list.rules_.empty()) {
    return NothingLeft(
        path, rules_read,
        absl::StrCat(list.skipped_pieces_, " of its pieces are not in the model's vocabulary"));
  }
  SortUnique(list.always_);
  for (auto& [unused, ids] : list.rules_) SortUnique(ids);
  return list;
}

absl::StatusOr<Shortlist> Shortlist::ParseLexical(absl::string_view text, const std::string& path,
                                                  const Vocab& vocab,
                                                  const LexicalOptions& options) {
  if (options.first < 0 || options.best < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": first (", options.first, ") and best (",
                                                   options.best, ") must be at least 0"));
  }
  if (std::isnan(options.threshold)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the threshold is not a number"));
  }
  struct Pair {
    int source;
    int target;
    float probability;
  };
  std::vector<Pair> pairs;
  Shortlist list;
  list.path_ = path;
  Lines lines(text, path);
  int64_t rules_read = 0, null_rules = 0;
  absl::string_view line;
  while (true) {
    MT_ASSIGN_OR_RETURN(const bool more, lines.Next(line));
    if (!more) break;
    absl::string_view fields[3];
    int count = 0;
    for (absl::string_view field :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      if (count < 3) fields[count] = field;
      if (++count > 3) break;
    }
    if (count == 0) continue;
    if (count != 3) {
      return lines.Error(absl::StrCat(count > 3 ? "more than 3" : absl::StrCat(count),
                                      " fields (expected TARGET SOURCE PROBABILITY)"));
    }
    float probability;
    if (!absl::SimpleAtof(fields[2], &probability)) {
      return lines.Error(
          absl::StrCat("the probability '", Excerpt(fields[2]), "' is not a number"));
    }
    if (!(probability >= 0.f && probability <= 1.f)) {
      return lines.Error(
          absl::StrCat("the probability ", Excerpt(fields[2]),
                       " is not in [0, 1] (the list holds probabilities, not logs)"));
    }
    ++rules_read;
    if (fields[0] == "NULL" || fields[1] == "NULL") {
      ++null_rules;
      continue;
    }
    const std::optional<int> target = vocab.Find(fields[0]);
    const std::optional<int> source = vocab.Find(fields[1]);
    if (!target || !source) {
      list.skipped_pieces_ += (target ? 0 : 1) + (source ? 0 : 1);
      continue;
    }
    pairs.push_back({*source, *target, probability});
  }
  if (pairs.empty()) {
    return NothingLeft(
        path, rules_read,
        absl::StrCat(list.skipped_pieces_, " of its pieces are not in the model's vocabulary and ",
                     null_rules, " of its rules have a NULL piece"));
  }
  // A pair on several lines counts once, with its largest probability; then each source's pairs
  // from the most probable, the larger id first among equals (Marian's order).
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    if (a.source != b.source) return a.source < b.source;
    if (a.target != b.target) return a.target < b.target;
    return a.probability > b.probability;
  });
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [](const Pair& a, const Pair& b) {
                            return a.source == b.source && a.target == b.target;
                          }),
              pairs.end());
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    if (a.source != b.source) return a.source < b.source;
    if (a.probability != b.probability) return a.probability > b.probability;
    return a.target > b.target;
  });
  for (size_t begin = 0; begin < pairs.size();) {
    size_t end = begin;
    while (end < pairs.size() && pairs[end].source == pairs[begin].source) ++end;
    std::vector<int> targets;
    for (size_t i = begin; i < end && targets.size() < static_cast<size_t>(options.best) &&
                           pairs[i].probability > options.threshold;
         ++i) {
      targets.push_back(pairs[i].target);
    }
    if (!targets.empty()) {
      SortUnique(targets);
      list.rules_.emplace(std::vector<int>{pairs[begin].source}, std::move(targets));
      list.max_ngram_ = 1;
    }
    begin = end;
  }
  const int first = std::min(options.first, vocab.size());
  list.always_.reserve(first);
  for (int id = 0; id < first; ++id) list.always_.push_back(id);
  return list;
}

absl::StatusOr<std::shared_ptr<const Shortlist>> Shortlist::FindInModelDirectory(
    const std::string& dir, const Vocab& vocab) {
  for (const absl::string_view name : {kVocabularyMapFile, kLexicalFile}) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (!PathExists(path)) continue;
    MT_ASSIGN_OR_RETURN(const std::string text, ReadRegularFile(path, kMaxFileBytes));
    MT_ASSIGN_OR_RETURN(Shortlist list, name == kVocabularyMapFile
                                            ? ParseVocabularyMap(text, path, vocab)
                                            : ParseLexical(text, path, vocab, LexicalOptions()));
    return std::make_shared<const Shortlist>(std::move(list));
  }
  return nullptr;
}

void Shortlist::Candidates(absl::Span<const int> source, std::vector<int>& ids) const {
  if (!rules_.empty()) {
    std::vector<int> ngram;
    ngram.reserve(max_ngram_);
    for (size_t i = 0; i < source.size(); ++i) {
      ngram.clear();
      for (size_t j = i; j < source.size() && j < i + max_ngram_; ++j) {
        ngram.push_back(source[j]);
        const auto it = rules_.find(ngram);
        if (it != rules_.end()) ids.insert(ids.end(), it->second.begin(), it->second.end());
      }
    }
  }
  // The few sorted, then merged with the always-line (sorted already, and the most of them).
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<int> merged;
  merged.reserve(ids.size() + always_.size());
  std::set_union(ids.begin(), ids.end(), always_.begin(), always_.end(),
                 std::back_inserter(merged));
  ids = std::move(merged);
}

int64_t Shortlist::memory_bytes() const {
  using Rule = decltype(rules_)::value_type;
  int64_t bytes = sizeof(*this) + path_.capacity() +
                  static_cast<int64_t>(always_.capacity() * sizeof(int)) +
                  // A flat hash map's slots and their control bytes.
                  static_cast<int64_t>(rules_.capacity() * (sizeof(Rule) + 1));
  for (const auto& [ngram, ids] : rules_) {
    bytes += static_cast<int64_t>((ngram.capacity() + ids.capacity()) * sizeof(int));
  }
  return bytes;
}

}  // namespace mtserve
