// ThreadSanitizer's view of absl::Mutex, absl::CondVar and absl::Notification, for the
// MTSERVE_SANITIZE=thread build only.
//
// TSan sees synchronisation in code it instrumented and in the libc functions it intercepts.
// Abseil announces its Mutex to TSan (__tsan_mutex_* calls) only when Abseil itself is built
// with -fsanitize=thread, and Debian's is not: to TSan, every absl::Mutex is invisible and
// every access to the data it guards a race. This file defines the public locking functions
// in the executable, which interposes them on libabsl_synchronization's (the executable comes
// first in the global scope, so our code and gRPC's calls land here): each one announces the
// lock or unlock to TSan around a call of Abseil's own function, found with
// dlsym(RTLD_NEXT). A wait (Await, CondVar::Wait, ...) releases the mutex and takes it again:
// it is announced as an unlock before and a lock after. Between a pre- and a post-
// announcement TSan ignores accesses, so the conditions Abseil evaluates inside are unchecked,
// as they are under Abseil's own annotations.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

#define MTSERVE_STRINGIFY(x) #x
#define MTSERVE_STRING(x) MTSERVE_STRINGIFY(x)

// Abseil's definition of `member` of `type_name` (mangled after the class: "4LockEv" for
// Mutex::Lock(); `qualifier` "K" for a const member, else ""); aborts if it is missing, since
// running on without it would be wrong.
void* AbseilFunction(const char* qualifier, const char* type_name, const char* member) {
  const std::string inline_namespace = MTSERVE_STRING(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string mangled = std::string("_ZN") + qualifier + "4absl" +
                              std::to_string(inline_namespace.size()) + inline_namespace +
                              std::to_string(std::strlen(type_name)) + type_name + member;
  void* function = dlsym(RTLD_NEXT, mangled.c_str());
  if (function == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found: %s\n", mangled.c_str(), dlerror());
    std::abort();
  }
  return function;
}

// `real`: Abseil's `type_name::member` of type `Signature`, looked up once (_CONST: a const
// member).
#define MTSERVE_REAL(Signature, type_name, member) \
  static const auto real = reinterpret_cast<Signature>(AbseilFunction("", type_name, member))
#define MTSERVE_REAL_CONST(Signature, type_name, member) \
  static const auto real = reinterpret_cast<Signature>(AbseilFunction("K", type_name, member))

// Abseil's functions call each other through the PLT (CondVar::WaitWithTimeout calls
// WaitWithDeadline), so they land here too: only the outermost call on a thread is announced.
thread_local int abseil_calls = 0;

// Runs `call` (one of Abseil's functions) with `before` and `after` announced around it, unless
// this thread is already inside one.
template <typename Call, typename Before, typename After>
auto Announced(Call call, Before before, After after) {
  if (abseil_calls > 0) return call();
  before();
  ++abseil_calls;
  const auto result = call();
  --abseil_calls;
  after(result);
  return result;
}

// Runs the wait `wait` (which needs `mutex` held, releases it and takes it again before it
// returns) as TSan's unlock of `mutex` then its lock.
template <typename Wait>
auto AsUnlockThenLock(absl::Mutex* mutex, unsigned lock_flags, Wait wait) {
  return Announced(
      wait, [&] { __tsan_mutex_pre_unlock(mutex, lock_flags); },
      [&](auto) {
        __tsan_mutex_post_unlock(mutex, lock_flags);
        __tsan_mutex_pre_lock(mutex, lock_flags);
        __tsan_mutex_post_lock(mutex, lock_flags, 0);
      });
}

// Runs `lock` (which returns holding `mutex`) as TSan's lock of it.
template <typename Lock>
auto AsLock(absl::Mutex* mutex, unsigned lock_flags, Lock lock) {
  return Announced(
      lock, [&] { __tsan_mutex_pre_lock(mutex, lock_flags); },
      [&](auto) { __tsan_mutex_post_lock(mutex, lock_flags, 0); });
}

// Runs the try-lock `try_lock` as TSan's try-lock of `mutex`.
template <typename TryLock>
bool AsTryLock(absl::Mutex* mutex, unsigned lock_flags, TryLock try_lock) {
  return Announced(
      try_lock, [&] { __tsan_mutex_pre_lock(mutex, lock_flags | __tsan_mutex_try_lock); },
      [&](bool locked) {
        __tsan_mutex_post_lock(
            mutex, lock_flags | __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed),
            0);
      });
}

// Runs `unlock` as TSan's unlock of `mutex`.
template <typename Unlock>
void AsUnlock(absl::Mutex* mutex, unsigned lock_flags, Unlock unlock) {
  Announced([&] { return (unlock(), 0); }, [&] { __tsan_mutex_pre_unlock(mutex, lock_flags); },
            [&](int) { __tsan_mutex_post_unlock(mutex, lock_flags); });
}

constexpr unsigned kWriter = 0;
constexpr unsigned kReader = __tsan_mutex_read_lock;

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

