/* The process's interrupt request (Ctrl-C), shared by every layer that runs a program.
 *
 * Note [Cancellation]
 * A SIGINT handler (the REPL's) sets the flag; whatever runs a program polls it and stops:
 * - the interpreter at every function call and apply-to-each element, the Flat IR walk at
 *   every statement, the driver between compilation steps and between the forms of a file;
 * - the parallel loops of exec/host and exec/cpu and the chunked loops of the CPU runtime
 *   between blocks of at most kInterruptBlock elements, so that a single statement over
 *   10^9 elements stops within a fraction of a second too. A loop that stopped early leaves
 *   its output unfinished, so it never returns normally: it throws ndp::Interrupted right
 *   after its parallel region (never inside one, and a loop nested in another parallel
 *   region does not poll at all), which the Flat IR walk turns into the runtime error
 *   "Interrupted." at the statement; the runtime's C entry points return NDP_INTERRUPTED
 *   instead (runtime/cpu/c_abi.h).
 * Whoever reports the interruption clears the flag (take_interrupt), so the next evaluation
 * starts clean. At a prompt, Ctrl-C drops the line being typed (cli/repl_command.cpp).
 */
#pragma once

#include <atomic>
#include <cstdint>

namespace ndp {

/// The flag itself: one object in the whole process (an inline function's static).
inline std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

/// Polled by loops: cheap, never clears.
inline bool interrupt_pending() { return interrupt_flag().load(std::memory_order_relaxed); }

/// True once per request: the caller that reports the interruption clears it.
inline bool take_interrupt() { return interrupt_flag().exchange(false); }

/// Thrown by a loop that stopped early for an interrupt request.
struct Interrupted {};

/// Elements a parallel loop processes between two polls of the flag: small enough that a
/// block takes well under a millisecond, large enough that a poll costs nothing.
inline constexpr int64_t kInterruptBlock = int64_t{1} << 18;

}  // namespace ndp
