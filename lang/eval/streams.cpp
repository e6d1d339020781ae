// The stream table: standard streams plus the files and pipes a program opens.
#include "lang/eval/streams.h"

#include <sys/stat.h>

namespace ndp::lang::eval {

StreamTable::StreamTable(std::FILE* out)
    : files_{nullptr, stdin, out, stderr}, flush_each_write_{false, true, true, true} {}

StreamTable::~StreamTable() {
  for (size_t h = kStderr + 1; h < files_.size(); ++h)
    if (files_[h]) std::fclose(files_[h]);
}

int64_t StreamTable::add(std::FILE* f) {
  struct stat st;
  bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  files_.push_back(f);
  flush_each_write_.push_back(!regular);
  return static_cast<int64_t>(files_.size() - 1);
}

std::FILE* StreamTable::get(int64_t handle) const {
  if (handle < 0 || handle >= static_cast<int64_t>(files_.size())) return nullptr;
  return files_[static_cast<size_t>(handle)];
}

bool StreamTable::flushes_each_write(int64_t handle) const {
  return get(handle) && flush_each_write_[static_cast<size_t>(handle)];
}

bool StreamTable::close(int64_t handle) {
  std::FILE* f = get(handle);
  if (!f) return false;
  if (handle <= kStderr) {
    std::fflush(f);
    return true;
  }
  files_[static_cast<size_t>(handle)] = nullptr;
  return std::fclose(f) == 0;
}

}  // namespace ndp::lang::eval
