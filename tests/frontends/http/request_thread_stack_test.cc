// The stack civetweb gives a request thread is what the fuzz targets run their inputs on
// (tests/test_lib/request_thread_stack.h): measured on a real request to a real civetweb server.
#include "tests/test_lib/request_thread_stack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "civetweb.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

std::atomic<size_t> measured_stack{0};

int MeasureStack(mg_connection* connection, void*) {
  pthread_attr_t attr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  measured_stack = size;
  mg_send_http_ok(connection, "text/plain", 2);
  mg_write(connection, "ok", 2);
  return 200;
}

TEST(RequestThreadStackTest, IsTheStackOfCivetwebsRequestThreads) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's pthread_create gives threads stacks of its own size (900 KiB here).
  GTEST_SKIP() << "ThreadSanitizer sets the stack size of the threads it starts";
#endif
  mg_init_library(0);
  const char* options[] = {"listening_ports", "127.0.0.1:0", "num_threads", "1", nullptr};
  mg_callbacks callbacks = {};
  mg_context* context = mg_start(&callbacks, nullptr, options);
  ASSERT_NE(context, nullptr);
  mg_set_request_handler(context, "/", MeasureStack, nullptr);
  mg_server_port port = {};
  ASSERT_EQ(mg_get_server_ports(context, 1, &port), 1);

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  char buffer[512];
  while (read(fd, buffer, sizeof(buffer)) > 0) {
  }
  close(fd);
  mg_stop(context);
  mg_exit_library();

  EXPECT_EQ(measured_stack.load(), kRequestThreadStackBytes);
}

}  // namespace
}  // namespace mtserve
