/* The CPU runtime's primitives as plain-C entry points (host arrays; see ndp/runtime.h). */
#pragma once

#include "ndp/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Conventions: `type` names the element type of every untyped array; index and length
 * arrays are int64_t; flags are bool bytes (0/1). The caller allocates outputs with the sizes
 * the descriptors imply. Every call returns a status record and never throws. Semantics are
 * those of runtime/cpu/primitives.h (library.md §2.3). */

/* Descriptors. */
ndp_status ndp_cpu_offsets_from_lengths(const int64_t* lengths, int64_t count, int64_t* offsets /* count+1 */);
ndp_status ndp_cpu_lengths(ndp_segdes s, int64_t* out /* s.count */);
ndp_status ndp_cpu_flatten_lengths(ndp_segdes outer, ndp_segdes inner, int64_t* out /* outer.count */);
ndp_status ndp_cpu_append_lengths(ndp_segdes a, ndp_segdes b, int64_t* out /* a.count */);
ndp_status ndp_cpu_segment_ids(ndp_segdes s, int64_t* out /* s.total */);
ndp_status ndp_cpu_head_flags(ndp_segdes s, uint8_t* out /* s.total */);
ndp_status ndp_cpu_segdes_validate(ndp_segdes s);

/* Scans and reductions. */
ndp_status ndp_cpu_seg_scan(ndp_elem_type type, ndp_op op, int inclusive, const void* in, ndp_segdes s, void* out);
ndp_status ndp_cpu_seg_reduce(ndp_elem_type type, ndp_op op, const void* in, ndp_segdes s, void* out /* s.count */);

/* Permutations. */
ndp_status ndp_cpu_permute(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes s, void* out);
ndp_status ndp_cpu_dpermute(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes sv,
                            const void* defaults, ndp_segdes sd, void* out);
ndp_status ndp_cpu_bpermute(ndp_elem_type type, const void* v, ndp_segdes sv, const int64_t* idx, ndp_segdes si,
                            void* out);

/* Per-segment element access. */
ndp_status ndp_cpu_extract(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes s, void* out);
ndp_status ndp_cpu_replace(ndp_elem_type type, const void* v, const int64_t* idx, const void* x, ndp_segdes s,
                           void* out);

/* Generators. */
ndp_status ndp_cpu_dist(ndp_elem_type type, const void* x, ndp_segdes s, void* out);
ndp_status ndp_cpu_index(ndp_elem_type type, const void* start, const void* stride, ndp_segdes s, void* out);

/* Selection: lengths first (gives the total), then the data of each field. */
ndp_status ndp_cpu_pack_lengths(const uint8_t* flags, ndp_segdes s, int64_t* out_lengths, int64_t* total);
ndp_status ndp_cpu_pack(ndp_elem_type type, const void* v, const uint8_t* flags, int64_t n, void* out,
                        int64_t out_count);

/* Append, reverse, rotate. */
ndp_status ndp_cpu_append(ndp_elem_type type, const void* a, ndp_segdes sa, const void* b, ndp_segdes sb,
                          ndp_segdes so, void* out);
ndp_status ndp_cpu_reverse(ndp_elem_type type, const void* v, ndp_segdes s, void* out);
ndp_status ndp_cpu_rotate(ndp_elem_type type, const void* v, const int64_t* shift, ndp_segdes s, void* out);

/* Ordering. */
ndp_status ndp_cpu_rank(ndp_elem_type type, const void* v, ndp_segdes s, ndp_order order, int64_t* out);
ndp_status ndp_cpu_sort(ndp_elem_type type, const void* v, ndp_segdes s, ndp_order order, void* out);

/* Irregular reduction: out has n_dest elements, idx and vals n_vals. */
ndp_status ndp_cpu_combine(ndp_elem_type type, ndp_op op, const void* dest, int64_t n_dest, const int64_t* idx,
                           const void* vals, int64_t n_vals, void* out);

#ifdef __cplusplus
}
#endif
