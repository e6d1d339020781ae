// `ndp run` and `ndp check`.
#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "cli/commands.h"

namespace ndp::cli {

static bool read_whole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

int run_file(const CommonOptions& opts, const std::string& path) {
  std::string text;
  if (!read_whole(path, &text)) {
    std::fprintf(stderr, "ndp: cannot read %s\n", path.c_str());
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
    if (!read_whole(path, &text)) {
      std::fprintf(stderr, "ndp: cannot read %s\n", path.c_str());
      status = 2;
      continue;
    }
    driver::Session session;
    if (!session.check_text(path, text)) status = 1;
  }
  return status;
}

}  // namespace ndp::cli
