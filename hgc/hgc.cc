// The public facade over frontend/ (parsing), ir/ (verification), the
// compile session (hgc/session.h: passes and codegen) and runtime/ (the
// executable). It adds argument checking with messages for API users and
// formats located errors for text input; everything else is delegated.
#include "hgc/hgc.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/memory_budget.h"
#include "frontend/parser.h"
#include "hgc/compile_cache.h"
#include "hgc/session.h"
#include "ir/verifier.h"
#include "runtime/executable.h"
#include "support/diagnostics.h"
#include "support/source_location.h"
#include "support/status_macros.h"
#include "support/system_limits.h"

namespace hgc {
namespace {

// A located error becomes "FILE:LINE:COL: error: ..." with the source line
// and a caret; other errors keep their code and message.
absl::Status Formatted(const absl::Status& status, const SourceManager& sm,
                       absl::string_view filename) {
  if (!GetLoc(status).has_value()) return status;
  std::string text = FormatError(status, sm, filename);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return absl::Status(status.code(), text);
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileParsed(
    absl::StatusOr<Module> module, const Options& options,
    const SourceManager& sm, absl::string_view filename) {
  if (!module.ok()) return Formatted(module.status(), sm, filename);
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
      Compile(*module, options);
  if (!compiled.ok()) return Formatted(compiled.status(), sm, filename);
  return compiled;
}

}  // namespace

CompiledGraph::~CompiledGraph() = default;

int CompiledGraph::num_threads() const { return executable_->num_threads(); }

bool CompiledGraph::has_constants() const {
  for (bool c : param_is_const_) {
    if (c) return true;
  }
  return false;
}

absl::Status CompiledGraph::SetConstants(absl::Span<const Tensor> params) {
  if (static_cast<int>(params.size()) != num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetConstants: @", name_, " has ", num_params(),
                     " parameters, got ", params.size(), " tensors"));
  }
  for (int i = 0; i < num_params(); ++i) {
    if (!param_is_const_[i]) continue;
    if (params[i].raw() == nullptr || params[i].type() != param_types_[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SetConstants: const parameter %", param_names_[i], " needs a ",
          param_types_[i].ToString(), " tensor, got ",
          params[i].raw() == nullptr ? std::string("no data")
                                     : params[i].type().ToString()));
    }
  }
  return executable_->SetConstants(params);
}

absl::Status CompiledGraph::SetConstants(absl::Span<const void* const> params) {
  if (static_cast<int>(params.size()) != num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetConstants: @", name_, " has ", num_params(),
                     " parameters, got ", params.size(), " pointers"));
  }
  std::vector<Tensor> tensors(params.size());
  for (int i = 0; i < num_params(); ++i) {
    if (!param_is_const_[i]) continue;
    if (params[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SetConstants: null pointer for const parameter %", param_names_[i]));
    }
    HGC_ASSIGN_OR_RETURN(tensors[i], Tensor::Create(param_types_[i]));
    if (tensors[i].size_in_bytes() > 0) {
      std::memcpy(tensors[i].mutable_raw(), params[i],
                  static_cast<size_t>(tensors[i].size_in_bytes()));
    }
  }
  return executable_->SetConstants(tensors);
}

