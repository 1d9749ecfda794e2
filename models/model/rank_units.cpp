// RankUnits (rank_units.hpp): the units of one rank's pipeline stage (stage_layers, stage_first_layer), cut to its tp
// share and padded for ZeRO, with the pieces that map local elements to the canonical layout.
#include "models/model/rank_units.hpp"

#include <algorithm>
#include <utility>

#include "core/size.hpp"

namespace gcb::models {

int stage_layers(int layers, int pp, int stage) { return layers / pp + (stage < layers % pp ? 1 : 0); }
int stage_first_layer(int layers, int pp, int stage) { return stage * (layers / pp) + std::min(stage, layers % pp); }

RankUnits::RankUnits(const GptConfig& c, const ParallelLayout& layout, int tp_rank, int pp_rank) : canonical_(c) {
  const size_t C = sz(c.hidden), t = sz(layout.tp), r = sz(tp_rank);
  const size_t Cl = C / t, Vl = sz(padded_vocab(c.vocab, layout.tp)) / t, T = sz(c.seq);
  // Rows of this rank's wte shard that exist in the model; the padding rows after them map to no
  // canonical element, so they stay zero (allocations are zeroed) and are never reassembled.
  const size_t Vreal = std::min(Vl, sz(c.vocab) - std::min(sz(c.vocab), r * Vl));
  size_t o = 0;
  auto take = [&o](size_t n) { return std::exchange(o, o + n); };
  embed_.wte = take(Vl * C);
  embed_.wpe = take(T * C);  // replicated, but its gradient is complete on every tp rank
  embed_.sync_begin = o;
  embed_.lnfw = take(C);
  embed_.lnfb = take(C);
  embed_.size = o;
  o = 0;
  layer_.qkvw = take(3 * Cl * C);
  layer_.qkvb = take(3 * Cl);
  layer_.projw = take(C * Cl);
  layer_.fcw = take(4 * Cl * C);
  layer_.fcb = take(4 * Cl);
  layer_.fcprojw = take(C * 4 * Cl);
  layer_.sync_begin = o;
  layer_.ln1w = take(C);
  layer_.ln1b = take(C);
  layer_.projb = take(C);
  layer_.ln2w = take(C);
  layer_.ln2b = take(C);
  layer_.fcprojb = take(C);
  layer_.size = o;

  const EmbedUnit& ce = canonical_.embed();
  const std::vector<Piece> embed_pieces = {{ce.wte + r * Vl * C, embed_.wte, Vreal * C, false},
                                           {ce.wpe, embed_.wpe, T * C, true},
                                           {ce.lnfw, embed_.lnfw, C, true},
                                           {ce.lnfb, embed_.lnfb, C, true}};
  const LayerUnit& cl = canonical_.layer();
  std::vector<Piece> layer_pieces;
  for (size_t k = 0; k < 3; ++k) {  // this rank's heads of q, k and v: rows k·C + r·Cl …
    layer_pieces.push_back({cl.qkvw + (k * C + r * Cl) * C, layer_.qkvw + k * Cl * C, Cl * C, false});
    layer_pieces.push_back({cl.qkvb + k * C + r * Cl, layer_.qkvb + k * Cl, Cl, false});
  }
  for (size_t i = 0; i < C; ++i) {  // row-parallel: columns r·Cl … of every row
    layer_pieces.push_back({cl.projw + i * C + r * Cl, layer_.projw + i * Cl, Cl, false});
    layer_pieces.push_back({cl.fcprojw + i * 4 * C + r * 4 * Cl, layer_.fcprojw + i * 4 * Cl, 4 * Cl, false});
  }
  layer_pieces.push_back({cl.fcw + r * 4 * Cl * C, layer_.fcw, 4 * Cl * C, false});
  layer_pieces.push_back({cl.fcb + r * 4 * Cl, layer_.fcb, 4 * Cl, false});
  for (const auto& [canon, local] :
       {std::pair{cl.ln1w, layer_.ln1w}, std::pair{cl.ln1b, layer_.ln1b}, std::pair{cl.projb, layer_.projb},
        std::pair{cl.ln2w, layer_.ln2w}, std::pair{cl.ln2b, layer_.ln2b}, std::pair{cl.fcprojb, layer_.fcprojb}}) {
    layer_pieces.push_back({canon, local, C, true});
  }

  stage_layers_ = models::stage_layers(c.layers, layout.pp, pp_rank);
  first_layer_ = stage_first_layer(c.layers, layout.pp, pp_rank);
  has_embedding_ = pp_rank == 0 || pp_rank == layout.pp - 1;
  size_t offset = 0, shard_offset = 0;
  auto add = [&](int unit, const std::vector<Piece>& pieces, size_t size, size_t sync_begin) {
    LocalUnit u;
    u.unit = unit;
    u.pieces = pieces;
    u.size = size;
    u.sync_begin = sync_begin;
    u.spec = make_shard_spec(size, layout.dp);
    u.offset = offset;
    u.shard_offset = shard_offset;
    offset += u.spec.padded;
    shard_offset += u.spec.shard;
    units_.push_back(std::move(u));
  };
  if (has_embedding_) add(0, embed_pieces, embed_.size, embed_.sync_begin);
  for (int l = 0; l < stage_layers_; ++l) add(1 + first_layer_ + l, layer_pieces, layer_.size, layer_.sync_begin);
  padded_total_ = offset;
  shard_total_ = shard_offset;
}

std::vector<DecaySegment> RankUnits::decay_segments(const LocalUnit& u, size_t begin, size_t end, bool groups) const {
  std::vector<DecaySegment> out;
  if (begin >= end) return out;
  if (!groups) return {{begin, end - begin, true}};
  // The decaying local ranges, in order: wte and wpe (adjacent) of the embedding; the QKV,
  // attention-projection, fc and fc-projection weights of a layer. Everything else does not decay.
  std::vector<std::pair<size_t, size_t>> decays;
  if (u.unit == 0) {
    decays = {{embed_.wte, embed_.sync_begin}};
  } else {
    decays = {{layer_.qkvw, layer_.qkvb}, {layer_.projw, layer_.fcb}, {layer_.fcprojw, layer_.sync_begin}};
  }
  auto push = [&out](size_t b, size_t e, bool decay) {
    if (b >= e) return;
    if (!out.empty() && out.back().decay == decay && out.back().begin + out.back().len == b) {
      out.back().len += e - b;
    } else {
      out.push_back({b, e - b, decay});
    }
  };
  size_t at = begin;
  for (const auto& [db, de] : decays) {
    const size_t lo = std::clamp(db, begin, end), hi = std::clamp(de, begin, end);
    push(at, std::max(at, lo), false);
    push(std::max(at, lo), hi, true);
    at = std::max(at, hi);
  }
  push(at, end, false);
  return out;
}

}  // namespace gcb::models
