// The statements of Note [Levels in a block] (runtime/gpu/block_levels.h), each a block-wide
// pass. A Team gives: rank(), sync() (a barrier), each(n, f) (f(i) for i < n, spread
// over the threads), scan(a, n) (a[0..n) scanned exclusively in place, a[n] the total, which
// every thread gets back; barriers before and after) and sum(x) (the threads' x added up,
// every thread gets it).
#pragma once

namespace ndp::runtime::gpu::block_levels {

template <class Team>
NDP_BL_FN void Engine<Team>::step(const Op& op, int& next, bool& done) {
  switch (op.kind) {
    case kLen: {
      const int64_t n = counts[op.a];
      const int64_t* o = var(op.a).shape == kSeq2 ? off2(op.a) : off(op.a);
      int64_t* d = data(op.dst);
      team.each(n, [&](int64_t i) { d[i] = o[i + 1] - o[i]; });
      set_count(op.dst, n);
      return;
    }
    case kElements: {
      const int64_t n = counts[op.a];
      set_count(op.dst, var(op.a).shape == kSeq2 ? off2(op.a)[n] : off(op.a)[n]);
      return;
    }
    case kNest: {
      const int64_t n = counts[op.a];
      if (!fits(n)) return;
      int64_t* o = off(op.dst);
      const int64_t* l = data(op.a);
      team.each(n, [&](int64_t i) { o[i] = l[i]; });
      if (team.scan(o, n) != counts[op.b]) fail();
      set_count(op.dst, n);
      return;
    }
    case kKernel: kernel(op); return;
    case kCount: {
      const int64_t n = counts[op.a];
      const int64_t* d = data(op.a);
      int64_t mine = 0;
      team.each(n, [&](int64_t i) { mine += d[i] != 0; });
      const int64_t c = team.sum(mine);
      set_host(op.dst, c);
      return;
    }
    case kLength: set_host(op.dst, counts[op.a]); return;
    case kConst: set_host(op.dst, op.imm); return;
    case kLit: {
      const int64_t n = hosts[op.a];
      if (!fits(n)) return;
      int64_t* d = data(op.dst);
      team.each(n, [&](int64_t i) { d[i] = op.imm; });
      set_count(op.dst, n);
      return;
    }
    case kNothing: {
      if (team.rank() == 0) {
        counts[op.dst] = 0;
        if (var(op.dst).shape != kFlat) off(op.dst)[0] = 0;
        if (var(op.dst).shape == kSeq2) off2(op.dst)[0] = 0;
      }
      return;
    }
    case kPack: pack(op); return;
    case kReplicate: {
      const int64_t n = counts[op.a];
      if (!fits(n)) return;
      int64_t* o = slot(p.tmp0);
      const int64_t* l = data(op.b);
      const int64_t* v = data(op.a);
      team.each(n, [&](int64_t i) { o[i] = l[i]; });
      const int64_t total = team.scan(o, n);
      if (!fits(total)) return;
      int64_t* d = data(op.dst);
      team.each(total, [&](int64_t e) { d[e] = v[segment_of(o, n, e)]; });
      set_count(op.dst, total);
      return;
    }
    case kElt: {
      const int64_t n = counts[op.a];
      const int64_t* o = off(op.a);
      const int64_t* s = data(op.a);
      const int64_t* ix = data(op.b);
      int64_t* d = data(op.dst);
      team.each(n, [&](int64_t i) {
        const int64_t k = ix[i];
        if (k < 0 || k >= o[i + 1] - o[i]) fail();
        else d[i] = s[o[i] + k];
      });
      set_count(op.dst, n);
      return;
    }
    case kSeqLit: seq_lit(op); return;
    case kFilterGroup: filter_group(op); return;
    case kCopy: {
      const Var& v = var(op.a);
      const int64_t n = counts[op.a];
      int64_t words = n;
      if (v.shape == kSeq2) {
        const int64_t* s = off2(op.a);
        int64_t* d = off2(op.dst);
        team.each(n + 1, [&](int64_t i) { d[i] = s[i]; });
        words = s[n];
      }
      if (v.shape != kFlat) {
        const int64_t* s = off(op.a);
        int64_t* d = off(op.dst);
        team.each(words + 1, [&](int64_t i) { d[i] = s[i]; });
        words = s[words];
      }
      const int64_t* s = data(op.a);
      int64_t* d = data(op.dst);
      team.each(words, [&](int64_t i) { d[i] = s[i]; });
      set_count(op.dst, n);
      return;
    }
    case kJumpIfZero:
      if (hosts[op.a] == 0) next = static_cast<int>(op.imm);
      return;
    case kJump: next = static_cast<int>(op.imm); return;
    case kPlaceBase: place_base(op, done); return;
    case kPlaceChildren:
      place_children(op);
      next = 0;
      return;
  }
  fail();
}

template <class Team>
NDP_BL_FN void Engine<Team>::kernel(const Op& op) {
  const int32_t* L = p.lists + op.list;
  const int ni = static_cast<int>(op.imm);
  const int no = (op.list_n - ni) / 2;
  const int64_t n = counts[L[0]];
  const int64_t* in[kMaxInputs];
  for (int k = 0; k < ni; ++k) in[k] = data(L[k]);
  team.each(n, [&](int64_t i) {
    int64_t v[kMaxNodes];
    if (!eval(op, i, [&](int k, int64_t at) { return in[k][at]; }, v)) {
      fail();
      return;
    }
    for (int o = 0; o < no; ++o) data(L[ni + 2 * o + 1])[i] = v[L[ni + 2 * o]];
  });
  for (int o = 0; o < no; ++o) set_count(L[ni + 2 * o + 1], n);
}

template <class Team>
NDP_BL_FN void Engine<Team>::pack(const Op& op) {
  const int64_t n = counts[op.a];
  const int64_t* f = data(op.b);
  int64_t* rank = slot(p.tmp0);
  team.each(n, [&](int64_t i) { rank[i] = f[i] != 0; });
  const int64_t kept = team.scan(rank, n);
  const int64_t* src = data(op.a);
  int64_t* dst = data(op.dst);
  if (var(op.a).shape == kFlat) {
    team.each(n, [&](int64_t i) {
      if (f[i] != 0) dst[rank[i]] = src[i];
    });
    set_count(op.dst, kept);
    return;
  }
  // Sequences: the kept rows' lengths, scanned into offsets, then their elements.
  const int64_t* o = off(op.a);
  int64_t* no = off(op.dst);
  team.each(n, [&](int64_t i) {
    if (f[i] != 0) no[rank[i]] = o[i + 1] - o[i];
  });
  const int64_t total = team.scan(no, kept);
  if (!fits(total)) return;
  team.each(o[n], [&](int64_t e) {
    const int64_t s = segment_of(o, n, e);
    if (f[s] != 0) dst[no[rank[s]] + e - o[s]] = src[e];
  });
  set_count(op.dst, kept);
}

template <class Team>
NDP_BL_FN void Engine<Team>::seq_lit(const Op& op) {
  const int32_t* L = p.lists + op.list;
  const int64_t k = op.list_n;
  const int64_t n = counts[L[0]];
  if (!fits(n * k)) return;
  int64_t* d = data(op.dst);
  if (var(L[0]).shape == kFlat) {
    int64_t* o = off(op.dst);
    team.each(n + 1, [&](int64_t i) { o[i] = i * k; });
    for (int64_t j = 0; j < k; ++j) {
      const int64_t* s = data(L[j]);
      team.each(n, [&](int64_t i) { d[i * k + j] = s[i]; });
    }
    set_count(op.dst, n);
    return;
  }
  int64_t* outer = off2(op.dst);
  int64_t* inner = off(op.dst);
  team.each(n + 1, [&](int64_t i) { outer[i] = i * k; });
  for (int64_t j = 0; j < k; ++j) {
    const int64_t* o = off(L[j]);
    team.each(n, [&](int64_t i) { inner[i * k + j] = o[i + 1] - o[i]; });
  }
  const int64_t total = team.scan(inner, n * k);
  if (!fits(total)) return;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t* o = off(L[j]);
    const int64_t* s = data(L[j]);
    team.each(o[n], [&](int64_t e) {
      const int64_t r = segment_of(o, n, e);
      d[inner[r * k + j] + e - o[r]] = s[e];
    });
  }
  set_count(op.dst, n);
}

