// The glossary store in the process, and in a directory (local_glossary_store.h).
#include "serving/state/local_glossary_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/json_file.h"
#include "nlohmann/json.hpp"
#include "serving/state/job_id.h"
#include "serving/state/state_files.h"

namespace mtserve {
namespace {

constexpr absl::string_view kFilePrefix = "glossary-";
constexpr absl::string_view kFileSuffix = ".json";
constexpr absl::string_view kTempSuffix = ".tmp";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return FileError(absl::StatusCode::kUnavailable, what, path);
}

absl::Status NotFound() { return absl::NotFoundError("no such glossary"); }

}  // namespace

std::string GlossaryFileJson(const Glossary& glossary) {
  nlohmann::json entries = nlohmann::json::array();
  for (const GlossaryEntry& entry : glossary.entries) {
    entries.push_back({{"source", entry.source}, {"targets", entry.targets}});
  }
  const GlossaryInfo& info = glossary.info;
  const nlohmann::json json = {
      {"id", info.id},
      {"owner", info.owner},
      {"name", info.name},
      {"source_language", info.source_language},
      {"target_language", info.target_language},
      {"created", absl::FormatTime(absl::RFC3339_full, info.created, absl::UTCTimeZone())},
      {"entries", std::move(entries)},
  };
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Glossary> GlossaryFromJson(absl::string_view text, absl::string_view what) {
  absl::StatusOr<nlohmann::json> parsed = ParseJson(text, what);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& json = *parsed;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a glossary: ", why));
  };
  if (!json.is_object()) return bad("not a JSON object");
  Glossary glossary;
  GlossaryInfo& info = glossary.info;
  for (auto [key, field] : {std::pair{"id", &info.id},
                            {"owner", &info.owner},
                            {"name", &info.name},
                            {"source_language", &info.source_language},
                            {"target_language", &info.target_language}}) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_string()) return bad(absl::StrCat("no string \"", key, "\""));
    *field = it->get<std::string>();
  }
  if (!SplitJobId(info.id).has_value()) return bad("\"id\" is not a glossary id");
  auto created = json.find("created");
  std::string error;
  if (created == json.end() || !created->is_string() ||
      !absl::ParseTime(absl::RFC3339_full, created->get<std::string>(), &info.created, &error)) {
    return bad("no RFC 3339 time \"created\"");
  }
  auto entries = json.find("entries");
  if (entries == json.end() || !entries->is_array()) return bad("no array \"entries\"");
  for (const nlohmann::json& entry : *entries) {
    auto source = entry.is_object() ? entry.find("source") : entry.end();
    auto targets = entry.is_object() ? entry.find("targets") : entry.end();
    if (!entry.is_object() || source == entry.end() || !source->is_string() ||
        targets == entry.end() || !targets->is_array() || targets->empty()) {
      return bad(absl::StrCat("entry ", glossary.entries.size(),
                              " is not {\"source\": ..., \"targets\": [...]}"));
    }
    GlossaryEntry read;
    read.source = source->get<std::string>();
    for (const nlohmann::json& target : *targets) {
      if (!target.is_string()) {
        return bad(absl::StrCat("entry ", glossary.entries.size(),
                                " has a target that is not a "
                                "string"));
      }
      read.targets.push_back(target.get<std::string>());
    }
    glossary.entries.push_back(std::move(read));
  }
  info.entry_count = static_cast<int64_t>(glossary.entries.size());
  info.read_only = false;
  return glossary;
}

LocalGlossaryStore::LocalGlossaryStore(std::function<absl::Time()> now)
    : LocalGlossaryStore(std::move(now), std::string()) {}

LocalGlossaryStore::LocalGlossaryStore(std::function<absl::Time()> now, std::string directory)
    : now_(std::move(now)), directory_(std::move(directory)) {}

std::string LocalGlossaryStore::PathOf(const std::string& selector, bool temporary) const {
  return absl::StrCat(directory_, "/", kFilePrefix, absl::BytesToHexString(selector),
                      temporary ? kTempSuffix : kFileSuffix);
}

absl::StatusOr<std::unique_ptr<LocalGlossaryStore>> LocalGlossaryStore::InDirectory(
    std::string directory, int64_t max_file_bytes, std::function<absl::Time()> now) {
  if (directory.empty()) return absl::InvalidArgumentError("the glossary directory is empty");
  auto failed = [&](absl::string_view what, const std::string& path, const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat("cannot ", what, " ", path, ": ", why));
  };
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return failed("make the glossary directory", directory, error.message());
  std::unique_ptr<LocalGlossaryStore> store(new LocalGlossaryStore(std::move(now), directory));
  std::vector<Glossary> read;
  std::filesystem::directory_iterator it(directory, error);
  if (error) return failed("list the glossary directory", directory, error.message());
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!absl::StartsWith(name, kFilePrefix)) continue;
    const std::string path = it->path().string();
    if (absl::EndsWith(name, kTempSuffix)) {  // A write a crash cut short.
      std::error_code removed;
      std::filesystem::remove(it->path(), removed);
      if (removed) return failed("remove the unfinished glossary file", path, removed.message());
      continue;
    }
    if (!absl::EndsWith(name, kFileSuffix)) continue;
    absl::StatusOr<std::string> bytes = ReadRegularFile(path, static_cast<size_t>(max_file_bytes));
    if (!bytes.ok())
      return failed("read the glossary file", path, std::string(bytes.status().message()));
    absl::StatusOr<Glossary> glossary = GlossaryFromJson(*bytes, path);
    if (!glossary.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          glossary.status().message(), " (move it out of the directory to start without it)"));
    }
    const std::string selector = SplitJobId(glossary->info.id)->selector;
    if (name != absl::StrCat(kFilePrefix, absl::BytesToHexString(selector), kFileSuffix)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a glossary: its name is not its id's (", kFilePrefix,
                       absl::BytesToHexString(selector), kFileSuffix, ")"));
    }
    read.push_back(*std::move(glossary));
  }
  if (error) return failed("list the glossary directory", directory, error.message());
  // Oldest first, as they were made.
  std::stable_sort(read.begin(), read.end(), [](const Glossary& a, const Glossary& b) {
    return a.info.created < b.info.created;
  });
  absl::MutexLock lock(&store->mutex_);
  for (Glossary& glossary : read) {
    const JobIdParts parts = *SplitJobId(glossary.info.id);
    store->glossaries_.emplace(
        parts.selector, Held{std::make_shared<const Glossary>(std::move(glossary)), parts.secret,
                             store->next_sequence_++});
  }
  return store;
}

