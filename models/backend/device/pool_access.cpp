// pool_access_peers: the peers a device's memory pool grants access to (pool_access.hpp).
#include "models/backend/device/pool_access.hpp"

#include <algorithm>

namespace gcb::models {

std::vector<int> pool_access_peers(int device, const std::vector<int>& process_devices,
                                   const std::function<bool(int peer, int owner)>& can_access) {
  std::vector<int> out;
  for (int peer : process_devices) {
    if (peer == device || peer < 0 || std::find(out.begin(), out.end(), peer) != out.end()) continue;
    if (can_access(peer, device)) out.push_back(peer);
  }
  return out;
}

}  // namespace gcb::models