template <class Team>
NDP_BL_FN void Engine<Team>::filter_group(const Op& op) {
  const int32_t* L = p.lists + op.list;
  const int ni = static_cast<int>(op.imm);
  const int members = (op.list_n - ni) / 4;
  const int64_t n = counts[L[0]];
  if (!fits(n)) return;
  int64_t* scanned = slot(p.tmp0);
  int64_t* seg = slot(p.tmp1);
  int64_t* bits = slot(p.tmp2);
  const int64_t* in[kMaxInputs];
  for (int k = 0; k < ni; ++k) in[k] = data(L[k]);
  // Every predicate once an element: member m's flag is bit m (the translator allows 63).
  team.each(n, [&](int64_t i) {
    int64_t v[kMaxNodes];
    if (op.nodes_n > 0 && !eval(op, i, [&](int k, int64_t at) { return in[k][at]; }, v)) fail();
    int64_t word = 0;
    for (int m = 0; m < members; ++m) {
      const int32_t predicate = L[ni + 4 * m + 1];
      const bool flag = predicate < 0 ? in[-1 - predicate][i] != 0 : v[predicate] != 0;
      word |= static_cast<int64_t>(flag) << m;
    }
    bits[i] = word;
  });
  team.sync();
  for (int m = 0; m < members; ++m) {
    const int32_t* rec = L + ni + 4 * m;
    team.each(n, [&](int64_t i) { scanned[i] = (bits[i] >> m) & 1; });
    const int64_t total = team.scan(scanned, n);
    int64_t* out = data(rec[3]);
    if (rec[0] == kMemberCount) {
      const int64_t segs = counts[rec[2]];
      if (!fits(segs)) return;
      const int64_t* l = data(rec[2]);
      team.each(segs, [&](int64_t s) { seg[s] = l[s]; });
      if (team.scan(seg, segs) != n) {
        fail();
        return;
      }
      team.each(segs, [&](int64_t s) { out[s] = scanned[seg[s + 1]] - scanned[seg[s]]; });
      set_count(rec[3], segs);
    } else {
      const int64_t* v = data(rec[2]);
      team.each(n, [&](int64_t i) {
        if (scanned[i + 1] != scanned[i]) out[scanned[i]] = v[i];
      });
      set_count(rec[3], total);
    }
    team.sync();
  }
}

