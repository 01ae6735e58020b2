// Test helpers for integration tests against real processes: a child process (mtserve) whose
// stderr is captured and which is always killed and reaped on destruction, an mtserve whose ports
// and state are read from its --ready_file, a one-shot command runner (mttranslate), a minimal
// HTTP GET for /metrics and a Prometheus text-format reader.
//
// Header-only, POSIX (Linux) only. Timeouts here are safety nets against hangs, never assertions
// about speed.
#ifndef MTSERVE_TESTS_E2E_SERVER_PROCESS_H_
#define MTSERVE_TESTS_E2E_SERVER_PROCESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace mtserve::testing {

namespace internal {

// argv for execv, built before fork() (nothing may allocate in the child).
class Argv {
 public:
  Argv(const std::string& binary, const std::vector<std::string>& args) : strings_{binary} {
    strings_.insert(strings_.end(), args.begin(), args.end());
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char* const* get() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// In the child, between fork() and exec(): only async-signal-safe calls. The child is killed if
// the forking thread dies (a crashed test leaves no server behind).
[[noreturn]] inline void ExecChild(char* const* argv, int stdin_fd, int stdout_fd, int stderr_fd,
                                   pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // The parent died before prctl().
  if (stdin_fd >= 0) dup2(stdin_fd, STDIN_FILENO);
  if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
  if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);
  // Close every other inherited descriptor (gRPC sockets, pipes of other children...).
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  execv(argv[0], argv);
  _exit(127);
}

inline std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return out;
}

}  // namespace internal

// A running child process with stderr captured through a pipe. The destructor SIGKILLs it if it
// is still running and reaps it.
class ChildProcess {
 public:
  ChildProcess(const std::string& binary, const std::vector<std::string>& args) {
    internal::Argv argv(binary, args);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) internal::ExecChild(argv.get(), -1, -1, fds[1], parent);
    close(fds[1]);
    stderr_fd_ = fds[0];
    reader_ = std::thread([this] { ReadStderr(); });
  }

  ~ChildProcess() {
    if (!exited()) {
      kill(pid_, SIGKILL);
      Reap(/*block=*/true);
    }
    if (reader_.joinable()) reader_.join();
    close(stderr_fd_);
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  bool Signal(int signal_number) { return !exited() && kill(pid_, signal_number) == 0; }

  // Whether the child has exited (reaps it if so).
  bool exited() {
    std::lock_guard<std::mutex> lock(wait_mutex_);
    if (!status_.has_value()) ReapLocked(/*block=*/false);
    return status_.has_value();
  }

  // The wait() status once the child exited within `timeout`. Also waits, within the same time,
  // for the reader to see stderr closed, so that StderrText() then holds all the child wrote
  // (right after the exit the last lines could still be in the pipe).
  std::optional<int> WaitForExit(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!exited()) {
      if (std::chrono::steady_clock::now() >= end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait_until(lock, end, [&] { return stderr_closed_; });
    }
    std::lock_guard<std::mutex> lock(wait_mutex_);
    return status_;
  }

  // Everything written to stderr so far.
  std::string StderrText() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stderr_;
  }

  // Waits (up to `timeout`) until everything the child has written to stderr so far is in
  // StderrText(): what it wrote before a file it wrote is seen, for instance.
  void CatchUpStderr(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        int unread = 0;
        if (stderr_closed_ || ioctl(stderr_fd_, FIONREAD, &unread) != 0 || unread == 0) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Waits until stderr matches `pattern` (ECMAScript regex), stderr is closed, or `timeout`
  // passes. The match and its groups ([0] is the whole match), or nullopt if none came.
  std::optional<std::vector<std::string>> WaitForStderr(const std::string& pattern,
                                                        std::chrono::milliseconds timeout) {
    const std::regex re(pattern);
    std::unique_lock<std::mutex> lock(mutex_);
    std::smatch match;
    const bool found = cv_.wait_for(
        lock, timeout, [&] { return std::regex_search(stderr_, match, re) || stderr_closed_; });
    if (!found || !std::regex_search(stderr_, match, re)) return std::nullopt;
    std::vector<std::string> groups;
    for (const auto& group : match) groups.push_back(group.str());
    return groups;
  }

 private:
  // Waits for data without the lock, then reads it with the lock held: whoever holds the lock
  // and finds the pipe empty knows that stderr_ holds everything written so far.
  void ReadStderr() {
    char buffer[4096];
    while (true) {
      pollfd readable{stderr_fd_, POLLIN, 0};
      if (poll(&readable, 1, -1) < 0 && errno == EINTR) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      const ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        stderr_closed_ = true;
        cv_.notify_all();
        return;
      }
      stderr_.append(buffer, static_cast<size_t>(n));
      cv_.notify_all();
    }
  }

  void Reap(bool block) {
    std::lock_guard<std::mutex> lock(wait_mutex_);
    ReapLocked(block);
  }
  void ReapLocked(bool block) {
    if (status_.has_value()) return;
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) status_ = status;
  }

  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  std::thread reader_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::string stderr_;
  bool stderr_closed_ = false;

  std::mutex wait_mutex_;
  std::optional<int> status_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with what it holds on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/mtserve_test_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An mtserve process on loopback ports chosen by the kernel, which it says in its --ready_file
