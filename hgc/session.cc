// The compile session (hgc/session.h): pass pipeline, module, entry graph,
// memory plan and compile, in that order.
#include "hgc/session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/clone.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "support/status_macros.h"

namespace hgc {

absl::StatusOr<const Graph*> SelectEntryGraph(const Module& module,
                                              absl::string_view name,
                                              absl::string_view source) {
  if (module.graphs().empty()) {
    return absl::InvalidArgumentError("the module has no graphs");
  }
  if (name.empty()) return module.graphs().front().get();
  if (name.front() == '@') name.remove_prefix(1);
  if (const Graph* g = module.FindGraph(name)) return g;
  std::vector<std::string> names;
  for (const auto& g : module.graphs()) names.push_back("@" + g->name());
  const std::string listed = absl::StrJoin(names, ", ");
  if (source.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no graph named @", name, " (the module has: ", listed, ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "no graph named @", name, " in ", source, " (it has: ", listed, ")"));
}

CompileSession::CompileSession(SessionOptions options)
    : options_(std::move(options)), pass_manager_(options_.pass_options) {}

absl::StatusOr<CompileSession> CompileSession::Create(SessionOptions options) {
  CompileSession session(std::move(options));
  HGC_RETURN_IF_ERROR(AddPipeline(session.options_.pipeline,
                                  GlobalPassRegistry(), session.pass_manager_));
  HGC_RETURN_IF_ERROR(session.pass_manager_.ValidateOptions());
  return session;
}

absl::Status CompileSession::Load(Module module, absl::string_view entry_name) {
  module_ = std::move(module);
  entry_ = nullptr;
  HGC_ASSIGN_OR_RETURN(entry_, SelectEntryGraph(module_, entry_name));
  entry_name_ = entry_->name();
  return absl::OkStatus();
}

absl::Status CompileSession::RunPasses() {
  if (entry_ == nullptr) {
    return absl::FailedPreconditionError("RunPasses: no module loaded");
  }
  if (has_passes()) HGC_RETURN_IF_ERROR(pass_manager_.Run(module_));
  entry_ = module_.FindGraph(entry_name_);
  if (entry_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("the passes removed the entry graph @", entry_name_));
  }
  return absl::OkStatus();
}

MemoryPlan CompileSession::PlanMemory() const {
  MemoryPlan plan;
  plan.buffers = PlanBuffers(*entry_);
  plan.estimate = EstimateMemory(*entry_);
  return plan;
}

absl::Status CompileSession::CheckMemoryBudget(
    int64_t extra_bytes, absl::string_view extra_what) const {
  return hgc::CheckMemoryBudget(*entry_, extra_bytes, extra_what);
}

absl::StatusOr<std::unique_ptr<Executable>> CompileSession::Compile() const {
  return Compile(options_.compile_options);
}

absl::StatusOr<std::unique_ptr<Executable>> CompileSession::Compile(
    const CompileOptions& options) const {
  if (entry_ == nullptr) {
    return absl::FailedPreconditionError("Compile: no module loaded");
  }
  return hgc::Compile(module_, *entry_, options);
}

absl::StatusOr<std::unique_ptr<Executable>> CompileEntry(
    const Module& module, absl::string_view entry_name,
    const SessionOptions& options) {
  HGC_ASSIGN_OR_RETURN(CompileSession session, CompileSession::Create(options));
  HGC_RETURN_IF_ERROR(session.Load(CloneModule(module), entry_name));
  HGC_RETURN_IF_ERROR(session.RunPasses());
  return session.Compile();
}

}  // namespace hgc
