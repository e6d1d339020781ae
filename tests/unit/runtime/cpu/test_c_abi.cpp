// The plain-C entry points: type dispatch, status records, argument checks.
#include <doctest/doctest.h>

#include <cstring>

#include "ndp/runtime.h"
#include "ndp/runtime_cpu.h"
#include "tests/unit/runtime/shapes.h"

TEST_CASE("C ABI: a segmented scan and reduce on every element type") {
  int64_t lens[] = {2, 0, 3};
  int64_t offs[4];
  REQUIRE(ndp_cpu_offsets_from_lengths(lens, 3, offs).code == NDP_OK);
  CHECK(offs[3] == 5);
  ndp_segdes s = ndp_segdes_irregular(3, lens, offs);

  int64_t i64[] = {1, 2, 3, 4, 5}, i64_out[5], i64_red[3];
  REQUIRE(ndp_cpu_seg_scan(NDP_I64, NDP_OP_PLUS, 0, i64, s, i64_out).code == NDP_OK);
  CHECK(std::vector<int64_t>(i64_out, i64_out + 5) == std::vector<int64_t>{0, 1, 0, 3, 7});
  REQUIRE(ndp_cpu_seg_reduce(NDP_I64, NDP_OP_MAX, i64, s, i64_red).code == NDP_OK);
  CHECK(i64_red[1] == INT64_MIN);
  CHECK(i64_red[2] == 5);

  float f32[] = {1.5f, 2.5f, -1.0f, 4.0f, 0.5f}, f32_out[5];
  REQUIRE(ndp_cpu_seg_scan(NDP_F32, NDP_OP_PLUS, 1, f32, s, f32_out).code == NDP_OK);
  CHECK(f32_out[1] == 4.0f);
  CHECK(f32_out[4] == 3.5f);

  int32_t i32[] = {6, 3, 7, 5, 12}, i32_red[3];
  REQUIRE(ndp_cpu_seg_reduce(NDP_I32, NDP_OP_AND, i32, s, i32_red).code == NDP_OK);
  CHECK(i32_red[0] == 2);
  CHECK(i32_red[1] == -1);
  CHECK(i32_red[2] == 4);

  uint8_t flags[] = {1, 0, 0, 1, 1}, bool_red[3];
  REQUIRE(ndp_cpu_seg_reduce(NDP_BOOL, NDP_OP_XOR, flags, s, bool_red).code == NDP_OK);
  CHECK(bool_red[0] == 1);
  CHECK(bool_red[1] == 0);
  CHECK(bool_red[2] == 0);

  uint8_t chars[] = {'b', 'a', 'z', 'q', 'c'}, char_red[3];
  REQUIRE(ndp_cpu_seg_reduce(NDP_CHAR, NDP_OP_MIN, chars, s, char_red).code == NDP_OK);
  CHECK(char_red[0] == 'a');
  CHECK(char_red[1] == 255);
  CHECK(char_red[2] == 'c');

  CHECK(ndp_cpu_seg_reduce(NDP_F64, NDP_OP_OR, i64, s, i64_red).code == NDP_UNSUPPORTED);
  CHECK(ndp_cpu_seg_reduce(static_cast<ndp_elem_type>(42), NDP_OP_OR, i64, s, i64_red).code == NDP_INVALID_ARGUMENT);
}

TEST_CASE("C ABI: status records name the failing element") {
  int64_t v[] = {10, 20, 30, 40}, idx[] = {0, 7, 1, 9}, out[4];
  ndp_status st = ndp_cpu_bpermute(NDP_I64, v, ndp_segdes_flat(4), idx, ndp_segdes_flat(4), out);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.position == 1);
  CHECK(st.index == 7);
  CHECK(st.length == 4);
  CHECK(std::strcmp(ndp_status_name(st.code), "index out of bounds") == 0);

  int64_t perm[] = {1, 0, 1, 3};
  st = ndp_cpu_permute(NDP_I64, v, perm, ndp_segdes_flat(4), out);
  CHECK(st.code == NDP_NOT_A_PERMUTATION);
  CHECK(st.position == 2);

  int64_t lens[] = {1, -4};
  int64_t offs[3];
  st = ndp_cpu_offsets_from_lengths(lens, 2, offs);
  CHECK(st.code == NDP_NEGATIVE_LENGTH);
  CHECK(st.position == 1);
  CHECK(st.index == -4);
}