absl::Status CompiledGraph::Execute(absl::Span<const void* const> inputs,
                                    absl::Span<void* const> outputs) const {
  if (static_cast<int>(inputs.size()) != num_params() ||
      static_cast<int>(outputs.size()) != num_results()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Execute: @", name_, " takes ", num_params(),
                     " inputs and ", num_results(), " outputs, got ",
                     inputs.size(), " and ", outputs.size()));
  }
  for (int i = 0; i < num_params(); ++i) {
    if (!param_is_const_[i] && inputs[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Execute: null pointer for input %", param_names_[i]));
    }
  }
  for (int i = 0; i < num_results(); ++i) {
    if (outputs[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Execute: null pointer for output ", i));
    }
  }
  return executable_->Execute(inputs, outputs);
}

absl::StatusOr<std::vector<Tensor>> CompiledGraph::Execute(
    absl::Span<const Tensor> inputs) const {
  if (static_cast<int>(inputs.size()) != num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Execute: @", name_, " has ", num_params(),
                     " parameters, got ", inputs.size(), " tensors"));
  }
  std::vector<const void*> in(inputs.size(), nullptr);
  for (int i = 0; i < num_params(); ++i) {
    if (param_is_const_[i]) continue;
    if (inputs[i].raw() == nullptr || inputs[i].type() != param_types_[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Execute: input %", param_names_[i], " needs a ",
          param_types_[i].ToString(), " tensor, got ",
          inputs[i].raw() == nullptr ? std::string("no data")
                                     : inputs[i].type().ToString()));
    }
    in[i] = inputs[i].raw();
  }
  std::vector<Tensor> results;
  std::vector<void*> out;
  for (const TensorType& type : result_types_) {
    HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type));
    out.push_back(t.mutable_raw());
    results.push_back(std::move(t));
  }
  HGC_RETURN_IF_ERROR(Execute(in, out));
  return results;
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Module& module,
                                                       const Options& options) {
  HGC_RETURN_IF_ERROR(
      CheckNumThreads(options.num_threads, "Options::num_threads"));
  if (options.compile_threads < 0 || options.compile_threads > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("Options::compile_threads must be in [0, 64], not ",
                     options.compile_threads));
  }
  HGC_ASSIGN_OR_RETURN(const Graph* entry,
                       SelectEntryGraph(module, options.graph));
  HGC_RETURN_IF_ERROR(Verify(module));
  // Refused here, before the module is copied and the constant cache
  // allocated, rather than killed by the kernel in SetConstants or Execute.
  HGC_RETURN_IF_ERROR(CheckMemoryBudget(*entry));

  SessionOptions session_options;
  session_options.pipeline = options.pipeline;
  session_options.compile_options.num_threads = options.num_threads;
  session_options.compile_options.threading = options.threading;
  session_options.compile_options.compile_threads = options.compile_threads;
  CompileCache& cache = CompileCache::Global();
  auto compile = [&] {
    return CompileEntry(module, entry->name(), session_options);
  };
  std::unique_ptr<Executable> executable;
  if (cache.enabled()) {
    CompileCacheKeyOptions key_options;
    key_options.entry = entry->name();
    key_options.pipeline = options.pipeline;
    key_options.num_threads = options.num_threads;
    key_options.threading = options.threading;
    HGC_ASSIGN_OR_RETURN(
        executable,
        cache.GetOrCompile(CompileCacheKey(module, key_options),
                           options.num_threads, options.threading, compile));
  } else {
    HGC_ASSIGN_OR_RETURN(executable, compile());
  }

  std::unique_ptr<CompiledGraph> compiled(new CompiledGraph());
  compiled->name_ = entry->name();
  for (int i = 0; i < entry->num_params(); ++i) {
    const Value* p = entry->param(i);
    compiled->param_names_.push_back(p->name());
    compiled->param_types_.push_back(p->type());
    compiled->param_is_const_.push_back(p->is_const());
  }
  for (const Value* r : entry->results()) {
    compiled->result_types_.push_back(r->type());
  }
  // The facade's signature must be the executable's: the compiler promises
  // never to change it (docs/compiler.md §1).
  const Program& program = executable->program();
  if (program.param_types != compiled->param_types_ ||
      program.result_types != compiled->result_types_) {
    return absl::InternalError(
        absl::StrCat("the compiled @", entry->name(),
                     " does not have the entry graph's signature"));
  }
  compiled->executable_ = std::move(executable);
  return compiled;
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileText(
    absl::string_view text, const Options& options,
    absl::string_view filename) {
  SourceManager sm;
  return CompileParsed(ParseModule(text, filename, sm), options, sm, filename);
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileFile(
    const std::string& path, const Options& options) {
  SourceManager sm;
  return CompileParsed(ParseFile(path, sm), options, sm, path);
}

}  // namespace hgc
