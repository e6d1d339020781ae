// Tuning files and the choice of a map kernel's form (Note [Tuning], Note [Map kernel dispatch]).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "exec/common/tuning.h"

using ndp::exec::own_row_lanes;
using ndp::exec::Tuning;

TEST_CASE("a tuning file's text reads back as the same tuning") {
  Tuning t = Tuning::gpu_defaults();
  t.elements = 1 << 20;
  t.own_row_lanes[3] = 128;
  t.block_levels_elements = 12345;
  t.regular_tile_bytes = 16384;
  t.partition_switch_elements = 512;
  std::string error;
  std::optional<Tuning> back = Tuning::parse(t.text("Some GPU"), &error);
  REQUIRE(back.has_value());
  CHECK(back->elements == 1 << 20);
  CHECK(back->block_levels_elements == 12345);
  CHECK(back->regular_tile_bytes == 16384);
  CHECK(back->partition_switch_elements == 512);
  // A file of an older ndp, without the recursion's switch point, keeps the default.
  std::optional<Tuning> older = Tuning::parse("own_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", &error);
  REQUIRE(older.has_value());
  CHECK(older->block_levels_elements == Tuning().block_levels_elements);
  CHECK(older->regular_tile_bytes == Tuning().regular_tile_bytes);
  CHECK(older->partition_switch_elements == Tuning().partition_switch_elements);
  for (const char* bad : {"partition_switch_elements 32\n", "partition_switch_elements 8192\n"}) {
    CHECK_FALSE(Tuning::parse(std::string("own_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n") + bad, &error));
    CHECK(error.find("line 2: `partition_switch_elements` needs a count from 64 to 4096") == 0);
  }
  for (const char* bad : {"regular_tile_bytes 100\n", "regular_tile_bytes 65536\n", "regular_tile_bytes x\n"}) {
    CHECK_FALSE(Tuning::parse(std::string("own_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n") + bad, &error));
    CHECK(error.find("line 2: `regular_tile_bytes` needs a count of bytes from 256 to 49152") == 0);
  }
  CHECK_FALSE(Tuning::parse("own_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nblock_levels_elements -1\n", &error));
  CHECK(error.find("line 2: `block_levels_elements` needs a count") == 0);
  CHECK(back->own_row_lanes == t.own_row_lanes);
  CHECK(t.text("Some GPU").find("# ndp autotune: Some GPU") == 0);
}

TEST_CASE("a tuning file that does not parse says where") {
  std::string error;
  CHECK_FALSE(Tuning::parse("elements 5\n", &error));
  CHECK(error == "no `own_row_lanes` line");
  CHECK_FALSE(Tuning::parse("own_row_lanes 1 2 3\n", &error));
  CHECK(error.find("line 1: `own_row_lanes` needs 21") == 0);
  CHECK_FALSE(Tuning::parse("# c\nown_row_lanes 0 1 1 2 4 8 8 16 32 16 16 32 64 256 256 0 0 0 0 0 3\n", &error));
  CHECK(error.find("line 2:") == 0);  // 3 is no power of two
  CHECK_FALSE(Tuning::parse("colour blue\n", &error));
  CHECK(error == "line 1: unknown key `colour`");
  CHECK_FALSE(Tuning::parse("elements 0\nown_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", &error));
  CHECK_FALSE(Tuning::parse("own_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 9\n", &error));
  CHECK(error == "line 1: unexpected `9`");
}

TEST_CASE("own_row_lanes follows the table by the rounded log2 of the rows' length") {
  Tuning t;
  t.elements = 1 << 24;
  for (int k = 0; k < Tuning::kRowLogs; ++k) t.own_row_lanes[static_cast<size_t>(k)] = k < 2 ? 0 : 4;
  t.own_row_lanes[5] = 16;
  const int64_t resident = 132 * 2048;
  // As many instances as the measurement had: the table's lanes.
  CHECK(own_row_lanes(t, (1 << 24) / 32, 32, resident) == 16);
  CHECK(own_row_lanes(t, (1 << 24) / 27, 27, resident) == 16);  // 27 rounds to 2^5
  CHECK(own_row_lanes(t, (1 << 24) / 22, 22, resident) == 4);   // 22 rounds to 2^4
  CHECK(own_row_lanes(t, 1 << 24, 1, resident) == 0);           // flattened
  CHECK(own_row_lanes(t, 1 << 23, 2, resident) == 0);
  // Fewer instances than would fill the GPU at the table's lanes: more lanes each, never
  // more than the rows' length rounded up, nor than 256.
  CHECK(own_row_lanes(t, 1000, 32, resident) == 32);
  CHECK(own_row_lanes(t, 10, 4096, resident) == 256);
  CHECK(own_row_lanes(t, 1 << 20, 4096, resident) == 4);
}

TEST_CASE("NDP_MAP_LANES pins the choice, and a bad value is ignored") {
  setenv("NDP_MAP_LANES", "8", 1);
  CHECK(ndp::exec::forced_map_lanes() == 8);
  setenv("NDP_MAP_LANES", "0", 1);
  CHECK(ndp::exec::forced_map_lanes() == 0);
  setenv("NDP_MAP_LANES", "6", 1);
  CHECK_FALSE(ndp::exec::forced_map_lanes().has_value());
  setenv("NDP_MAP_LANES", "512", 1);
  CHECK_FALSE(ndp::exec::forced_map_lanes().has_value());
  unsetenv("NDP_MAP_LANES");
  CHECK_FALSE(ndp::exec::forced_map_lanes().has_value());
}

