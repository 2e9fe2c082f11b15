// Parses pipeline strings: a comma-separated list of pass arguments, each
// optionally followed by options in braces:
//
//   canonicalize,fold-constants{max-elements=4096},fusion,dce
//   mlp-fusion{max-intermediate-bytes=524288 },  cse
//
// Grammar (whitespace allowed between tokens):
//   pipeline := [entry {',' entry}]
//   entry    := NAME ['{' [option {(',' | ' ') option}] '}']
//   option   := NAME '=' VALUE
//   NAME     := [A-Za-z0-9_-]+        VALUE := any run of characters other
//                                              than ',', '}', '{', '=' and
//                                              whitespace
// Names are not resolved here (a name may be a pass or a named pipeline such
// as O2; see passes/pipelines.h).
#ifndef HGC_PASSES_PIPELINE_PARSER_H_
#define HGC_PASSES_PIPELINE_PARSER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hgc {

// One entry of a pipeline: a name and its options in the order written.
struct PipelineEntry {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
};

// Parses `text`. An empty (or all-whitespace) string is an empty pipeline.
// Errors are InvalidArgument "pipeline '...': <what> at column N" (columns
// from 1).
absl::StatusOr<std::vector<PipelineEntry>> ParsePipeline(
    absl::string_view text);

// The canonical spelling of `entries` ("a,b{k=v,k2=v2}").
std::string PipelineToString(const std::vector<PipelineEntry>& entries);

}  // namespace hgc

#endif  // HGC_PASSES_PIPELINE_PARSER_H_
