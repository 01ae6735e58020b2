// The model repository's threads, lock and waiting requests (model_repository.h). What to unload
// for a load is ModelBudget's (model_budget.h).
//
// Two threads of the repository's own, whatever the number of requests:
// - the loader thread loads the queued slots one at a time, first asked first loaded: it asks
//   the budget what to unload, unloads it (calling `unloaded`), loads, and answers the slot's
//   waiting requests with the load's result. When the models with leases leave no room it waits
//   for a lease to end (or the queue to change). It also unloads the models of retired slots,
//   and those an operator's Unload left, once their last lease ended.
// - the deadline thread answers waiting requests whose deadline passed, so that they are
//   answered on time even while a load is under way. It sleeps until the earliest deadline or
//   until a request comes.
// `ready` callbacks, the loader, `measure` and `unloaded` never run under the lock.
#include "serving/repository/model_repository.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "serving/repository/model_budget.h"

namespace mtserve {

using LeaseOr = absl::StatusOr<std::unique_ptr<ModelRepository::Lease>>;

struct ModelRepository::State_ {
  // A request waiting for a slot's model.
  struct Waiter {
    absl::Time deadline;
    Ready ready;
    // LoadNow's: answered UNAVAILABLE at once when the budget has no room rather than waiting.
    bool fail_without_room = false;
  };
  struct SlotState {
    // kLoading from the first request for it until its load ends (queued, waiting for room, or
    // being loaded).
    State state = State::kAvailable;
    std::shared_ptr<const Model> model;  // kLoaded.
    int64_t resident_bytes = 0;          // kLoaded: measured.
    int leases = 0;
    absl::Time last_used = absl::InfinitePast();
    absl::Status failure;         // kFailed.
    absl::Time failed_at;         // kFailed.
    bool retired = false;         // Retire: no longer served; unloaded once its leases end.
    bool unload_pending = false;  // kLoaded: Unload waits for its leases to end.
    std::vector<Waiter> waiters;
  };
  // A `ready` to call, outside the lock.
  struct Answer {
    Ready ready;
    LeaseOr lease;
  };

  State_(ModelRepository* repository, std::vector<Slot> made, Options options, Loader loader)
      : repository(repository),
        options(std::move(options)),
        budget(this->options.memory_budget),
        loader(std::move(loader)),
        slots(made.size()) {
    auto first = std::make_shared<Catalog>();
    for (size_t i = 0; i < made.size(); ++i) first->served.push_back(static_cast<int>(i));
    first->slots = std::move(made);
    catalog = std::move(first);
  }

  void RunLoader();
  void RunDeadlines();

  // Calls the answers' `ready`s (not under the lock), leaving `answers` empty.
  static void Deliver(std::vector<Answer>& answers) {
    for (Answer& answer : answers) {
      const Ready ready = std::move(answer.ready);  // Destroyed once called.
      ready(std::move(answer.lease));
    }
    answers.clear();
  }

  // Adds a waiter for `slot`, or answers it now (returned).
  std::optional<Answer> Enqueue(int slot, Waiter waiter);
  // Moves out every waiter whose deadline passed by `now`, with why, dropping the queued slots
  // left without waiters.
  void Expire(absl::Time now, std::vector<Answer>& answers) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Takes `slot` out of the queue (not being loaded, no waiters left).
  void Dequeue(int slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  std::vector<ModelBudget::SlotUse> Uses() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // What the budget says of loading the queue's first slot now.
  ModelBudget::Plan PlanFirst() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return budget.PlanLoad(Uses(), queue.front(), catalog->slots[queue.front()].estimated_bytes);
  }
  // A new lease of loaded `slot` at `now`.
  std::unique_ptr<Lease> NewLease(int slot, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The load of `slot` ended with `model` (measured at `bytes`): its waiters' answers.
  void FinishLoad(int slot, absl::StatusOr<std::shared_ptr<const Model>> model, int64_t bytes,
                  std::vector<Answer>& answers) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // A retired slot, or one an operator's Unload waits for, with no leases: its model to unload,
  // on the loader thread.
  void UnloadWhenIdle(int slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const SlotState& s = slots[slot];
    if ((s.retired || s.unload_pending) && s.state == State::kLoaded && s.leases == 0) {
      retired_idle.push_back(slot);
      work.Signal();
    }
  }

  std::string Name(int slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return catalog->slots[slot].name;
  }
  absl::Status Retired(int slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return absl::UnavailableError(absl::StrCat("model ", Name(slot),
                                               " was replaced or removed as the request came; "
                                               "retry"));
  }
  std::string Budget() const {
    return absl::StrCat("--model_memory=", AbslUnparseFlag(ByteSize{options.memory_budget}));
  }
  absl::Status NoRoom(int slot, absl::string_view when) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return absl::UnavailableError(absl::StrCat("no room for model ", Name(slot), " (about ",
                                               FormatBytes(catalog->slots[slot].estimated_bytes),
                                               ") ", when, ": the models in use fill ", Budget()));
  }

