// Test helper: ptxas, to assemble the PTX the code generator makes where the toolkit is here.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace ndp::test {

/// ptxas as tools/check-ptx.sh finds it: NDP_PTXAS, else on PATH, else the CUDA toolkit's;
/// empty when none is executable.
inline std::string find_ptxas() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("NDP_PTXAS")) candidates.push_back(e);
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t b = 0, e; b <= p.size(); b = e + 1) {
      e = p.find(':', b);
      if (e == std::string::npos) e = p.size();
      if (e > b) candidates.push_back(p.substr(b, e - b) + "/ptxas");
    }
  }
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

/// Whether `ptxas` assembles `ptx` for sm_90.
inline bool ptxas_accepts(const std::string& ptxas, const std::string& ptx) {
  char path[] = "/tmp/ndp_kernel_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return false;
  close(fd);
  std::string file = std::string(path) + ".ptx";
  std::rename(path, file.c_str());
  std::ofstream(file) << ptx;
  std::string cmd = ptxas + " -arch=sm_90 -o /dev/null " + file + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::remove(file.c_str());
  return rc == 0;
}

/// Checks that ptxas assembles `ptx`, where a ptxas is here (else says it was not checked).
inline void check_assembles(const std::string& ptx) {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) {
    MESSAGE("ptxas not found: PTX not assembled");
    return;
  }
  CHECK_MESSAGE(ptxas_accepts(ptxas, ptx), "ptxas rejected:\n" << ptx);
}

}  // namespace ndp::test
