// Reuse of large vector buffers on the cpu backend.
//
// Note [Buffer pool]
// Flat programs allocate and free vectors of many megabytes at every statement. glibc serves
// such blocks with fresh mmaps and unmaps them at free, so each new vector page-faults and the
// kernel zeroes every page (measured: a third of the primes benchmark). Buffers of at least
// kPooledMinBytes are therefore rounded up to a power of two and, when freed, kept in a
// per-size free list (up to pooled_max_cached_bytes() in all) for the next allocation of that
// class. Rounding costs address space only: pages beyond what a vector uses are never touched.
// Smaller buffers use operator new as before. Thread-safe.
//
// Those smaller buffers come and go at the top of malloc's heap, and glibc gives the top back
// to the kernel whenever more than 128 KiB is free there (M_TRIM_THRESHOLD), so the next
// statement's buffers fault their pages in again. Measured on Delaunay on 16 cores: twice the
// page faults, a run 1.5x slower, until any long-lived allocation pinned the top. So the pool
// also sets glibc to keep up to kHeapKeptBytes of free heap, and to serve blocks up to 32 MiB
// from the heap (buffer_pool.cpp).
#pragma once

#include <cstddef>

namespace ndp::exec::host {

inline constexpr size_t kPooledMinBytes = size_t{1} << 20;
/// The most the free lists hold: an eighth of the machine's memory, from 1 to 16 GiB. A
/// recursion level over 10^7 points makes a dozen vectors of 160 MB (quickhull's), and with a
/// cap of 1 GiB most of them came fresh from the kernel: on 16 cores, 3·10^6 page faults and as
/// much system time as work.
size_t pooled_max_cached_bytes();
inline constexpr size_t kHeapKeptBytes = size_t{256} << 20;

/// `bytes` (at least 1) of uninitialised memory aligned to 64 bytes.
void* pooled_alloc(size_t bytes);
/// Gives back a block from pooled_alloc of the same `bytes`.
void pooled_free(void* p, size_t bytes) noexcept;
/// The bytes the free lists hold now (tests and diagnostics).
size_t pooled_cached_bytes();

}  // namespace ndp::exec::host
