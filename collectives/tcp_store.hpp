// The key-value store of launches without MPI (torchrun, a Kubernetes Job, srun without MPI): rank
// 0 serves it on MASTER_ADDR:MASTER_PORT, every rank (rank 0 too) is its client, and Gloo's
// rendezvous (gloo::rendezvous::Context::connectFullMesh) exchanges the ranks' transport addresses
// through it; the World also agrees on NCCL's unique id through it. Semantics as PyTorch's c10d
// TCPStore (pytorch/pytorch torch/csrc/distributed/c10d/TCPStore.hpp): set(key, value); get(key)
// waits until the key is set; wait(keys). Why not Gloo's own: the Gloo packaged by Debian
// (libgloo-dev 0.0~git20220518, Gloo 0.5.0) has FileStore (needs a folder every host shares),
// HashStore (one process) and RedisStore (needs a Redis server); its TCPStore
// (gloo/rendezvous/tcp_store.h) came later upstream. This class implements Gloo's Store interface,
// so a build against a newer Gloo could swap it for gloo::rendezvous::TCPStore.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace gcb {

class StoreServer;

class TcpStore : public gloo::rendezvous::Store {
 public:
  // `serve`: this process (rank 0) also runs the server, listening on every IPv4 address at
  // `port`. Connecting retries until `timeout` (the server may start after its clients); every
  // later call that waits longer than `timeout` throws gcb::Fault naming the key and the store.
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // "HOST:PORT", for messages.
  const std::string& address() const { return address_; }

 private:
  void send_all(const void* data, size_t bytes);
  void recv_all(void* data, size_t bytes, const std::string& key);
  std::string address_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<StoreServer> server_;
  int fd_ = -1;
};

// The IPv4 address this host reaches `host` from (the source address the kernel's routing picks
// for it; no packet is sent): where Gloo's TCP transport listens, so that peers on the same
// network can reach it. "" when `host` does not resolve.
std::string local_address_towards(const std::string& host);

}  // namespace gcb
