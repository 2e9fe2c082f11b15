// hgc: the command-line driver. Flags only; the work is in driver.cc.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "driver/options.h"

int main(int argc, char** argv) {
  // A write past the file-size limit fails with EFBIG (reported, with the
  // outputs left as they were) instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // Under `bazel run`, relative paths mean the user's directory, not the
  // runfiles tree Bazel starts us in.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(dir) != 0) {
      std::cerr << "hgc: error: cannot enter '" << dir << "'\n";
      return 1;
    }
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<hgc::DriverOptions> options = hgc::ParseOptions(args);
  if (!options.ok()) {
    std::cerr << "hgc: error: " << options.status().message() << "\n";
    return 1;
  }
  if (options->help) {
    std::cout << hgc::HelpText();
    return 0;
  }
  // The JIT opens the cache HGC_CACHE_DIR names on the first compile; no
  // thread runs yet.
  if (!options->cache_dir.empty()) {
    setenv("HGC_CACHE_DIR", options->cache_dir.c_str(), /*overwrite=*/1);
  }
  return hgc::RunDriver(*options, std::cout, std::cerr);
}
