// The `hgc` driver: parse, verify, and emit or run a graph, following the
// contract in the project's design (see README.md).
#ifndef HGC_DRIVER_DRIVER_H_
#define HGC_DRIVER_DRIVER_H_

#include <ostream>

#include "driver/options.h"

namespace hgc {

// Runs the driver. Results go to `out`, diagnostics to `err`. Returns the
// process exit code: 0 on success, 1 on any error (including check FAIL).
// Nothing is written to `out` before the input has been parsed and checked,
// so a failing run never leaves partial output.
int RunDriver(const DriverOptions& options, std::ostream& out,
              std::ostream& err);

}  // namespace hgc

#endif  // HGC_DRIVER_DRIVER_H_
