// `ndp run` and `ndp check`.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/commands.h"

namespace ndp::cli {

/// The whole file at `path`, or the reason it cannot be read (a folder opens as a stream that
/// reads nothing, so it is refused by name).
static std::optional<std::string> read_whole(const std::string& path, std::string* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "is a folder, not a file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string(std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return std::nullopt;
}

int run_file(const CommonOptions& opts, const std::string& path) {
  std::string text;
  if (std::optional<std::string> why = read_whole(path, &text)) {
    std::fprintf(stderr, "ndp: cannot read %s: %s\n", path.c_str(), why->c_str());
    return 2;
  }
  driver::SessionOptions so;
  so.backend = opts.backend;
  driver::Session session(so);
  if (!opts.dump.empty()) {
    std::optional<driver::DumpStage> stage = driver::parse_stage(opts.dump);  // main checked it
    return stage && session.dump_file(*stage, path, text) ? 0 : 1;
  }
  bool ok = session.eval_text(path, text, /*print_answers=*/true, /*echo_definitions=*/false);
  return ok ? 0 : 1;
}

int check_files(const std::vector<std::string>& paths) {
  int status = 0;
  for (const std::string& path : paths) {
    std::string text;
    if (std::optional<std::string> why = read_whole(path, &text)) {
      std::fprintf(stderr, "ndp: cannot read %s: %s\n", path.c_str(), why->c_str());
      status = 2;
      continue;
    }
    driver::Session session;
    if (!session.check_text(path, text)) status = 1;
  }
  return status;
}

}  // namespace ndp::cli
