#include "text/office/office_document.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "text/runs_document.h"

namespace mtserve {
namespace {

class OfficeDocument : public RunsDocument {
 public:
  OfficeDocument(OfficePackage package, std::vector<OfficePart> parts, const SentenceRules& rules)
      : package_(std::move(package)) {
    for (OfficePart& part : parts) {
      if (part.remove) {
        removals_.push_back(std::move(part.name));
      } else {
        parts_.push_back(std::move(part));
      }
    }
    size_t offset = 0;
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t i = 0; i < parts_[p].runs->runs().size(); ++i) {
        index_.push_back({p, i});
        offset_.push_back(offset);
        offset += parts_[p].runs->runs()[i].text.size() + 1;
      }
    }
    for (const OfficePart& part : parts_) {
      for (const std::string& text : part.runs->kept()) {
        kept_.push_back({offset, offset + text.size()});
        offset += text.size() + 1;
      }
    }
    Split(rules);
  }

 protected:
  size_t num_runs() const override { return index_.size(); }
  RunView run(size_t r) const override {
    const PartRuns::Run& run = parts_[index_[r].first].runs->runs()[index_[r].second];
    return {run.text, run.inlines, run.kept};
  }
  Segment SourceBytes(size_t r, Segment range) const override {
    return {offset_[r] + range.begin, offset_[r] + range.end};
  }
  absl::Span<const Segment> untranslated() const override { return kept_; }

  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    absl::flat_hash_map<std::string, std::string> replacements;
    size_t first = 0;
    for (const OfficePart& part : parts_) {
      const size_t count = part.runs->runs().size();
      replacements[part.name] = part.runs->Render(translations.subspan(first, count));
      first += count;
    }
    return package_.Write(replacements, removals_);
  }

 private:
  OfficePackage package_;
  std::vector<OfficePart> parts_;
  std::vector<std::string> removals_;             // Entries left out of the translation.
  std::vector<std::pair<size_t, size_t>> index_;  // Run r: its part and its index there.
  std::vector<size_t> offset_;                    // Run r: where its text is in the extracted text.
  std::vector<Segment> kept_;
};

class Rewritten : public PartRuns {
 public:
  explicit Rewritten(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string Render(absl::Span<const TranslatedRun>) const override { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

std::unique_ptr<PartRuns> RewrittenPart(std::string bytes) {
  return std::make_unique<Rewritten>(std::move(bytes));
}

absl::StatusOr<std::unique_ptr<Document>> PrepareOffice(absl::string_view bytes,
                                                        const SentenceRules& rules,
                                                        const OfficeTakeApart& take_apart) {
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(std::string(bytes));
  if (!package.ok()) return package.status();
  absl::StatusOr<std::vector<OfficePart>> parts = take_apart(*package, rules.target_language);
  if (!parts.ok()) return parts.status();
  return std::make_unique<OfficeDocument>(*std::move(package), *std::move(parts), rules);
}

}  // namespace mtserve
