#include "base/file_reloader.h"

#include <sys/stat.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_file.h"

namespace mtserve {

absl::StatusOr<std::unique_ptr<FileReloader>> FileReloader::Start(Options options, Apply apply) {
  return Start(std::move(options),
               [apply = std::move(apply)](const std::vector<std::string>& /*paths*/,
                                          const std::vector<std::string>& contents) {
                 return apply(contents);
               });
}

absl::StatusOr<std::unique_ptr<FileReloader>> FileReloader::Start(Options options,
                                                                  ApplyFiles apply) {
  std::unique_ptr<FileReloader> reloader(new FileReloader(std::move(options), std::move(apply)));
  {
    absl::MutexLock lock(&reloader->reload_mutex_);
    if (absl::Status status = reloader->ReadAndApply(reloader->Fingerprint()); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(reloader->options_.what, ": ", status.message()));
    }
    reloader->started_ = true;
  }
  if (reloader->options_.poll_interval != absl::InfiniteDuration()) {
    reloader->poller_ = std::thread([r = reloader.get()] { r->Poll(); });
  }
  return reloader;
}

FileReloader::FileReloader(Options options, ApplyFiles apply)
    : options_(std::move(options)), apply_(std::move(apply)) {}

FileReloader::~FileReloader() {
  {
    absl::MutexLock lock(&stop_mutex_);
    stopping_ = true;
  }
  if (poller_.joinable()) poller_.join();
}

void FileReloader::Poll() {
  while (true) {
    {
      absl::MutexLock lock(&stop_mutex_);
      stop_mutex_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll_interval);
      if (stopping_) return;
    }
    ReloadIfChanged().IgnoreError();  // Logged.
  }
}

absl::StatusOr<std::vector<std::string>> FileReloader::Paths() const {
  if (options_.list) return options_.list();
  return options_.paths;
}

std::string FileReloader::Fingerprint() const {
  const absl::StatusOr<std::vector<std::string>> paths = Paths();
  if (!paths.ok()) return absl::StrCat("listing failed: ", paths.status().message());
  std::vector<std::string> parts;
  for (const std::string& path : *paths) {
    if (options_.list) parts.push_back(path);
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      parts.push_back("");
      continue;
    }
    parts.push_back(absl::StrCat(st.st_dev, ":", st.st_ino, ":", st.st_size, ":", st.st_mtim.tv_sec,
                                 ".", st.st_mtim.tv_nsec, ":", st.st_ctim.tv_sec, ".",
                                 st.st_ctim.tv_nsec));
  }
  return absl::StrJoin(parts, "|");
}

absl::Status FileReloader::Reload() {
  absl::MutexLock lock(&reload_mutex_);
  return ReadAndApply(Fingerprint());
}

absl::Status FileReloader::ReloadIfChanged() {
  absl::MutexLock lock(&reload_mutex_);
  const std::string fingerprint = Fingerprint();
  if (fingerprint == last_fingerprint_) return absl::OkStatus();
  return ReadAndApply(fingerprint);
}

absl::Status FileReloader::ReadAndApply(const std::string& fingerprint) {
  // Even when this attempt fails: a bad version is logged once, not at every poll.
  last_fingerprint_ = fingerprint;
  std::string read_from = absl::StrJoin(options_.paths, ", ");
  const absl::Status status = [&]() -> absl::Status {
    absl::StatusOr<std::vector<std::string>> paths = Paths();
    if (!paths.ok()) return paths.status();
    if (options_.list) read_from = absl::StrCat(paths->size(), " files");
    std::vector<std::string> contents;
    for (const std::string& path : *paths) {
      absl::StatusOr<std::string> bytes = ReadRegularFile(path, options_.max_bytes);
      if (!bytes.ok()) return bytes.status();
      contents.push_back(*std::move(bytes));
    }
    return apply_(*paths, contents);
  }();
  if (!started_) return status;  // Start-up: Start's caller reports it.
  if (status.ok()) {
    std::fprintf(stderr, "mtserve: %s reloaded from %s\n", options_.what.c_str(),
                 read_from.c_str());
  } else {
    std::fprintf(stderr, "mtserve: %s not reloaded, the previous one stays in use: %s\n",
                 options_.what.c_str(), std::string(status.message()).c_str());
  }
  return status;
}

}  // namespace mtserve
