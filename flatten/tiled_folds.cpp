// The shape of a tiled fold (Note [Tiled folds]).
#include "flatten/tiled_folds.h"

#include <algorithm>

namespace ndp::flatten {

using Kind = KernelNode::Kind;

std::optional<TiledFold> tiled_fold(const KernelBody& k) {
  if (k.loop) return std::nullopt;
  std::optional<uint32_t> fold;
  for (uint32_t j = 0; j < k.nodes.size(); ++j) {
    if (k.nodes[j].kind != Kind::Fold) continue;
    if (fold) return std::nullopt;  // one fold only
    fold = j;
  }
  if (!fold) return std::nullopt;
  const uint32_t index = k.nodes[*fold].input;  // its FoldIndex node
  std::vector<uint32_t> row_inputs;
  TiledFold t;
  t.fold = *fold;
  std::vector<std::pair<uint32_t, uint32_t>> reads;  // (row input, seq) of each read, with its component below
  std::vector<uint32_t> components;
  for (uint32_t j = index + 1; j < *fold; ++j) {
    const KernelNode& n = k.nodes[j];
    switch (n.kind) {
      case Kind::Prim: case Kind::Const: break;
      case Kind::FoldAcc:
        if (n.input != *fold) return std::nullopt;
        break;
      case Kind::SeqElt: {
        if (n.args.size() != 2 || n.args[1] != index || n.args[0] >= index) return std::nullopt;
        const KernelNode& row = k.nodes[n.args[0]];
        if (row.kind != Kind::Input || row.type->kind != lang::TypeKind::Int) return std::nullopt;
        if (std::find(row_inputs.begin(), row_inputs.end(), row.input) == row_inputs.end()) row_inputs.push_back(row.input);
        reads.emplace_back(row.input, n.input);
        components.push_back(n.component);
        break;
      }
      default: return std::nullopt;
    }
  }
  if (row_inputs.size() != 2) return std::nullopt;
  t.rows = std::min(row_inputs[0], row_inputs[1]);
  t.columns = std::max(row_inputs[0], row_inputs[1]);
  for (size_t r = 0; r < reads.size(); ++r) {
    TiledFold::Tile tile{reads[r].second, components[r], reads[r].first == t.columns};
    auto same = [&](const TiledFold::Tile& x) {
      return x.seq == tile.seq && x.component == tile.component && x.columns == tile.columns;
    };
    if (std::none_of(t.tiles.begin(), t.tiles.end(), same)) t.tiles.push_back(tile);
  }
  if (t.tiles.size() > kMostTiles) return std::nullopt;
  return t;
}

size_t tile_of(const KernelBody& k, const TiledFold& t, const KernelNode& n) {
  const bool columns = k.nodes[n.args.at(0)].input == t.columns;
  for (size_t i = 0; i < t.tiles.size(); ++i)
    if (t.tiles[i].seq == n.input && t.tiles[i].component == n.component && t.tiles[i].columns == columns) return i;
  return t.tiles.size();
}

}  // namespace ndp::flatten
