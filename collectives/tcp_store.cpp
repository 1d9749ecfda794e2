// TcpStore: a blocking request/reply protocol over one TCP connection per client, served by one
// thread per connection on rank 0. A request is an op byte ('S' set, 'G' get, 'C' check that a
// key exists, waiting for it), the key (u32 length + bytes) and, for 'S', the value (u64 length
// + bytes); 'G' is answered with the value (u64 length + bytes), 'S' and 'C' with one byte. A
// get or check of a key nobody set yet waits on the server until it is set.
#include "collectives/tcp_store.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace gcb {

namespace {

bool write_full(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// false on end of stream, an error or the receive timeout (errno says which; 0 at end of stream).
bool read_full(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = 0;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

addrinfo* resolve(const std::string& host, int port, int socktype) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = socktype;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0)
    throw UsageError(
        fmt::format("the store address {}:{} does not resolve: {} (check MASTER_ADDR)", host, port, gai_strerror(rc)));
  return res;
}

}  // namespace

// Rank 0's server: the keys, and one thread per connected client.
class StoreServer {
 public:
  explicit StoreServer(int port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw Fault(fmt::format("the store: socket(): {}", std::strerror(errno)));
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(listen_fd_, 1024) != 0) {
      const int err = errno;
      ::close(listen_fd_);
      throw Fault(
          fmt::format("rank 0 cannot serve the store on port {}: {} (another run holds the port? set "
                      "MASTER_PORT to a free one)",
                      port, std::strerror(err)));
    }
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~StoreServer() {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
      for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
    }
    cv_.notify_all();
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    for (auto& t : threads_) t.join();
    for (int fd : conns_) ::close(fd);
    ::close(listen_fd_);
  }
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down (or out of descriptors: the clients' connect then times out)
      }
      std::lock_guard lk(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      conns_.push_back(fd);
      threads_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    for (;;) {
      char op = 0;
      uint32_t key_len = 0;
      if (!read_full(fd, &op, 1) || !read_full(fd, &key_len, sizeof(key_len)) || key_len > (1u << 20)) return;
      std::string key(key_len, '\0');
      if (!read_full(fd, key.data(), key_len)) return;
      if (op == 'S') {
        uint64_t len = 0;
        if (!read_full(fd, &len, sizeof(len)) || len > (uint64_t{1} << 30)) return;
        std::vector<char> value(len);
        if (!read_full(fd, value.data(), len)) return;
        {
          std::lock_guard lk(mu_);
          data_[key] = std::move(value);
        }
        cv_.notify_all();
        const char ack = 1;
        if (!write_full(fd, &ack, 1)) return;
      } else if (op == 'G' || op == 'C') {
        std::vector<char> value;
        {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [&] { return stopping_ || data_.count(key) > 0; });
          if (stopping_) return;
          if (op == 'G') value = data_[key];
        }
        if (op == 'C') {
          const char ack = 1;
          if (!write_full(fd, &ack, 1)) return;
        } else {
          const uint64_t len = value.size();
          if (!write_full(fd, &len, sizeof(len)) || !write_full(fd, value.data(), value.size())) return;
        }
      } else {
        return;
      }
    }
  }

  int listen_fd_ = -1;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::vector<char>> data_;
  std::vector<int> conns_;
  std::vector<std::thread> threads_;
};

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout)
    : address_(fmt::format("{}:{}", host, port)), timeout_(timeout) {
  if (port < 1 || port > 65535) throw UsageError(fmt::format("store port {} is not a TCP port (1..65535)", port));
  if (serve) server_ = std::make_unique<StoreServer>(port);
  addrinfo* res = resolve(host, port, SOCK_STREAM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int last_error = 0;
  while (fd_ < 0) {
    for (addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        last_error = errno;
        ::close(fd);
      }
    }
    if (fd_ >= 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::freeaddrinfo(res);
      throw Fault(
          fmt::format("no store answered at {} within {:.0f} s (last error: {}); rank 0 serves it: is it "
                      "running, and are MASTER_ADDR and MASTER_PORT the same on every rank?",
                      address_, std::chrono::duration<double>(timeout).count(), std::strerror(last_error)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(res);
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
  server_.reset();
}

void TcpStore::send_all(const void* data, size_t bytes) {
  if (!write_full(fd_, data, bytes))
    throw Fault(fmt::format("the store at {} went away: {}", address_, std::strerror(errno)));
}

void TcpStore::recv_all(void* data, size_t bytes, const std::string& key) {
  if (read_full(fd_, data, bytes)) return;
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    throw Fault(
        fmt::format("waited {:.0f} s at the store {} for key '{}', which no rank set (a rank has not "
                    "started, was stopped, or failed)",
                    std::chrono::duration<double>(timeout_).count(), address_, key));
  throw Fault(fmt::format("the store at {} went away while waiting for key '{}' (rank 0 ended){}", address_, key,
                          errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  const char op = 'S';
  const auto key_len = static_cast<uint32_t>(key.size());
  const uint64_t len = data.size();
  send_all(&op, 1);
  send_all(&key_len, sizeof(key_len));
  send_all(key.data(), key.size());
  send_all(&len, sizeof(len));
  send_all(data.data(), data.size());
  char ack = 0;
  recv_all(&ack, 1, key);
}

std::vector<char> TcpStore::get(const std::string& key) {
  const char op = 'G';
  const auto key_len = static_cast<uint32_t>(key.size());
  send_all(&op, 1);
  send_all(&key_len, sizeof(key_len));
  send_all(key.data(), key.size());
  uint64_t len = 0;
  recv_all(&len, sizeof(len), key);
  std::vector<char> value(len);
  recv_all(value.data(), value.size(), key);
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) {
  // The receive timeout set at connection bounds every wait (the World's --timeout).
  for (const std::string& key : keys) {
    const char op = 'C';
    const auto key_len = static_cast<uint32_t>(key.size());
    send_all(&op, 1);
    send_all(&key_len, sizeof(key_len));
    send_all(key.data(), key.size());
    char ack = 0;
    recv_all(&ack, 1, key);
  }
}

std::string local_address_towards(const std::string& host) {
  addrinfo* res = nullptr;
  try {
    res = resolve(host, 9, SOCK_DGRAM);
  } catch (const UsageError&) {
    return {};
  }
  std::string out;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in mine{};
    socklen_t len = sizeof(mine);
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &len) == 0 &&
        ::inet_ntop(AF_INET, &mine.sin_addr, text, sizeof(text)) != nullptr)
      out = text;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

}  // namespace gcb
