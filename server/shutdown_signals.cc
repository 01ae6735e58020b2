#include "server/shutdown_signals.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/hangup_throttle.h"

namespace mtserve {

struct ShutdownSignals::State {
  explicit State(std::function<void(int)> while_loading)
      : while_loading(std::move(while_loading)) {}
  const std::function<void(int)> while_loading;
  absl::Mutex mutex;
  bool serving ABSL_GUARDED_BY(mutex) = false;
  int received ABSL_GUARDED_BY(mutex) = 0;
  std::function<void(int)> on_hangup ABSL_GUARDED_BY(mutex);
};

namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

// For the reload throttle, which compares times only: a clock that never jumps.
absl::Time MonotonicNow() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return absl::TimeFromTimespec(now);
}

}  // namespace

ShutdownSignals::ShutdownSignals(std::function<void(int signal)> while_loading)
    : state_(std::make_shared<State>(std::move(while_loading))) {
  const sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([state = state_] {
    const sigset_t set = ShutdownSet();
    HangupThrottle hangups(kHangupGap);
    while (true) {
      // Waits for a signal, or until the reload of SIGHUPs held back is due.
      int signal = 0;
      if (const absl::Time due = hangups.Due(); due == absl::InfiniteFuture()) {
        if (sigwait(&set, &signal) != 0) continue;
      } else {
        const timespec timeout =
            absl::ToTimespec(std::max(due - MonotonicNow(), absl::ZeroDuration()));
        signal = sigtimedwait(&set, nullptr, &timeout);  // -1 (EAGAIN) when due, or EINTR.
      }
      if (signal == SIGHUP) hangups.Signal();
      if (const int signals = hangups.TakeDue(MonotonicNow()); signals > 0) {
        std::function<void(int)> reload;
        {
          absl::MutexLock lock(&state->mutex);
          reload = state->on_hangup;
        }
        if (reload) reload(signals);
      }
      if (signal != SIGTERM && signal != SIGINT) continue;
      bool serving;
      {
        absl::MutexLock lock(&state->mutex);
        serving = state->serving;
        if (serving && state->received == 0) state->received = signal;
      }
      if (!serving) state->while_loading(signal);
    }
  }).detach();
}

void ShutdownSignals::OnHangup(std::function<void(int signals)> reload) {
  absl::MutexLock lock(&state_->mutex);
  state_->on_hangup = std::move(reload);
}

void ShutdownSignals::Serving() {
  absl::MutexLock lock(&state_->mutex);
  state_->serving = true;
}

int ShutdownSignals::WaitForShutdown() {
  absl::MutexLock lock(&state_->mutex);
  state_->mutex.Await(absl::Condition(
      +[](int* received) { return *received != 0; }, &state_->received));
  return state_->received;
}

}  // namespace mtserve
