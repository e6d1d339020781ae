// Side-effecting primitives (library.md §13): console output, errors, streams and files,
// object I/O, shell commands, environment, spawn.
//
// Note [I/O results]
// Every fallible stream operation returns its result, then an ok flag, then a message, as the
// signatures in prims.def say (right-nested tuples). Messages: CMU's where library.md gives
// them (`ERROR: while trying to open NAME` + newline + the system's reason; `End of File.`),
// otherwise `ERROR: invalid stream.` for nullstr/closed streams and `ERROR: ` + the system's
// reason for failed writes. `error(msg)` writes `ERROR: msg` and a newline to the program's
// output and then fails the form with the runtime error `msg`. The evaluation thread blocks
// SIGPIPE (interp.cpp), so writing to a pipe whose reader is gone fails instead of killing
// the process.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lang/diagnostics.h"
#include "include/ndp/interrupt.h"
#include "lang/eval/object_format.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/streams.h"
#include "lang/runtime_errors.h"

namespace ndp::lang::eval {

using core::PrimId;

namespace {

/// A read that ended because Ctrl-C interrupted the wait is the runtime error "Interrupted.",
/// not an end of file: a cancelled computation prints no answer.
void fail_if_interrupted(const PrimCall& c, std::FILE* f) {
  if (!take_interrupt()) return;
  std::clearerr(f);
  c.fail(message(RuntimeErrorId::Interrupted));
}

Value status(bool ok, std::string_view msg) { return Value::pair(Value::bool_(ok), Value::string(msg)); }
Value ok_status() { return status(true, ""); }
const char* kInvalid = "ERROR: invalid stream.";

std::string system_error() { return std::string("ERROR: ") + std::strerror(errno); }

Value open_file(const PrimCall& c, const Value& name_v, const char* mode) {
  std::string name = name_v.to_string();
  std::FILE* f = std::fopen(name.c_str(), mode);
  if (!f) {
    std::string msg = "ERROR: while trying to open " + name + "\n" + std::strerror(errno);
    return Value::tuple({Value::stream(StreamTable::kNull), Value::bool_(false), Value::string(msg)});
  }
  return Value::tuple({Value::stream(c.env->streams->add(f)), Value::bool_(true), Value::string("")});
}

Value write_text(const PrimCall& c, const std::string& text, const Value& stream) {
  int64_t h = stream.as_stream();
  std::FILE* f = c.env->streams->get(h);
  if (!f) return status(false, kInvalid);
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) return status(false, system_error());
  if (c.env->streams->flushes_each_write(h)) std::fflush(f);
  return ok_status();
}

Value read_string(const PrimCall& c, const Value* a) {
  std::string delims = a[0].to_string();
  int64_t maxlen = a[1].as_int();
  std::FILE* f = c.env->streams->get(a[2].as_stream());
  if (!f) return Value::tuple({Value::pair(Value::string(""), Value::int_(-1)), Value::bool_(false), Value::string(kInvalid)});
  std::string s;
  int64_t why;
  for (;;) {
    if (maxlen >= 0 && static_cast<int64_t>(s.size()) >= maxlen) {
      why = -2;
      break;
    }
    int ch = std::getc(f);
    if (ch == EOF) {
      fail_if_interrupted(c, f);
      why = -1;
      break;
    }
    if (delims.find(static_cast<char>(ch)) != std::string::npos) {
      why = ch;
      break;
    }
    s += static_cast<char>(ch);
  }
  return Value::tuple({Value::pair(Value::string(s), Value::int_(why)), Value::bool_(true), Value::string("")});
}

/// Runs `/bin/sh -c cmd` with `input` on its standard input; returns its standard output.
std::string shell_command(const std::string& cmd, const std::string& input, std::FILE* out) {
  std::fflush(out);
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) return "";
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return "";
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  std::string result;
  if (pid < 0) {
    close(to_child[1]);
    close(from_child[0]);
    return result;
  }
  // Feed and drain at once: a command that writes much before reading would otherwise
  // deadlock against us.
  size_t written = 0;
  int wfd = to_child[1];
  if (input.empty()) {
    close(wfd);
    wfd = -1;
  } else {
    fcntl(wfd, F_SETFL, O_NONBLOCK);
  }
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{from_child[0], POLLIN, 0}, {wfd, POLLOUT, 0}};
    if (poll(fds, wfd >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (wfd >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(wfd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
      if (written == input.size()) {
        close(wfd);
        wfd = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(from_child[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      result.append(buf, static_cast<size_t>(n));
    }
  }
  if (wfd >= 0) close(wfd);
  close(from_child[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return result;
}

Value spawn(const PrimCall& c, const Value* a) {
  std::string cmd = a[0].to_string();
  StreamTable& streams = *c.env->streams;
  auto failure = [&](const std::string& msg) {
    Value null = Value::stream(StreamTable::kNull);
    return Value::tuple({Value::tuple({null, null, null}), Value::bool_(false), Value::string(msg)});
  };
  // child_fd[k]: what the command gets as fd k; parent_fd[k]: our end of a new pipe (or -1).
  int child_fd[3], parent_fd[3] = {-1, -1, -1};
  auto close_new = [&](int upto) {
    for (int k = 0; k < upto; ++k)
      if (parent_fd[k] >= 0) {
        close(parent_fd[k]);
        close(child_fd[k]);
      }
  };
  for (int k = 0; k < 3; ++k) {
    int64_t h = a[1 + k].as_stream();
    if (h == StreamTable::kNull) {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) {
        std::string msg = system_error();
        close_new(k);
        return failure(msg);
      }
      child_fd[k] = k == 0 ? p[0] : p[1];
      parent_fd[k] = k == 0 ? p[1] : p[0];
    } else {
      std::FILE* f = streams.get(h);
      if (!f) {
        close_new(k);
        return failure(kInvalid);
      }
      std::fflush(f);
      child_fd[k] = fileno(f);
    }
  }
  std::fflush(c.env->out);
  // Double fork: the grandchild runs the command and is reparented to init, so nobody has to
  // reap it and no zombie remains.
  pid_t pid = fork();
  if (pid == 0) {
    if (fork() == 0) {
      int fds[3];
      for (int k = 0; k < 3; ++k) fds[k] = fcntl(child_fd[k], F_DUPFD_CLOEXEC, 3);
      for (int k = 0; k < 3; ++k) dup2(fds[k], k);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    _exit(0);
  }
  if (pid < 0) {
    std::string msg = system_error();
    close_new(3);
    return failure(msg);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  Value result[3];
  for (int k = 0; k < 3; ++k) {
    if (parent_fd[k] < 0) {
      result[k] = a[1 + k];
      continue;
    }
    close(child_fd[k]);
    std::FILE* f = fdopen(parent_fd[k], k == 0 ? "w" : "r");
    result[k] = Value::stream(streams.add(f));
  }
  return Value::tuple({Value::tuple({result[0], result[1], result[2]}), Value::bool_(true), Value::string("")});
}

}  // namespace

Value apply_io_prim(const PrimCall& c, const Value* a) {
  StreamTable& streams = *c.env->streams;
  switch (c.id) {
    case PrimId::PrintChar:
      std::fputc(a[0].as_char(), c.env->out);
      std::fflush(c.env->out);
      return Value::bool_(true);
    case PrimId::PrintString: {
      std::string s = a[0].to_string();
      std::fwrite(s.data(), 1, s.size(), c.env->out);
      std::fflush(c.env->out);
      return Value::bool_(true);
    }
    case PrimId::Error: {
      std::string msg = a[0].to_string();
      std::fprintf(c.env->out, "ERROR: %s\n", msg.c_str());
      std::fflush(c.env->out);
      c.fail(msg);
    }
    case PrimId::RuntimeErrorPrim: c.fail(a[0].to_string());
    case PrimId::StreamConst: return Value::stream(a[0].as_int());
    case PrimId::OpenInFile: return open_file(c, a[0], "r");
    case PrimId::OpenOutFile: return open_file(c, a[0], "w");
    case PrimId::OpenAppendFile: return open_file(c, a[0], "a");
    case PrimId::CloseFile:
      if (!streams.get(a[0].as_stream())) return status(false, kInvalid);
      return streams.close(a[0].as_stream()) ? ok_status() : status(false, system_error());
    case PrimId::WriteChar: return write_text(c, std::string(1, static_cast<char>(a[0].as_char())), a[1]);
    case PrimId::WriteString: return write_text(c, a[0].to_string(), a[1]);
    case PrimId::WriteObject: {
      std::string text, error;
      if (!write_object_text(a[0], c.type_arg(0), *c.env->types, &text, &error)) return status(false, error);
      return write_text(c, text, a[1]);
    }
    case PrimId::ReadChar: {
      std::FILE* f = streams.get(a[0].as_stream());
      if (!f) return Value::tuple({Value::char_(' '), Value::bool_(false), Value::string(kInvalid)});
      int ch = std::getc(f);
      if (ch == EOF) fail_if_interrupted(c, f);
      if (ch == EOF)
        return Value::tuple(
            {Value::char_(' '), Value::bool_(false), Value::string(message(RuntimeErrorId::EndOfFile))});
      return Value::tuple({Value::char_(static_cast<uint8_t>(ch)), Value::bool_(true), Value::string("")});
    }
    case PrimId::ReadString: return read_string(c, a);
    case PrimId::ReadObject: {
      std::FILE* f = streams.get(a[1].as_stream());
      if (!f) return Value::tuple({identity_of(a[0]), Value::bool_(false), Value::string(kInvalid)});
      Value v;
      std::string error;
      if (!read_object_from(f, c.type_arg(0), *c.env->types, &v, &error)) {
        fail_if_interrupted(c, f);
        return Value::tuple({identity_of(a[0]), Value::bool_(false), Value::string(error)});
      }
      return Value::tuple({v, Value::bool_(true), Value::string("")});
    }
    case PrimId::ShellCommand:
      return Value::string(shell_command(a[0].to_string(), a[1].to_string(), c.env->out));
    case PrimId::GetEnv: {
      const char* v = std::getenv(a[0].to_string().c_str());
      return Value::string(v ? v : "");
    }
    case PrimId::Spawn: return spawn(c, a);
    default: break;
  }
  throw InternalError(std::string("internal error: not an I/O primitive: ") + core::prim_info(c.id).name);
}

}  // namespace ndp::lang::eval