Mutex::~Mutex() {
  MTSERVE_REAL(void (*)(Mutex*), "Mutex", "D2Ev");
  __tsan_mutex_destroy(this, 0);
  real(this);
}

void Mutex::Lock() {
  MTSERVE_REAL(void (*)(Mutex*), "Mutex", "4LockEv");
  AsLock(this, kWriter, [&] { return (real(this), 0); });
}

void Mutex::ReaderLock() {
  MTSERVE_REAL(void (*)(Mutex*), "Mutex", "10ReaderLockEv");
  AsLock(this, kReader, [&] { return (real(this), 0); });
}

bool Mutex::TryLock() {
  MTSERVE_REAL(bool (*)(Mutex*), "Mutex", "7TryLockEv");
  return AsTryLock(this, kWriter, [&] { return real(this); });
}

bool Mutex::ReaderTryLock() {
  MTSERVE_REAL(bool (*)(Mutex*), "Mutex", "13ReaderTryLockEv");
  return AsTryLock(this, kReader, [&] { return real(this); });
}

void Mutex::Unlock() {
  MTSERVE_REAL(void (*)(Mutex*), "Mutex", "6UnlockEv");
  AsUnlock(this, kWriter, [&] { real(this); });
}

void Mutex::ReaderUnlock() {
  MTSERVE_REAL(void (*)(Mutex*), "Mutex", "12ReaderUnlockEv");
  AsUnlock(this, kReader, [&] { real(this); });
}

void Mutex::LockWhen(const Condition& cond) {
  MTSERVE_REAL(void (*)(Mutex*, const Condition&), "Mutex", "8LockWhenERKNS0_9ConditionE");
  AsLock(this, kWriter, [&] { return (real(this, cond), 0); });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  MTSERVE_REAL(void (*)(Mutex*, const Condition&), "Mutex", "14ReaderLockWhenERKNS0_9ConditionE");
  AsLock(this, kReader, [&] { return (real(this, cond), 0); });
}

// The timed LockWhen functions return holding the mutex whether or not the condition holds.
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Duration), "Mutex",
               "19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AsLock(this, kWriter, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Time), "Mutex",
               "20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AsLock(this, kWriter, [&] { return real(this, cond, deadline); });
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Duration), "Mutex",
               "25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AsLock(this, kReader, [&] { return real(this, cond, timeout); });
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Time), "Mutex",
               "26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AsLock(this, kReader, [&] { return real(this, cond, deadline); });
}

// Await is called holding the mutex as a writer (Abseil's rule for it).
void Mutex::Await(const Condition& cond) {
  MTSERVE_REAL(void (*)(Mutex*, const Condition&), "Mutex", "5AwaitERKNS0_9ConditionE");
  AsUnlockThenLock(this, kWriter, [&] { return (real(this, cond), 0); });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Duration), "Mutex",
               "16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AsUnlockThenLock(this, kWriter, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  MTSERVE_REAL(bool (*)(Mutex*, const Condition&, Time), "Mutex",
               "17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AsUnlockThenLock(this, kWriter, [&] { return real(this, cond, deadline); });
}

void CondVar::Wait(Mutex* mu) {
  MTSERVE_REAL(void (*)(CondVar*, Mutex*), "CondVar", "4WaitEPNS0_5MutexE");
  AsUnlockThenLock(mu, kWriter, [&] { return (real(this, mu), 0); });
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  MTSERVE_REAL(bool (*)(CondVar*, Mutex*, Duration), "CondVar",
               "15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  return AsUnlockThenLock(mu, kWriter, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  MTSERVE_REAL(bool (*)(CondVar*, Mutex*, Time), "CondVar",
               "16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  return AsUnlockThenLock(mu, kWriter, [&] { return real(this, mu, deadline); });
}

// A Notification is an atomic flag read without its mutex once set: Notify releases, every
// wait that returns having seen it acquires.
void Notification::Notify() {
  MTSERVE_REAL(void (*)(Notification*), "Notification", "6NotifyEv");
  Announced([&] { return (real(this), 0); }, [&] { __tsan_release(this); }, [](int) {});
}

void Notification::WaitForNotification() const {
  MTSERVE_REAL_CONST(void (*)(const Notification*), "Notification", "19WaitForNotificationEv");
  Announced([&] { return (real(this), 0); }, [] {},
            [&](int) { __tsan_acquire(const_cast<Notification*>(this)); });
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  MTSERVE_REAL_CONST(bool (*)(const Notification*, Duration), "Notification",
                     "30WaitForNotificationWithTimeoutENS0_8DurationE");
  return Announced([&] { return real(this, timeout); }, [] {},
                   [&](bool notified) {
                     if (notified) __tsan_acquire(const_cast<Notification*>(this));
                   });
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  MTSERVE_REAL_CONST(bool (*)(const Notification*, Time), "Notification",
                     "31WaitForNotificationWithDeadlineENS0_4TimeE");
  return Announced([&] { return real(this, deadline); }, [] {},
                   [&](bool notified) {
                     if (notified) __tsan_acquire(const_cast<Notification*>(this));
                   });
}

ABSL_NAMESPACE_END
}  // namespace absl