// (in a directory of this object's).
class ServerProcess {
 public:
  // Starts `binary` with --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --http_listen=
  // --ready_file=... and `flags` (HTTP has tests of its own: tests/e2e/scripts/http_api_test.py),
  // and waits for the ready file, that is for the ports (not for the models: see
  // WaitUntilServing()). Throws if the server writes none (its stderr is in the message).
  ServerProcess(const std::string& binary, const std::vector<std::string>& flags,
                std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : ready_file_(dir_.path() + "/ready.json"),
        process_(binary, WithListenFlags(flags, ready_file_)) {
    const std::optional<nlohmann::json> ready = WaitForReadyFile("loading", timeout);
    if (!ready.has_value()) {
      throw std::runtime_error("mtserve wrote no ready file; stderr:\n" + process_.StderrText());
    }
    grpc_port_ = (*ready)["grpc"].get<int>();
    metrics_port_ = (*ready)["metrics"].is_null() ? 0 : (*ready)["metrics"].get<int>();
  }

  // Waits until the ready file says "serving"; false if it does not (the server failed or hung).
  bool WaitUntilServing(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return WaitForReadyFile("serving", timeout).has_value();
  }

  // The ready file as the server last wrote it; nullopt before it writes it.
  std::optional<nlohmann::json> ReadyFile() const {
    std::ifstream in(ready_file_);
    if (!in) return std::nullopt;
    return nlohmann::json::parse(in);  // Written atomically: whole or absent.
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_port_); }
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  ChildProcess& process() { return process_; }

 private:
  static std::vector<std::string> WithListenFlags(const std::vector<std::string>& flags,
                                                  const std::string& ready_file) {
    std::vector<std::string> all = {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                    "--http_listen=", "--ready_file=" + ready_file};
    all.insert(all.end(), flags.begin(), flags.end());
    return all;
  }

