// comm_kind_name: the names of the communication kinds a training step is counted by (comm_stats.hpp).
#include "models/model/comm_stats.hpp"

namespace gcb::models {

std::string_view comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::all_reduce: return "all_reduce";
    case CommKind::reduce_scatter: return "reduce_scatter";
    case CommKind::all_gather: return "all_gather";
    case CommKind::loss_all_reduce: return "loss_all_reduce";
    case CommKind::tp_all_reduce: return "tp_all_reduce";
    case CommKind::tp_all_gather: return "tp_all_gather";
    case CommKind::tp_reduce_scatter: return "tp_reduce_scatter";
    case CommKind::pp_send: return "pp_send";
    case CommKind::pp_recv: return "pp_recv";
    case CommKind::pp_embed: return "pp_embed";
    case CommKind::grad_norm_all_reduce: return "grad_norm_all_reduce";
  }
  return "?";
}

}  // namespace gcb::models
