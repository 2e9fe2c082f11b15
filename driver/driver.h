// The `hgc` driver: parse, verify, and emit or run a graph, following the
// contract in the project's design (see README.md).
#ifndef HGC_DRIVER_DRIVER_H_
#define HGC_DRIVER_DRIVER_H_

#include <ostream>
#include <string>

#include "driver/options.h"

namespace hgc {

// Runs the driver. Results go to `out`, diagnostics to `err`. Returns the
// process exit code: 0 on success, 1 on any error (including check FAIL).
// Nothing is written to `out` before the input has been parsed and checked,
// so a failing run never leaves partial output.
//
// Passes: the pipeline from the options runs over the whole module (none
// for --emit=ir without a pipeline, O2 for --run without one); IR dumps and
// timing go to `err`. --run executes the entry graph after the passes, and
// --check compares it with the entry graph as parsed.
int RunDriver(const DriverOptions& options, std::ostream& out,
              std::ostream& err);

// The text of --list-passes: every registered pass with its one-line
// summary and options, then the named pipelines.
std::string ListPassesText();

}  // namespace hgc

#endif  // HGC_DRIVER_DRIVER_H_
