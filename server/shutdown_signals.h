// SIGTERM and SIGINT for a server: taken by one thread with sigwait (blocked in every other
// thread, so none is interrupted mid-call), and acted on according to the server's phase. While
// models load, a signal stops the process at once (nothing is being served, and a load can take
// minutes); once serving, it asks the server to drain. SIGHUP is taken the same way and asks for
// the files the server re-reads (certificates, API keys) to be read now (OnHangup).
#ifndef MTSERVE_SERVER_SHUTDOWN_SIGNALS_H_
#define MTSERVE_SERVER_SHUTDOWN_SIGNALS_H_

#include <functional>
#include <memory>

namespace mtserve {

class ShutdownSignals {
 public:
  // Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (construct this before starting any
  // other thread: threads inherit the mask) and starts watching for them. Until Serving(), a signal
  // calls `while_loading(signal)`, on the watching thread.
  explicit ShutdownSignals(std::function<void(int signal)> while_loading);

  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  // Calls `reload` on the watching thread at each SIGHUP from now on (before: SIGHUP is ignored).
  void OnHangup(std::function<void()> reload);

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
