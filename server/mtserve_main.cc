// mtserve: the translation server, over gRPC and HTTP. Starts answering health checks
// (NOT_SERVING) at once, loads the models, serves, and on SIGTERM or SIGINT drains: health goes
// NOT_SERVING, new requests get UNAVAILABLE, requests in flight finish within --shutdown_grace,
// then it exits 0. The flags are in server_flags.cc, the wiring and the lifecycle in server.cc.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/server.h"
#include "server/server_flags.h"
#include "server/shutdown_signals.h"

namespace mtserve {
namespace {

// Start-up failed: says why and ends the process at once with status 1. Nothing has been served
// yet, so nothing drains and nothing needs stopping in order.
[[noreturn]] void Fail(const absl::Status& status) {
  std::fprintf(stderr, "mtserve: %s\n", std::string(status.message()).c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

int Run(int argc, char** argv) {
  // Before any other thread starts (they inherit its signal mask). While models load there is
  // nothing to drain, and a load can take minutes (or wait on a slow disk): stop at once.
  ShutdownSignals signals([](int signal) {
    std::fprintf(stderr, "mtserve: %s while loading models; exiting\n", strsignal(signal));
    std::fflush(stderr);
    std::_Exit(128 + signal);
  });
  const absl::StatusOr<ServerConfig> config = ParseServerFlags(argc, argv);
  if (!config.ok()) Fail(config.status());

  // A fixed threshold: buffers of 128 KiB or more are mapped on their own and returned to the
  // system when freed, instead of growing glibc's per-thread arenas (which then never shrink).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);

  Server server;
  if (absl::Status status = server.Start(*config); !status.ok()) Fail(status);
  signals.OnHangup(server.HangupHandler());
  if (absl::Status status = server.LoadModels(); !status.ok()) Fail(status);
  signals.Serving();  // Signals drain from now on.
  if (absl::Status status = server.Serve(); !status.ok()) Fail(status);
  server.Drain(signals.WaitForShutdown());
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) { return mtserve::Run(argc, argv); }
