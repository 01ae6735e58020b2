// SIGTERM and SIGINT for a server: taken by one thread with sigwait (blocked in every other
// thread, so none is interrupted mid-call), and acted on according to the server's phase. While
// models load, a signal stops the process at once (nothing is being served, and a load can take
// minutes); once serving, it asks the server to drain. SIGHUP is taken the same way and asks for
// the files the server re-reads (certificates, API keys) to be read now (OnHangup), at most once
// per kHangupGap (hangup_throttle.h: a burst of SIGHUPs is one reload per gap, never one each).
#ifndef MTSERVE_SERVER_SHUTDOWN_SIGNALS_H_
#define MTSERVE_SERVER_SHUTDOWN_SIGNALS_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"

namespace mtserve {

// The shortest time between two reloads asked for by SIGHUP.
inline constexpr absl::Duration kHangupGap = absl::Seconds(1);

class ShutdownSignals {
 public:
  // Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (construct this before starting any
  // other thread: threads inherit the mask) and starts watching for them. Until Serving(), a signal
  // calls `while_loading(signal)`, on the watching thread.
  explicit ShutdownSignals(std::function<void(int signal)> while_loading);

  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  // Calls `reload(signals)` on the watching thread for the SIGHUPs from now on (before: SIGHUP is
  // ignored): at once for the first, then at most once per kHangupGap, `signals` being how many
  // SIGHUPs arrived since the previous call (at least 1).
  void OnHangup(std::function<void(int signals)> reload);

  // From now on a signal is a request to shut down, which WaitForShutdown returns.
  void Serving();
  // Blocks until SIGTERM or SIGINT arrives after Serving(), and returns it.
  int WaitForShutdown();

 private:
  // Shared with the watching thread, which outlives this object (it waits in sigwait until the
  // process ends).
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_SHUTDOWN_SIGNALS_H_
