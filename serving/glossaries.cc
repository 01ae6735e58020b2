// Every glossary a caller may use (glossaries.h): the store's, by owner, and the read-only files'.
#include "serving/glossaries.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/excerpt.h"
#include "serving/glossary_files.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxLanguageBytes = 35;

absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("name: empty; a glossary has a name");
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: ", name.size(), " bytes, over the limit of ", kMaxNameBytes));
  }
  if (!IsValidUtf8(name)) return absl::InvalidArgumentError("name: not UTF-8");
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return absl::InvalidArgumentError("name: holds a control character");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLanguage(const std::string& code, absl::string_view field) {
  const bool valid =
      !code.empty() && code.size() <= kMaxLanguageBytes &&
      std::all_of(code.begin(), code.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", Excerpt(code), "\" is not a language code (\"en\", \"de\")"));
  }
  return absl::OkStatus();
}

// `entries` with each source once, in the order of first appearance, its targets gathered.
std::vector<GlossaryEntry> Merged(std::vector<GlossaryEntry> entries) {
  std::vector<GlossaryEntry> merged;
  absl::flat_hash_map<std::string, size_t> index;
  for (GlossaryEntry& entry : entries) {
    auto [it, added] = index.emplace(entry.source, merged.size());
    if (added) {
      merged.push_back(std::move(entry));
      continue;
    }
    std::vector<std::string>& targets = merged[it->second].targets;
    for (std::string& target : entry.targets) {
      if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
        targets.push_back(std::move(target));
      }
    }
  }
  return merged;
}

absl::Time Modified(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return absl::Now();
  return absl::TimeFromTimespec(st.st_mtim);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Glossaries>> Glossaries::Start(
    GlossaryStore* store, const ApiKeyAuthenticator* auth, GlossaryLimits limits,
    std::function<bool(const std::string&, const std::string&)> pair_served, std::string files_dir,
    absl::Duration poll_interval) {
  std::unique_ptr<Glossaries> glossaries(
      new Glossaries(store, auth, limits, std::move(pair_served)));
  if (files_dir.empty()) return glossaries;
  FileReloader::Options options;
  options.what = absl::StrCat("the glossary files (--glossary_dir=", files_dir, ")");
  options.list = [files_dir] { return ListGlossaryFiles(files_dir); };
  options.max_bytes =
      static_cast<size_t>(GlossaryFileLimitsFor(limits.max_entries, limits.terms).max_bytes);
  options.poll_interval = poll_interval;
  absl::StatusOr<std::unique_ptr<FileReloader>> reloader = FileReloader::Start(
      options, [self = glossaries.get()](const std::vector<std::string>& paths,
                                         const std::vector<std::string>& contents) {
        return self->ApplyFiles(paths, contents);
      });
  if (!reloader.ok()) return reloader.status();
  glossaries->reloader_ = *std::move(reloader);
  return glossaries;
}

absl::Status Glossaries::ApplyFiles(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& contents) {
  auto files = std::make_shared<Files>();
  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StatusOr<Glossary> glossary =
        ReadGlossaryFile(paths[i], contents[i], Modified(paths[i]), limits_);
    if (!glossary.ok()) return glossary.status();
    std::string id = glossary->info.id;
    if (files->contains(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat(paths[i], ": glossary ", id, " is also another file's (.tsv and .csv)"));
    }
    files->emplace(std::move(id), std::make_shared<const Glossary>(*std::move(glossary)));
  }
  absl::MutexLock lock(&mutex_);
  files_ = std::move(files);
  return absl::OkStatus();
}

std::shared_ptr<const Glossaries::Files> Glossaries::files() const {
  absl::MutexLock lock(&mutex_);
  return files_;
}

absl::Status Glossaries::Reload() {
  if (reloader_ == nullptr) return absl::OkStatus();
  return reloader_->Reload();
}

absl::StatusOr<std::string> Glossaries::Owner(const std::optional<std::string>& api_key) const {
  if (auth_ == nullptr) return std::string();
  absl::StatusOr<ApiKey> key = auth_->Authenticate(api_key);
  if (!key.ok()) return key.status();
  return key->name;
}

absl::StatusOr<GlossaryInfo> Glossaries::Create(const std::optional<std::string>& api_key,
                                                Glossary glossary) {
  absl::StatusOr<std::string> owner = Owner(api_key);
  if (!owner.ok()) return owner.status();
  GlossaryInfo& info = glossary.info;
  if (absl::Status status = CheckName(info.name); !status.ok()) return status;
  if (absl::Status status = CheckLanguage(info.source_language, "source_language"); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckLanguage(info.target_language, "target_language"); !status.ok()) {
    return status;
  }
  if (glossary.entries.empty()) {
    return absl::InvalidArgumentError("entries: empty; a glossary has one entry at least");
  }
  // Each source once (its targets gathered), then counted and checked.
  glossary.entries = Merged(std::move(glossary.entries));
  if (glossary.entries.size() > static_cast<size_t>(limits_.max_entries)) {
    return absl::InvalidArgumentError(
        absl::StrCat("entries: ", glossary.entries.size(), " distinct sources, over the limit of ",
                     limits_.max_entries, " a glossary (the server's --max_glossary_entries)"));
  }
  Terminology terminology;
  terminology.glossary = std::move(glossary.entries);
  TerminologyLimits terms = limits_.terms;
  terms.max_entries = limits_.max_entries;
  if (absl::Status status = ValidateTerminology(terminology, terms, "entries: "); !status.ok()) {
    return status;
  }
  glossary.entries = std::move(terminology.glossary);
  if (!pair_served_(info.source_language, info.target_language)) {
    return absl::InvalidArgumentError(
        absl::StrCat("source_language, target_language: no model (or chain of models) served "
                     "translates ",
                     info.source_language, " into ", info.target_language,
                     "; a glossary is made for a pair the server translates"));
  }
  info.owner = *owner;
  info.read_only = false;
  return store_->Create(std::move(glossary), limits_.max_glossaries_per_key);
}

absl::StatusOr<std::vector<GlossaryInfo>> Glossaries::List(
    const std::optional<std::string>& api_key) const {
  absl::StatusOr<std::string> owner = Owner(api_key);
  if (!owner.ok()) return owner.status();
  std::vector<GlossaryInfo> infos;
  // Held for the loop: a range-for over `*files()` keeps the map but not the pointer that owns
  // it, which a reload of the files may drop meanwhile.
  const std::shared_ptr<const Files> files = this->files();
  for (const auto& [id, glossary] : *files) infos.push_back(glossary->info);
  for (GlossaryInfo& info : store_->List(*owner)) infos.push_back(std::move(info));
  return infos;
}

absl::StatusOr<Glossary> Glossaries::Get(const std::optional<std::string>& api_key,
                                         const std::string& id) const {
  absl::StatusOr<std::string> owner = Owner(api_key);
  if (!owner.ok()) return owner.status();
  const std::shared_ptr<const Files> files = this->files();
  if (auto it = files->find(id); it != files->end()) return *it->second;
  return store_->Get(*owner, id);
}

absl::Status Glossaries::Delete(const std::optional<std::string>& api_key, const std::string& id) {
  absl::StatusOr<std::string> owner = Owner(api_key);
  if (!owner.ok()) return owner.status();
  const std::shared_ptr<const Files> files = this->files();
  if (files->contains(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("glossary ", id,
                     " is read-only: it is a file of the server's --glossary_dir, which only its "
                     "operators change"));
  }
  return store_->Delete(*owner, id);
}

}  // namespace mtserve
