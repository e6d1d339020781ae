// The interpreter's table of open streams (library.md §13.3): a stream value is an index here.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

namespace ndp::lang::eval {

/// Handles 0..3 are `nullstr`, `stdin`, `stdout`, `stderr` (prim_stream(n)); files and pipes
/// opened by the program get the following handles and are closed with the table. `stdout`
/// is the interpreter's output stream, so program output on it interleaves with print_string.
class StreamTable {
 public:
  static constexpr int64_t kNull = 0, kStdin = 1, kStdout = 2, kStderr = 3;

  explicit StreamTable(std::FILE* out);
  ~StreamTable();
  StreamTable(const StreamTable&) = delete;
  StreamTable& operator=(const StreamTable&) = delete;

  int64_t add(std::FILE* f);
  /// The open FILE of a handle, or nullptr (nullstr, closed, unknown).
  std::FILE* get(int64_t handle) const;
  /// Writes to the standard streams, pipes, terminals and sockets are flushed at once: a reader
  /// at the other end (a spawned command, a person) may be waiting for them. Regular files keep
  /// their buffer.
  bool flushes_each_write(int64_t handle) const;
  /// Closes a program-opened stream; the standard streams stay open. False if not open.
  bool close(int64_t handle);

 private:
  std::vector<std::FILE*> files_;
  std::vector<bool> flush_each_write_;
};

}  // namespace ndp::lang::eval
