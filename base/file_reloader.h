// One mechanism for the files the server re-reads while it runs (TLS certificates, the API keys
// file, the glossary files of a directory): Kubernetes secrets and cert-manager replace them in
// place, and a restart would drop connections. A FileReloader polls its files' identity (device,
// inode, size, modification and change times, through symlinks: a secret's files are symlinks
// swapped at once) and, when any changed or Reload() is called (on SIGHUP), reads them all and
// hands their bytes to `apply`. When reading or `apply` fails, what was applied before stays in use
// and the reason is logged; the same bad version is not retried until the files change again.
#ifndef MTSERVE_BASE_FILE_RELOADER_H_
#define MTSERVE_BASE_FILE_RELOADER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mtserve {

class FileReloader {
 public:
  struct Options {
    std::string what;                // For messages: "TLS certificate (--tls_cert, --tls_key)".
    std::vector<std::string> paths;  // Read in this order; their bytes go to `apply` so.
    // When set, the files are those it lists at each check instead of `paths` (a directory's
    // files, which come and go): a file added or removed is a change too. Its error fails that
    // read (at Start, the start).
    std::function<absl::StatusOr<std::vector<std::string>>()> list;
    size_t max_bytes = 1 << 20;  // Per file; a larger one is refused, never truncated.
    absl::Duration poll_interval = absl::Seconds(10);  // Infinite: no polling (Reload only).
  };
  // Validates and installs the files' bytes (contents[i] is paths[i]'s); an error keeps the
  // previous version. Called on one thread at a time.
  using Apply = std::function<absl::Status(const std::vector<std::string>& contents)>;
  // The same, with the paths read (those `list` gave, or `paths`).
  using ApplyFiles = std::function<absl::Status(const std::vector<std::string>& paths,
                                                const std::vector<std::string>& contents)>;

  // Reads and applies the files once (an error here is the caller's: start-up fails, naming
  // `what`), then polls them on a thread of its own.
  static absl::StatusOr<std::unique_ptr<FileReloader>> Start(Options options, Apply apply);
  static absl::StatusOr<std::unique_ptr<FileReloader>> Start(Options options, ApplyFiles apply);
  ~FileReloader();  // Stops polling.

  FileReloader(const FileReloader&) = delete;
  FileReloader& operator=(const FileReloader&) = delete;

  // Reads and applies the files now, changed or not (SIGHUP); logs and returns the outcome.
  absl::Status Reload();
  // Reads and applies them if their identity changed since the last attempt; OK if unchanged.
  absl::Status ReloadIfChanged();

 private:
  FileReloader(Options options, ApplyFiles apply);
  // The files to read now: `list`'s, or `paths`.
  absl::StatusOr<std::vector<std::string>> Paths() const;
  // The files' identities (and paths, when listed) as one string ("" parts for files that cannot
  // be stat'ed; the listing's error when it fails).
  std::string Fingerprint() const;
  absl::Status ReadAndApply(const std::string& fingerprint)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mutex_);
  void Poll();

  const Options options_;
  const ApplyFiles apply_;

  absl::Mutex reload_mutex_;  // One reload at a time (polling thread, SIGHUP).
  std::string last_fingerprint_ ABSL_GUARDED_BY(reload_mutex_);
  bool started_ ABSL_GUARDED_BY(reload_mutex_) = false;  // Past the first read: log outcomes.

  absl::Mutex stop_mutex_;
  bool stopping_ ABSL_GUARDED_BY(stop_mutex_) = false;
  std::thread poller_;
};

}  // namespace mtserve

#endif  // MTSERVE_BASE_FILE_RELOADER_H_
