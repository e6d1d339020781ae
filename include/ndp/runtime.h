/* The runtime's plain-C ABI: element types, segment descriptors, operators and status records. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Note [Element storage]
 * Every element type is stored as a flat array of its C type: i64 int64_t, f64 double,
 * i32 int32_t, f32 float, bool one byte holding 0 or 1, char one byte (codes 0..255).
 * Integer arithmetic wraps (two's complement); float arithmetic is IEEE. */
typedef enum ndp_elem_type {
  NDP_I64 = 0,
  NDP_F64 = 1,
  NDP_I32 = 2,
  NDP_F32 = 3,
  NDP_BOOL = 4,
  NDP_CHAR = 5
} ndp_elem_type;

/* Note [Segment descriptors]
 * A descriptor cuts a flat vector of `total` elements into `count` contiguous segments.
 * Irregular form: `lengths` has `count` entries, `offsets` has `count + 1` entries with
 * offsets[0] = 0, offsets[k+1] = offsets[k] + lengths[k] and offsets[count] = total.
 * Regular form: both arrays are null and every segment has `regular_length` elements
 * (total = count * regular_length). Empty segments and count = 0 are legal.
 * A descriptor never owns its arrays. */
typedef struct ndp_segdes {
  int64_t count;
  int64_t total;
  const int64_t* lengths;
  const int64_t* offsets;
  int64_t regular_length;
} ndp_segdes;

/* Scan and reduction operators (library.md §5). + and * need a number type (i64 f64 i32
 * f32); max and min an ordinal (numbers and char); and, or, xor a logical (i64 i32 bool,
 * bitwise on integers). Identities: + 0, * 1, max the least value (-inf for floats, code 0
 * for char), min the greatest (+inf, code 255), and all bits set / true, or and xor 0 / false.
 * Float max/min never let a NaN displace a number. */
typedef enum ndp_op {
  NDP_OP_PLUS = 0,
  NDP_OP_MULT = 1,
  NDP_OP_MAX = 2,
  NDP_OP_MIN = 3,
  NDP_OP_AND = 4,
  NDP_OP_OR = 5,
  NDP_OP_XOR = 6
} ndp_op;

/* What a status record's fields mean for each code:
 *   NDP_INDEX_OUT_OF_BOUNDS  position: the flat position of the offending index element
 *                            (for per-segment operations: the segment); index: its value;
 *                            length: the bound it had to be below.
 *   NDP_LENGTH_MISMATCH      position: the segment whose lengths disagree, or -1 for whole
 *                            vectors; index: the length found; length: the length expected.
 *   NDP_NOT_A_PERMUTATION    position: the lowest source position whose target an earlier
 *                            position of the same segment already took; index: that
 *                            target; length: the segment length.
 *   NDP_NEGATIVE_LENGTH      position: the offending entry of a lengths vector; index: its value.
 *   NDP_UNSUPPORTED          the operator is not defined for the element type.
 *   NDP_INVALID_ARGUMENT     a malformed descriptor or a null array where data is needed.
 *   NDP_OUT_OF_MEMORY        scratch space could not be allocated.
 *   NDP_INTERNAL_ERROR       a bug in the runtime.
 *   NDP_INTERRUPTED          stopped early by an interrupt request (ndp/interrupt.h); the
 *                            outputs are unfinished.
 * When several elements fail, the record names the one with the lowest position, so the
 * report is the same for every thread count. Fields that carry nothing are -1. */
typedef enum ndp_status_code {
  NDP_OK = 0,
  NDP_INDEX_OUT_OF_BOUNDS = 1,
  NDP_LENGTH_MISMATCH = 2,
  NDP_NOT_A_PERMUTATION = 3,
  NDP_NEGATIVE_LENGTH = 4,
  NDP_UNSUPPORTED = 5,
  NDP_INVALID_ARGUMENT = 6,
  NDP_OUT_OF_MEMORY = 7,
  NDP_INTERNAL_ERROR = 8,
  NDP_INTERRUPTED = 9
} ndp_status_code;

typedef struct ndp_status {
  ndp_status_code code;
  int64_t position;
  int64_t index;
  int64_t length;
} ndp_status;

/* Stable sort orders for rank and sort. */
typedef enum ndp_order { NDP_ASCENDING = 0, NDP_DESCENDING = 1 } ndp_order;

/* A regular descriptor: `count` segments of `length` elements each. */
static inline ndp_segdes ndp_segdes_regular(int64_t count, int64_t length) {
  ndp_segdes s;
  s.count = count;
  s.total = count * length;
  s.lengths = 0;
  s.offsets = 0;
  s.regular_length = length;
  return s;
}

/* An irregular descriptor over caller-owned arrays (offsets has count + 1 entries). */
static inline ndp_segdes ndp_segdes_irregular(int64_t count, const int64_t* lengths, const int64_t* offsets) {
  ndp_segdes s;
  s.count = count;
  s.total = offsets[count];
  s.lengths = lengths;
  s.offsets = offsets;
  s.regular_length = 0;
  return s;
}

/* A flat vector of n elements: the one-segment case. */
static inline ndp_segdes ndp_segdes_flat(int64_t n) { return ndp_segdes_regular(1, n); }

/* The message for a status code ("index out of bounds", ...), for logs and tests. */
const char* ndp_status_name(ndp_status_code code);

#ifdef __cplusplus
}
#endif
