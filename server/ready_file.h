// The --ready_file: where a started mtserve says, as one JSON object, its state ("loading" once
// its ports are open, "serving" once its models are loaded, "draining" once a signal asked it to
// stop) and the ports it listens on, so that tools and tests that ask for port 0 read them from
// there instead of matching its stderr. Written atomically: a reader sees the previous content
// or the new one, never part of it.
#ifndef MTSERVE_SERVER_READY_FILE_H_
#define MTSERVE_SERVER_READY_FILE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mtserve {

// The ports a server listens on; none: that listener is off.
struct ReadyPorts {
  std::optional<int> grpc;
  std::optional<int> http;
  std::optional<int> metrics;
};

// {"state": STATE, "grpc": PORT, "http": PORT, "metrics": PORT} on one line, null for a listener
// that is off.
std::string ReadyFileContent(absl::string_view state, const ReadyPorts& ports);

// Writes `content` to `path` atomically: into a new temporary file in the same directory
// (readable by all, as the file it replaces), flushed to disk (fsync), then renamed over `path`.
// On an error (naming the file and the call that failed) `path` is unchanged and no temporary
// file is left.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view content);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_READY_FILE_H_