TEST_CASE("C ABI: malformed arguments are refused, not dereferenced") {
  int64_t out[2];
  ndp_segdes bad = ndp_segdes_regular(2, 3);
  bad.total = 5;
  CHECK(ndp_cpu_dist(NDP_I64, out, bad, out).code == NDP_INVALID_ARGUMENT);
  CHECK(ndp_cpu_dist(NDP_I64, nullptr, ndp_segdes_regular(2, 1), out).code == NDP_INVALID_ARGUMENT);
  // Null arrays are fine when empty.
  CHECK(ndp_cpu_dist(NDP_I64, nullptr, ndp_segdes_regular(0, 4), nullptr).code == NDP_OK);
  CHECK(ndp_cpu_combine(NDP_F64, NDP_OP_PLUS, nullptr, 0, nullptr, nullptr, 0, nullptr).code == NDP_OK);
}

TEST_CASE("C ABI: pack, rank, sort, combine, dist, index, append, rotate") {
  double v[] = {3.0, -1.0, 2.0, 8.0, 8.0, -4.0};
  uint8_t keep[] = {1, 0, 1, 1, 0, 1};
  int64_t lens[] = {3, 3}, offs[] = {0, 3, 6};
  ndp_segdes s = ndp_segdes_irregular(2, lens, offs);
  int64_t packed_lens[2], total = 0;
  REQUIRE(ndp_cpu_pack_lengths(keep, s, packed_lens, &total).code == NDP_OK);
  CHECK(total == 4);
  CHECK(packed_lens[0] == 2);
  double packed[4];
  REQUIRE(ndp_cpu_pack(NDP_F64, v, keep, 6, packed, 4).code == NDP_OK);
  CHECK(packed[3] == -4.0);

  int64_t r[6];
  REQUIRE(ndp_cpu_rank(NDP_F64, v, s, NDP_DESCENDING, r).code == NDP_OK);
  CHECK(std::vector<int64_t>(r, r + 6) == std::vector<int64_t>{0, 2, 1, 0, 1, 2});
  double sorted[6];
  REQUIRE(ndp_cpu_sort(NDP_F64, v, s, NDP_ASCENDING, sorted).code == NDP_OK);
  CHECK(std::vector<double>(sorted, sorted + 6) == std::vector<double>{-1, 2, 3, -4, 8, 8});

  double dest[] = {0.5, 0.25}, combined[2];
  int64_t to[] = {1, 1, 0, 1, 0, 0};
  REQUIRE(ndp_cpu_combine(NDP_F64, NDP_OP_PLUS, dest, 2, to, v, 6, combined).code == NDP_OK);
  CHECK(combined[0] == 0.5 + 2.0 + 8.0 - 4.0);
  CHECK(combined[1] == 0.25 + 3.0 - 1.0 + 8.0);

  int32_t start[] = {5, -1}, stride[] = {2, 0}, seq[6];
  REQUIRE(ndp_cpu_index(NDP_I32, start, stride, s, seq).code == NDP_OK);
  CHECK(std::vector<int32_t>(seq, seq + 6) == std::vector<int32_t>{5, 7, 9, -1, -1, -1});

  int64_t app_lens[2], app_offs[3];
  REQUIRE(ndp_cpu_append_lengths(s, s, app_lens).code == NDP_OK);
  REQUIRE(ndp_cpu_offsets_from_lengths(app_lens, 2, app_offs).code == NDP_OK);
  double app[12];
  REQUIRE(ndp_cpu_append(NDP_F64, v, s, v, s, ndp_segdes_irregular(2, app_lens, app_offs), app).code == NDP_OK);
  CHECK(std::vector<double>(app, app + 12) == std::vector<double>{3, -1, 2, 3, -1, 2, 8, 8, -4, 8, 8, -4});

  int64_t shift[] = {1, -1};
  double rot[6];
  REQUIRE(ndp_cpu_rotate(NDP_F64, v, shift, s, rot).code == NDP_OK);
  CHECK(std::vector<double>(rot, rot + 6) == std::vector<double>{2, 3, -1, 8, -4, 8});
}
