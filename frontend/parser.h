// The `.graph` parser: recursive descent over the lexer's tokens, building
// IR through hgc::Builder (so every op is type-checked by the op registry as
// it is read) and verifying the result.
//
// Grammar: design.md, "The `.graph` text format", with these decisions:
//   - keywords (graph, return, const, true, false) and dtype names are
//     identifiers recognized by context: `%y = f32(%x)` is an unknown op,
//     `{f32 = 1}` an unknown attribute;
//   - attributes also take `@name` graph references (for fused graphs); every
//     such reference must name a graph of the module, before or after;
//   - exactly one `return`, the last statement of its graph; its values must
//     match the declared result types in number and type;
//   - attribute lists nest at most kMaxAttrNesting deep; a type has at most
//     kMaxRank (ir/tensor_type.h) dimensions and 2^60 elements, reported at
//     the offending dimension or at the type;
//   - value names are per graph; graph names are unique in the module.
//
// Errors: InvalidArgument located (support/diagnostics.h) at the offending
// token; only the first error is reported. hgc::FormatError(status, sm) gives
// "FILE:LINE:COL: error: MESSAGE" with the line and a caret. Any input, of
// any size or content, gives a Module or an error in time linear in its
// size: nothing recurses without bound or aborts.
#ifndef HGC_FRONTEND_PARSER_H_
#define HGC_FRONTEND_PARSER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "support/source_location.h"

namespace hgc {

// How deep `[` attribute lists may nest ("nesting too deep" beyond).
inline constexpr int kMaxAttrNesting = 32;

// The largest file ParseFile reads (256 MiB).
inline constexpr int64_t kMaxSourceFileSize = int64_t{256} << 20;

// Parses `text`, registered in `sm` under `filename`, into a verified
// Module. Errors are InvalidArgument located at the offending token.
absl::StatusOr<Module> ParseModule(absl::string_view text,
                                   absl::string_view filename,
                                   SourceManager& sm);

// ParseModule on the contents of the file at `path` (registered under
// `path`). A file that cannot be opened is NotFound (no such file) or
// InvalidArgument (not a regular file, unreadable, larger than
// kMaxSourceFileSize), unlocated, with a message naming the file. The file
// is opened without blocking, so a FIFO is refused rather than waited on
// (support/file_io.h).
absl::StatusOr<Module> ParseFile(const std::string& path, SourceManager& sm);

}  // namespace hgc

#endif  // HGC_FRONTEND_PARSER_H_