TEST_CASE("the tuning file of a device lives in the cache folder, keyed by its name") {
  setenv("NDP_CACHE_DIR", "/tmp/ndp-cache", 1);
  CHECK(ndp::exec::tuning_file("NVIDIA H100 80GB HBM3") == "/tmp/ndp-cache/tuning/NVIDIA_H100_80GB_HBM3.txt");
  setenv("NDP_CACHE_DIR", "off", 1);
  CHECK(ndp::exec::tuning_file("X").empty());
  CHECK(ndp::exec::load_tuning("X", Tuning::gpu_defaults()).own_row_lanes == Tuning::gpu_defaults().own_row_lanes);
  CHECK(ndp::exec::load_tuning("X", Tuning::cpu_defaults()).own_row_lanes == Tuning::cpu_defaults().own_row_lanes);
  unsetenv("NDP_CACHE_DIR");
}

TEST_CASE("the cpu backend runs long rows as a map kernel where there are enough of them") {
  const Tuning t = Tuning::cpu_defaults();
  CHECK(ndp::exec::cpu_own_row_form(t, 1 << 20, 4, 16) == 0);       // short rows: flattened
  CHECK(ndp::exec::cpu_own_row_form(t, 1 << 14, 256, 16) == 1);     // long rows, many: a task a row
  CHECK(ndp::exec::cpu_own_row_form(t, 40, 1 << 16, 16) == 0);      // too few rows for 16 threads
  CHECK(ndp::exec::cpu_own_row_form(t, 64, 1 << 16, 16) == 1);
  CHECK(ndp::exec::cpu_device_name(16).find("(16 threads)") != std::string::npos);
}

TEST_CASE("a tuning file may hold blank lines, CRLF line ends and indented comments") {
  std::string error;
  std::optional<Tuning> t = Tuning::parse(
      "# ndp autotune\r\n\r\n   # a note\r\n  \r\nown_row_lanes 0 1 1 2 4 8 16 32 32 32 256 256 32 256 256 256 0 0 0 0 0\r\n",
      &error);
  REQUIRE_MESSAGE(t.has_value(), error);
  CHECK(t->own_row_lanes[10] == 256);
  CHECK_FALSE(Tuning::parse("elements 2000000000000000\nown_row_lanes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", &error));
  CHECK(error.find("line 1: `elements` needs a count from 1 to") == 0);
}

TEST_CASE("a row never gets more lanes than its length rounded up, whatever the table says") {
  Tuning t;
  t.own_row_lanes.fill(16);
  CHECK(own_row_lanes(t, 1 << 22, 6, 132 * 2048) == 8);
  CHECK(own_row_lanes(t, 1 << 22, 1, 132 * 2048) == 1);
}

TEST_CASE("split_parts fills the GPU's blocks with few long rows, never past one wave") {
  // Note [Rows over several blocks]: an H200 holds 1056 blocks of 256 threads.
  using ndp::exec::split_parts;
  unsetenv("NDP_SPLIT_PARTS");
  const int64_t places = 1056;
  CHECK(split_parts(16, 1 << 20, places) == 66);   // 1056 blocks
  CHECK(split_parts(64, 1 << 18, places) == 16);   // 1024, not 17 (1088: a second wave)
  CHECK(split_parts(256, 1 << 16, places) == 4);
  CHECK(split_parts(528, 1 << 15, places) == 2);   // half the places: still split
  CHECK(split_parts(529, 1 << 15, places) == 1);   // more: a block a row
  CHECK(split_parts(4, 20000, places) == 4);       // at least kLeastSplitShare indices a block
  CHECK(split_parts(4, 8191, places) == 1);
  CHECK(split_parts(4, 100, places) == 1);
  CHECK(split_parts(0, 1 << 20, places) == 1);
  CHECK(split_parts(1, int64_t{1} << 30, places) == places);
}

TEST_CASE("NDP_SPLIT_PARTS pins the parts within the scratch's bound, and a bad value is ignored") {
  using ndp::exec::split_parts;
  setenv("NDP_SPLIT_PARTS", "3", 1);
  CHECK(split_parts(4, 10, 1056) == 3);         // short rows too: most chunks then empty
  CHECK(split_parts(10000, 1 << 20, 1056) == 3);
  CHECK(split_parts(int64_t{1} << 15, 8, 1056) == 2);  // kMostSplitBlocks = 2^16 blocks in all
  setenv("NDP_SPLIT_PARTS", "0", 1);
  CHECK(split_parts(16, 1 << 20, 1056) == 66);  // ignored
  setenv("NDP_SPLIT_PARTS", "x", 1);
  CHECK(split_parts(16, 1 << 20, 1056) == 66);
  unsetenv("NDP_SPLIT_PARTS");
}

TEST_CASE("split_parts_within keeps a split to one wave of the kernel that runs it") {
  // A kernel whose registers allow 4 blocks of 256 threads a multiprocessor, not 8.
  using ndp::exec::split_parts_within;
  unsetenv("NDP_SPLIT_PARTS");
  CHECK(split_parts_within(66, 16, 528) == 33);
  CHECK(split_parts_within(66, 16, 1056) == 66);  // never more than asked
  CHECK(split_parts_within(4, 400, 528) == 1);    // the kernel holds fewer blocks than instances
  setenv("NDP_SPLIT_PARTS", "66", 1);
  CHECK(split_parts_within(66, 16, 528) == 66);   // pinned
  unsetenv("NDP_SPLIT_PARTS");
}