template <class Team>
NDP_BL_FN void Engine<Team>::place_base(const Op& op, bool& done) {
  const int64_t n = counts[p.param];
  if (counts[op.a] != n) {
    fail();
    return;
  }
  const int64_t* f = data(op.a);
  const int64_t* po = off(p.param);
  const int64_t* at = slot(p.at);
  int64_t* finished = slot(p.tmp0);
  int64_t* fin_ids = slot(p.tmp1);
  int64_t* rec_ids = slot(p.rec_ids);
  const bool when = op.flag != 0;
  team.each(n, [&](int64_t i) { finished[i] = (f[i] != 0) == when; });
  const int64_t fin = team.scan(finished, n);
  const int64_t rec = n - fin;
  if (op.c >= 0 && rec != hosts[op.c]) {
    fail();
    return;
  }
  team.each(n, [&](int64_t i) {
    if (finished[i + 1] != finished[i]) fin_ids[finished[i]] = i;
    else rec_ids[i - finished[i]] = i;
  });
  if (team.rank() == 0) flags[1] = rec;
  team.sync();
  done = rec == 0;
  if (fin == 0) return;
  if (counts[op.b] != fin) {
    fail();
    return;
  }
  const int64_t* bo = off(op.b);
  const int64_t* bd = data(op.b);
  team.each(fin, [&](int64_t k) {
    const int64_t i = fin_ids[k];
    if (bo[k + 1] - bo[k] != po[i + 1] - po[i]) fail();
  });
  team.each(bo[fin], [&](int64_t e) {
    const int64_t k = segment_of(bo, fin, e);
    store(out_, at[fin_ids[k]] + e - bo[k], bd[e]);
  });
}

template <class Team>
NDP_BL_FN void Engine<Team>::place_children(const Op& op) {
  const int32_t* L = p.lists + op.list;
  const int pieces = op.list_n / 2;
  const int64_t rec = flags[1];
  const int64_t k = op.imm;
  const int64_t m = counts[op.b];
  if (counts[op.a] != rec || m != rec * k) {
    fail();
    return;
  }
  const int64_t* cc = data(op.a);
  const int64_t* no = off(op.b);
  const int64_t* po = off(p.param);
  const int64_t* at = slot(p.at);
  const int64_t* rec_ids = slot(p.rec_ids);
  int64_t* next_at = slot(p.next_at);
  int rows = 0;
  for (int q = 0; q < pieces; ++q)
    if (L[2 * q] == kPieceRows && counts[L[2 * q + 1]] != rec) {
      fail();
      return;
    }
  team.each(rec, [&](int64_t j) {
    const int64_t i = rec_ids[j];
    if (cc[j] != k) fail();
    int64_t pos = at[i];
    int r = 0;
    for (int q = 0; q < pieces; ++q) {
      if (L[2 * q] == kPieceChild) {
        const int64_t c = j * k + L[2 * q + 1];
        next_at[c] = pos;
        pos += no[c + 1] - no[c];
      } else {
        const int64_t* o = off(L[2 * q + 1]);
        slot(r == 0 ? p.tmp0 : r == 1 ? p.tmp1 : p.tmp2)[j] = pos;
        pos += o[j + 1] - o[j];
        ++r;
      }
    }
    if (pos - at[i] != po[i + 1] - po[i]) fail();
  });
  team.sync();
  for (int q = 0; q < pieces; ++q) {
    if (L[2 * q] != kPieceRows) continue;
    const int64_t* place = slot(rows == 0 ? p.tmp0 : rows == 1 ? p.tmp1 : p.tmp2);
    const int64_t* o = off(L[2 * q + 1]);
    const int64_t* d = data(L[2 * q + 1]);
    team.each(o[rec], [&](int64_t e) {
      const int64_t s = segment_of(o, rec, e);
      store(out_, place[s] + e - o[s], d[e]);
    });
    ++rows;
  }
  // The children are the next level's argument.
  if (!fits(m) || !fits(no[m])) return;
  team.sync();
  int64_t* ao = off(p.param);
  int64_t* ad = data(p.param);
  int64_t* a = slot(p.at);
  const int64_t* nd = data(op.b);
  team.each(m + 1, [&](int64_t i) { ao[i] = no[i]; });
  team.each(no[m], [&](int64_t e) { ad[e] = nd[e]; });
  team.each(m, [&](int64_t i) { a[i] = next_at[i]; });
  set_count(p.param, m);
}

}  // namespace ndp::runtime::gpu::block_levels