  // The ready file once it says `state` or a state after it (loading, serving, draining);
  // nullopt if the process exits or `timeout` passes first.
  std::optional<nlohmann::json> WaitForReadyFile(const std::string& state,
                                                 std::chrono::milliseconds timeout) {
    static const std::vector<std::string> kStates = {"loading", "serving", "draining"};
    auto rank = [&](const std::string& s) {
      return std::find(kStates.begin(), kStates.end(), s) - kStates.begin();
    };
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (true) {
      std::optional<nlohmann::json> ready = ReadyFile();
      if (ready.has_value() && rank((*ready)["state"].get<std::string>()) >= rank(state)) {
        process_.CatchUpStderr();  // What it printed before writing the file.
        return ready;
      }
      if (process_.exited() || std::chrono::steady_clock::now() >= end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  ScratchDir dir_;  // Outlives the process (destroyed after it).
  std::string ready_file_;
  ChildProcess process_;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
};

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal.
  std::string stdout_text;
};

// Runs `binary args` with `stdin_text` as its input to completion; captures stdout (stderr is
// inherited).
inline CommandResult RunCommand(const std::string& binary, const std::vector<std::string>& args,
                                const std::string& stdin_text) {
  internal::Argv argv(binary, args);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) internal::ExecChild(argv.get(), in[0], out[1], -1, parent);
  close(in[0]);
  close(out[1]);
  // Write in a thread so a child that answers before reading everything cannot deadlock us.
  std::thread writer([fd = in[1], &stdin_text] {
    signal(SIGPIPE, SIG_IGN);
    size_t done = 0;
    while (done < stdin_text.size()) {
      const ssize_t n = write(fd, stdin_text.data() + done, stdin_text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  });
  CommandResult result;
  result.stdout_text = internal::ReadAll(out[0]);
  close(out[0]);
  writer.join();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A TCP connection to 127.0.0.1:`port` whose reads and writes give up after 30 s (a safety net
// against hangs); -1 if it cannot connect.
inline int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the peer closes `fd` (a read sees its end, or a reset) before a read times out; what
// arrives before is dropped.
inline bool ClosedByPeer(int fd) {
  char buffer[4096];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;
    if (n < 0 && errno != EINTR) return errno == ECONNRESET;
  }
}

// GET http://127.0.0.1:`port``path` (HTTP/1.0, so the server closes the connection); the body,
// or nullopt on any failure (30 s without progress among them) or a status other than 200.
inline std::optional<std::string> HttpGet(int port, const std::string& path = "/metrics") {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return std::nullopt;
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return std::nullopt;
  }
  const std::string response = internal::ReadAll(fd);
  close(fd);
  const size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos || response.compare(0, 5, "HTTP/") != 0) return std::nullopt;
  const size_t space = response.find(' ');
  if (space == std::string::npos || response.compare(space + 1, 3, "200") != 0) {
    return std::nullopt;
  }
  return response.substr(header_end + 4);
}

// One scrape in the Prometheus text exposition format.
class MetricsSnapshot {
 public:
  struct Sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
  };

  MetricsSnapshot() = default;
  explicit MetricsSnapshot(const std::string& text) : text_(text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      Sample sample;
      size_t pos = line.find_first_of("{ ");
      if (pos == std::string::npos) continue;
      sample.name = line.substr(0, pos);
      if (line[pos] == '{') {
        ++pos;
        while (pos < line.size() && line[pos] != '}') {
          const size_t eq = line.find('=', pos);
          if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') break;
          std::string key = line.substr(pos, eq - pos);
          std::string value;
          size_t i = eq + 2;
          for (; i < line.size() && line[i] != '"'; ++i) {
            if (line[i] == '\\' && i + 1 < line.size()) {
              ++i;
              value += line[i] == 'n' ? '\n' : line[i];
            } else {
              value += line[i];
            }
          }
          sample.labels[key] = value;
          pos = i + 1;
          if (pos < line.size() && line[pos] == ',') ++pos;
        }
        pos = line.find('}', pos);
        if (pos == std::string::npos) continue;
        ++pos;
      }
      const std::string rest = line.substr(pos);
      char* end = nullptr;
      sample.value = std::strtod(rest.c_str(), &end);
      if (end == rest.c_str()) continue;
      samples_.push_back(std::move(sample));
    }
  }

  // Whether a sample named `name` with all of `labels` exists.
  bool Has(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const Sample& s : samples_) {
      if (s.name == name && Matches(s, labels)) return true;
    }
    return false;
  }

  // The sum of the samples named `name` that carry all of `labels` (0 if none).
  double Sum(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    double sum = 0;
    for (const Sample& s : samples_) {
      if (s.name == name && Matches(s, labels)) sum += s.value;
    }
    return sum;
  }

  // How much Sum(name, labels) grew since `before`.
  double Since(const MetricsSnapshot& before, const std::string& name,
               const std::map<std::string, std::string>& labels = {}) const {
    return Sum(name, labels) - before.Sum(name, labels);
  }

  const std::vector<Sample>& samples() const { return samples_; }
  const std::string& text() const { return text_; }

 private:
  static bool Matches(const Sample& s, const std::map<std::string, std::string>& labels) {
    for (const auto& [key, value] : labels) {
      auto it = s.labels.find(key);
      if (it == s.labels.end() || it->second != value) return false;
    }
    return true;
  }

  std::string text_;
  std::vector<Sample> samples_;
};

// Scrapes /metrics on `port`; throws if it cannot.
inline MetricsSnapshot ScrapeMetrics(int port) {
  std::optional<std::string> body = HttpGet(port, "/metrics");
  if (!body.has_value()) throw std::runtime_error("cannot scrape /metrics");
  return MetricsSnapshot(*body);
}

// Scrapes until `predicate(snapshot)` holds or `timeout` passes; the last snapshot.
template <typename Predicate>
MetricsSnapshot WaitForMetrics(int port, Predicate predicate,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (true) {
    MetricsSnapshot snapshot;
    if (std::optional<std::string> body = HttpGet(port, "/metrics")) {
      snapshot = MetricsSnapshot(*body);
      if (predicate(snapshot)) return snapshot;
    }
    if (std::chrono::steady_clock::now() >= end) return snapshot;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_E2E_SERVER_PROCESS_H_