const LocalGlossaryStore::Held* LocalGlossaryStore::FindLocked(const std::string& owner,
                                                               const std::string& id) const {
  const std::optional<JobIdParts> parts = SplitJobId(id);
  if (!parts.has_value()) return nullptr;
  auto it = glossaries_.find(parts->selector);
  if (it == glossaries_.end() || !JobSecretsEqual(it->second.secret, parts->secret) ||
      it->second.glossary->info.owner != owner) {
    return nullptr;
  }
  return &it->second;
}

absl::StatusOr<GlossaryInfo> LocalGlossaryStore::Create(Glossary glossary, int max_per_owner) {
  absl::MutexLock write(&write_mutex_);
  std::string selector;
  std::string secret;
  {
    absl::ReaderMutexLock lock(&mutex_);
    const int64_t owned = std::count_if(
        glossaries_.begin(), glossaries_.end(),
        [&](const auto& held) { return held.second.glossary->info.owner == glossary.info.owner; });
    if (owned >= max_per_owner) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "there are ", owned, " glossaries of this ",
          glossary.info.owner.empty() ? "server" : "API key",
          " already, the limit (--max_glossaries_per_key); delete one to make another"));
    }
    do {  // A selector drawn twice (2^-64 a pair) is drawn again.
      absl::StatusOr<std::string> id = NewJobId();
      if (!id.ok()) return id.status();
      glossary.info.id = *std::move(id);
      const JobIdParts parts = *SplitJobId(glossary.info.id);
      selector = parts.selector;
      secret = parts.secret;
    } while (glossaries_.contains(selector));
  }
  glossary.info.created = now_();
  glossary.info.entry_count = static_cast<int64_t>(glossary.entries.size());
  glossary.info.read_only = false;
  if (!directory_.empty()) {
    // Outside mutex_: Get and List go on while the file is written.
    const std::string temp = PathOf(selector, /*temporary=*/true);
    const std::string path = PathOf(selector, /*temporary=*/false);
    if (absl::Status written = WriteNewFile(temp, GlossaryFileJson(glossary), /*durable=*/true,
                                            absl::StatusCode::kUnavailable);
        !written.ok()) {
      return written;
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      absl::Status renamed = ErrnoError("rename the glossary file to", path);
      ::unlink(temp.c_str());
      return renamed;
    }
  }
  GlossaryInfo info = glossary.info;
  absl::MutexLock lock(&mutex_);
  glossaries_.emplace(selector, Held{std::make_shared<const Glossary>(std::move(glossary)),
                                     std::move(secret), next_sequence_++});
  return info;
}

std::vector<GlossaryInfo> LocalGlossaryStore::List(const std::string& owner) const {
  std::vector<std::pair<uint64_t, GlossaryInfo>> found;
  {
    absl::ReaderMutexLock lock(&mutex_);
    for (const auto& [selector, held] : glossaries_) {
      if (held.glossary->info.owner == owner) found.push_back({held.sequence, held.glossary->info});
    }
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<GlossaryInfo> infos;
  infos.reserve(found.size());
  for (auto& [sequence, info] : found) infos.push_back(std::move(info));
  return infos;
}

absl::StatusOr<Glossary> LocalGlossaryStore::Get(const std::string& owner,
                                                 const std::string& id) const {
  std::shared_ptr<const Glossary> glossary;
  {
    absl::ReaderMutexLock lock(&mutex_);
    const Held* held = FindLocked(owner, id);
    if (held == nullptr) return NotFound();
    glossary = held->glossary;
  }
  return *glossary;  // Copied outside the mutex.
}

absl::Status LocalGlossaryStore::Delete(const std::string& owner, const std::string& id) {
  absl::MutexLock write(&write_mutex_);
  std::string selector;
  {
    absl::ReaderMutexLock lock(&mutex_);
    if (FindLocked(owner, id) == nullptr) return NotFound();
    selector = SplitJobId(id)->selector;
  }
  if (!directory_.empty()) {
    const std::string path = PathOf(selector, /*temporary=*/false);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError("remove the glossary file", path);
    }
  }
  absl::MutexLock lock(&mutex_);
  glossaries_.erase(selector);
  return absl::OkStatus();
}

}  // namespace mtserve
