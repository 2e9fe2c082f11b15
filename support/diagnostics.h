// Errors with source locations.
//
// Every error a user's input can cause is an absl::Status. Errors that point
// into a source file carry the location as a status payload, so layers that
// know nothing of files (ir/, passes/) can attach locations and only the
// reporting layer (the driver) formats them:
//
//   model.graph:12:13: error: unknown op 'matmull'
//     %3 = matmull(%2, %w1)
//               ^
#ifndef HGC_SUPPORT_DIAGNOSTICS_H_
#define HGC_SUPPORT_DIAGNOSTICS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "support/source_location.h"

namespace hgc {

// InvalidArgument(message) located at `loc` (unlocated if !loc.known()).
absl::Status ErrorAt(SourceLoc loc, absl::string_view message);

// `status` with `loc` attached, unless it already has a location or `loc` is
// unknown. Keeps the code and message.
absl::Status AttachLoc(absl::Status status, SourceLoc loc);

// The location attached by ErrorAt / AttachLoc, if any.
std::optional<SourceLoc> GetLoc(const absl::Status& status);

// "FILE:LINE:COL: error: MESSAGE\n<source line>\n<caret>\n" for a located
// status, "error: MESSAGE\n" otherwise. `default_file` names the file in
// errors without a location (e.g. an unreadable file); may be empty.
std::string FormatError(const absl::Status& status, const SourceManager& sm,
                        absl::string_view default_file = "");

}  // namespace hgc

#endif  // HGC_SUPPORT_DIAGNOSTICS_H_