  ModelRepository* const repository;
  const Options options;
  const ModelBudget budget;
  const Loader loader;

  mutable absl::Mutex mu;
  absl::CondVar work;       // The loader thread's: the queue changed, a lease ended, stopping.
  absl::CondVar deadlines;  // The deadline thread's: a waiter came, stopping.
  std::shared_ptr<const Catalog> catalog ABSL_GUARDED_BY(mu);
  std::vector<SlotState> slots ABSL_GUARDED_BY(mu);
  std::vector<int> retired_idle ABSL_GUARDED_BY(mu);  // Retired slots to unload (UnloadWhenIdle).
  std::deque<int> queue ABSL_GUARDED_BY(mu);          // Slots to load, first asked first.
  int loading ABSL_GUARDED_BY(mu) = -1;               // The slot being loaded.
  bool stopping ABSL_GUARDED_BY(mu) = false;

  std::thread loader_thread;
  std::thread deadline_thread;
};

namespace {

// InvalidArgument naming the model, its size and the flag when `slot` cannot fit `budget` alone.
absl::Status CheckFits(const ModelRepository::Slot& slot, int64_t budget) {
  if (slot.estimated_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", slot.name, ": negative estimated size"));
  }
  if (!ModelBudget(budget).FitsAlone(slot.estimated_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", slot.name, " needs about ", FormatBytes(slot.estimated_bytes),
                     " (estimated), more than --model_memory=", AbslUnparseFlag(ByteSize{budget})));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Create(std::vector<Slot> slots,
                                                                         Options options,
                                                                         Loader loader) {
  if (options.memory_budget < 0) {
    return absl::InvalidArgumentError("--model_memory must not be negative");
  }
  if (loader == nullptr) return absl::InvalidArgumentError("the model repository needs a loader");
  for (const Slot& slot : slots) MT_RETURN_IF_ERROR(CheckFits(slot, options.memory_budget));
  return std::unique_ptr<ModelRepository>(
      new ModelRepository(std::move(slots), std::move(options), std::move(loader)));
}

ModelRepository::ModelRepository(std::vector<Slot> slots, Options options, Loader loader)
    : state_(
          std::make_unique<State_>(this, std::move(slots), std::move(options), std::move(loader))) {
  state_->loader_thread = std::thread([state = state_.get()] { state->RunLoader(); });
  state_->deadline_thread = std::thread([state = state_.get()] { state->RunDeadlines(); });
}

ModelRepository::~ModelRepository() {
  // Every waiting request is answered at once, even one waiting for a load under way (which the
  // loader thread finishes, its model unused, before it stops).
  std::vector<State_::Answer> answers;
  {
    absl::MutexLock lock(&state_->mu);
    state_->stopping = true;
    state_->work.SignalAll();
    state_->deadlines.SignalAll();
    for (State_::SlotState& slot : state_->slots) {
      for (State_::Waiter& waiter : slot.waiters) {
        answers.push_back(
            {std::move(waiter.ready), absl::UnavailableError("the server is shutting down")});
      }
      slot.waiters.clear();
    }
    state_->queue.clear();
  }
  State_::Deliver(answers);
  state_->loader_thread.join();
  state_->deadline_thread.join();
}

ModelRepository::Lease::~Lease() { repository_->Release(slot_); }

void ModelRepository::Release(int slot) {
  State_& state = *state_;
  absl::MutexLock lock(&state.mu);
  State_::SlotState& s = state.slots[slot];
  --s.leases;
  s.last_used = state.options.clock();
  state.UnloadWhenIdle(slot);
  // The queue's first slot may have been waiting for room.
  if (s.leases == 0 && !state.queue.empty()) state.work.Signal();
}

void ModelRepository::Acquire(int slot, absl::Time deadline, Ready ready) {
  std::optional<State_::Answer> answer =
      state_->Enqueue(slot, State_::Waiter{deadline, std::move(ready)});
  if (answer.has_value()) answer->ready(std::move(answer->lease));
}

absl::Status ModelRepository::LoadNow(int slot) {
  absl::Notification done;
  absl::Status status;
  Load(slot, absl::InfiniteFuture(), [&status, &done](absl::Status loaded) {
    status = std::move(loaded);
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

void ModelRepository::Load(int slot, absl::Time deadline, std::function<void(absl::Status)> done) {
  Ready ready = [done = std::move(done)](LeaseOr lease) {
    const absl::Status status = lease.status();
    lease = LeaseOr(std::unique_ptr<Lease>());  // Ends the lease before `done` hears of it.
    done(status);
  };
  std::optional<State_::Answer> answer =
      state_->Enqueue(slot, State_::Waiter{deadline, std::move(ready), /*fail_without_room=*/true});
  if (answer.has_value()) answer->ready(std::move(answer->lease));
}

absl::Status ModelRepository::Unload(int slot) {
  State_& state = *state_;
  std::shared_ptr<const Model> model;
  int64_t bytes = 0;
  {
    absl::MutexLock lock(&state.mu);
    if (slot < 0 || slot >= static_cast<int>(state.slots.size())) {
      return absl::InvalidArgumentError(absl::StrCat("no model slot ", slot));
    }
    State_::SlotState& s = state.slots[slot];
    if (s.state == State::kLoading) {
      return absl::FailedPreconditionError(
          absl::StrCat("model ", state.Name(slot), " is loading; unload it once it is loaded"));
    }
    if (s.state != State::kLoaded) return absl::OkStatus();
    if (s.leases > 0) {
      s.unload_pending = true;  // Its last lease's end unloads it (UnloadWhenIdle).
      return absl::OkStatus();
    }
    bytes = s.resident_bytes;
    model = std::move(s.model);
    s.model = nullptr;
    s.state = State::kAvailable;
    s.resident_bytes = 0;
    // The queue's first slot may have been waiting for room.
    if (!state.queue.empty()) state.work.Signal();
  }
  model.reset();
  // Here rather than on the loader thread, so that the model is gone when Unload returns (if a
  // request loads it again meanwhile, the engines only rebuild what they keep of it).
  if (state.options.unloaded != nullptr) state.options.unloaded(slot, bytes);
  return absl::OkStatus();
}

std::shared_ptr<const ModelRepository::Catalog> ModelRepository::catalog() const {
  absl::MutexLock lock(&state_->mu);
  return state_->catalog;
}

absl::StatusOr<int> ModelRepository::Add(Slot slot, int replaces) {
  MT_RETURN_IF_ERROR(CheckFits(slot, state_->options.memory_budget));
  {
    absl::MutexLock lock(&state_->mu);
    auto next = std::make_shared<Catalog>(*state_->catalog);
    const int index = static_cast<int>(next->slots.size());
    next->slots.push_back(std::move(slot));
    const auto place = std::find(next->served.begin(), next->served.end(), replaces);
    if (replaces >= 0 && place != next->served.end()) {
      *place = index;
    } else {
      next->served.push_back(index);
    }
    state_->catalog = std::move(next);
    state_->slots.emplace_back();
    if (replaces < 0) return index;
  }
  Retire(replaces);
  absl::MutexLock lock(&state_->mu);
  return static_cast<int>(state_->slots.size()) - 1;
}

void ModelRepository::Retire(int slot) {
  std::vector<State_::Answer> answers;
  {
    absl::MutexLock lock(&state_->mu);
    if (slot < 0 || slot >= static_cast<int>(state_->slots.size())) return;
    State_::SlotState& s = state_->slots[slot];
    if (s.retired) return;
    s.retired = true;
    const std::vector<int>& served = state_->catalog->served;
    if (std::find(served.begin(), served.end(), slot) != served.end()) {
      auto next = std::make_shared<Catalog>(*state_->catalog);
      next->served.erase(std::find(next->served.begin(), next->served.end(), slot));
      state_->catalog = std::move(next);
    }
    // Not loaded yet and not being loaded: its waiters go (its files may be half replaced).
    if (s.state == State::kLoading && state_->loading != slot) {
      for (State_::Waiter& waiter : s.waiters) {
        answers.push_back({std::move(waiter.ready), state_->Retired(slot)});
      }
      s.waiters.clear();
      state_->Dequeue(slot);
    }
    state_->UnloadWhenIdle(slot);
  }
  State_::Deliver(answers);
}

int64_t ModelRepository::memory_budget() const { return state_->budget.budget_bytes(); }

std::shared_ptr<const Model> ModelRepository::Loaded(int slot) const {
  absl::MutexLock lock(&state_->mu);
  if (slot < 0 || slot >= static_cast<int>(state_->slots.size())) return nullptr;
  return state_->slots[slot].model;
}

ModelRepository::SlotStatus ModelRepository::status(int slot) const {
  absl::MutexLock lock(&state_->mu);
  const State_::SlotState& s = state_->slots.at(slot);
  SlotStatus status;
  status.state = s.state;
  if (s.state == State::kFailed) status.failure = std::string(s.failure.message());
  status.resident_bytes = s.state == State::kLoaded ? s.resident_bytes : 0;
  status.leases = s.leases;
  status.unload_pending = s.state == State::kLoaded && s.unload_pending;
  return status;
}

int64_t ModelRepository::resident_bytes() const {
  absl::MutexLock lock(&state_->mu);
  int64_t bytes = 0;
  for (const State_::SlotState& s : state_->slots) {
    if (s.state == State::kLoaded) bytes += s.resident_bytes;
  }
  return bytes;
}

std::optional<ModelRepository::State_::Answer> ModelRepository::State_::Enqueue(int slot,
                                                                                Waiter waiter) {
  absl::MutexLock lock(&mu);
  if (stopping) {
    return Answer{std::move(waiter.ready), absl::UnavailableError("the server is shutting down")};
  }
  if (slot < 0 || slot >= static_cast<int>(slots.size())) {
    return Answer{std::move(waiter.ready),
                  absl::InvalidArgumentError(absl::StrCat("no model slot ", slot))};
  }
  SlotState& s = slots[slot];
  const absl::Time now = options.clock();
  if (s.state == State::kLoaded) return Answer{std::move(waiter.ready), NewLease(slot, now)};
  if (s.retired) return Answer{std::move(waiter.ready), Retired(slot)};
  if (s.state == State::kFailed && now < s.failed_at + options.retry_after_failure) {
    return Answer{std::move(waiter.ready), s.failure};
  }
  if (waiter.deadline <= now) {
    return Answer{std::move(waiter.ready),
                  absl::DeadlineExceededError(absl::StrCat("the deadline passed before model ",
                                                           Name(slot), " was loaded"))};
  }
  if (s.state != State::kLoading) {
    s.state = State::kLoading;
    s.failure = absl::OkStatus();
    queue.push_back(slot);
  }
  // A new slot to load, or LoadNow's waiter for a slot waiting for room.
  work.Signal();
  if (waiter.deadline != absl::InfiniteFuture()) deadlines.Signal();
  s.waiters.push_back(std::move(waiter));
  return std::nullopt;
}

std::unique_ptr<ModelRepository::Lease> ModelRepository::State_::NewLease(int slot,
                                                                          absl::Time now) {
  SlotState& s = slots[slot];
  ++s.leases;
  s.last_used = now;
  return std::unique_ptr<Lease>(new Lease(repository, slot, s.model));
}

std::vector<ModelBudget::SlotUse> ModelRepository::State_::Uses() const {
  std::vector<ModelBudget::SlotUse> uses(slots.size());
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    const SlotState& s = slots[i];
    if (s.state == State::kLoaded) {
      uses[i].kind = ModelBudget::SlotUse::Kind::kLoaded;
      uses[i].bytes = s.resident_bytes;
      uses[i].leases = s.leases;
      uses[i].last_used = s.last_used;
    } else if (i == loading) {
      uses[i].kind = ModelBudget::SlotUse::Kind::kLoading;
      uses[i].bytes = catalog->slots[i].estimated_bytes;
    }
  }
  return uses;
}

void ModelRepository::State_::Dequeue(int slot) {
  queue.erase(std::find(queue.begin(), queue.end(), slot));
  slots[slot].state = State::kAvailable;
  work.Signal();
}

void ModelRepository::State_::Expire(absl::Time now, std::vector<Answer>& answers) {
  // Every queued slot waits behind the first one: when no load is under way and the first has
  // no room, they all wait for room (decided from the state, not from how far the loader thread
  // has come).
  const bool no_room =
      loading < 0 && !queue.empty() && PlanFirst().outcome == ModelBudget::Plan::Outcome::kNoRoom;
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    std::vector<Waiter>& waiters = slots[i].waiters;
    if (waiters.empty()) continue;
    const auto expired = std::stable_partition(waiters.begin(), waiters.end(),
                                               [now](const Waiter& w) { return w.deadline > now; });
    if (expired == waiters.end()) continue;
    const absl::Status why =
        i == loading ? absl::DeadlineExceededError(absl::StrCat("the deadline passed while model ",
                                                                Name(i), " was loading"))
        : no_room
            ? NoRoom(i, "by the deadline")
            : absl::DeadlineExceededError(absl::StrCat("the deadline passed while model ", Name(i),
                                                       " waited for another model's load"));
    for (auto it = expired; it != waiters.end(); ++it)
      answers.push_back({std::move(it->ready), why});
    waiters.erase(expired, waiters.end());
    if (waiters.empty() && i != loading) Dequeue(i);
  }
}

void ModelRepository::State_::FinishLoad(int slot,
                                         absl::StatusOr<std::shared_ptr<const Model>> model,
                                         int64_t bytes, std::vector<Answer>& answers) {
  loading = -1;
  const absl::Time now = options.clock();
  SlotState& s = slots[slot];
  if (model.ok()) {
    s.state = State::kLoaded;
    s.model = *std::move(model);
    s.resident_bytes = bytes;
    s.last_used = now;
  } else {
    s.state = State::kFailed;
    s.failure = model.status();
    s.failed_at = now;
  }
  if (stopping) return;  // The destructor answers the waiters.
  for (Waiter& waiter : s.waiters) {
    if (!model.ok()) {
      answers.push_back({std::move(waiter.ready), s.failure});
    } else if (waiter.deadline <= now) {
      answers.push_back({std::move(waiter.ready),
                         absl::DeadlineExceededError(absl::StrCat(
                             "the deadline passed while model ", Name(slot), " was loading"))});
    } else {
      answers.push_back({std::move(waiter.ready), NewLease(slot, now)});
    }
  }
  s.waiters.clear();
  UnloadWhenIdle(slot);
}

void ModelRepository::State_::RunLoader() {
  std::vector<Answer> answers;
  mu.Lock();
  while (!stopping) {
    if (!retired_idle.empty()) {
      // Retired slots, and those an operator unloads, whose last lease ended (unless a request
      // took one again meanwhile).
      std::vector<std::pair<int, int64_t>> unloaded;
      std::vector<std::shared_ptr<const Model>> dropped;
      for (const int slot : retired_idle) {
        SlotState& s = slots[slot];
        if (s.state != State::kLoaded || s.leases > 0) continue;
        unloaded.push_back({slot, s.resident_bytes});
        dropped.push_back(std::move(s.model));
        s.model = nullptr;
        s.state = State::kAvailable;
        s.resident_bytes = 0;
        s.unload_pending = false;
      }
      retired_idle.clear();
      mu.Unlock();
      dropped.clear();
      if (options.unloaded != nullptr) {
        for (const auto& [slot, bytes] : unloaded) options.unloaded(slot, bytes);
      }
      mu.Lock();
      // Room was made for the queue's first slot, if it waited.
      continue;
    }
    if (queue.empty()) {
      work.Wait(&mu);
      continue;
    }
    const int slot = queue.front();
    const Slot what = catalog->slots[slot];
    const int64_t estimate = what.estimated_bytes;
    const ModelBudget::Plan plan = PlanFirst();
    if (plan.outcome == ModelBudget::Plan::Outcome::kNoRoom) {
      std::vector<Waiter>& waiters = slots[slot].waiters;
      const auto refused = std::stable_partition(
          waiters.begin(), waiters.end(), [](const Waiter& w) { return !w.fail_without_room; });
      for (auto it = refused; it != waiters.end(); ++it) {
        answers.push_back({std::move(it->ready), NoRoom(slot, "now")});
      }
      waiters.erase(refused, waiters.end());
      if (waiters.empty()) Dequeue(slot);
      if (answers.empty()) {
        work.Wait(&mu);
      } else {
        mu.Unlock();
        Deliver(answers);
        mu.Lock();
      }
      continue;
    }

    // Unload what the budget says, then load.
    queue.pop_front();
    loading = slot;
    std::vector<std::shared_ptr<const Model>> dropped;
    std::vector<int64_t> unloaded_bytes;
    for (int unload : plan.unload) {
      unloaded_bytes.push_back(slots[unload].resident_bytes);
      dropped.push_back(std::move(slots[unload].model));
      slots[unload].model = nullptr;
      slots[unload].state = State::kAvailable;
      slots[unload].resident_bytes = 0;
      slots[unload].unload_pending = false;
    }
    mu.Unlock();

    dropped.clear();
    if (options.unloaded != nullptr) {
      for (size_t k = 0; k < plan.unload.size(); ++k) {
        options.unloaded(plan.unload[k], unloaded_bytes[k]);
      }
    }
    absl::StatusOr<std::shared_ptr<const Model>> model = loader(what);
    if (model.ok() && *model == nullptr) {
      model = absl::InternalError(absl::StrCat("the loader gave no model for ", what.name));
    }
    int64_t bytes = estimate;
    if (model.ok() && options.measure != nullptr) bytes = options.measure(**model);

    mu.Lock();
    FinishLoad(slot, std::move(model), bytes, answers);
    mu.Unlock();
    Deliver(answers);
    mu.Lock();
  }
  mu.Unlock();
}

void ModelRepository::State_::RunDeadlines() {
  std::vector<Answer> answers;
  mu.Lock();
  while (!stopping) {
    const absl::Time now = options.clock();
    Expire(now, answers);
    if (!answers.empty()) {
      mu.Unlock();
      Deliver(answers);
      mu.Lock();
      continue;
    }
    absl::Time earliest = absl::InfiniteFuture();
    for (const SlotState& s : slots) {
      for (const Waiter& w : s.waiters) earliest = std::min(earliest, w.deadline);
    }
    if (earliest == absl::InfiniteFuture()) {
      deadlines.Wait(&mu);
    } else {
      deadlines.WaitWithTimeout(&mu, earliest - now);
    }
  }
  mu.Unlock();
}

}  // namespace mtserve
