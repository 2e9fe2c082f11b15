#include "driver/driver.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "analysis/buffer_planning.h"
#include "analysis/memory_budget.h"
#include "bench/compare.h"
#include "codegen/compile.h"
#include "driver/input_files.h"
#include "driver/tensor_text.h"
#include "frontend/parser.h"
#include "hgc/session.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "reference/check.h"
#include "reference/reference_interpreter.h"
#include "runtime/executable.h"
#include "support/diagnostics.h"
#include "support/file_io.h"
#include "support/status_macros.h"
#include "tensor_util/npy.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/random_inputs.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

// Writes out<i>.npy for every output, all or nothing (support/file_io.h;
// directories it had to create are removed again on failure), then removes
// out<n>.npy, out<n+1>.npy, ... left by an earlier run with
// more results, with a note for each.
absl::Status WriteOutputs(const std::vector<Tensor>& outputs,
                          const std::string& dir, std::ostream& err) {
  std::error_code ec;
  // The directories this call creates, deepest first: a failed write
  // removes them again, so that it leaves the file system as it was.
  std::vector<std::filesystem::path> created;
  for (std::filesystem::path p = std::filesystem::absolute(dir, ec);
       !ec && !p.empty() && !std::filesystem::exists(p, ec);
       p = p.parent_path()) {
    created.push_back(p);
    if (p == p.parent_path()) break;
  }
  auto remove_created = [&created] {
    std::error_code ignored;
    for (const std::filesystem::path& p : created) {
      std::filesystem::remove(p, ignored);  // only when still empty
    }
  };
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    remove_created();
    return absl::PermissionDeniedError(absl::StrCat(
        "--output-dir: cannot create directory '", dir, "': ", ec.message()));
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < outputs.size(); ++i) {
    files.emplace_back(absl::StrCat(dir, "/out", i, ".npy"),
                       SerializeNpy(outputs[i]));
  }
  absl::Status written = WriteFilesAtomically(files);
  if (!written.ok()) {
    remove_created();
    return absl::Status(written.code(),
                        absl::StrCat("--output-dir: ", written.message()));
  }
  for (size_t i = outputs.size();; ++i) {
    std::string stale = absl::StrCat(dir, "/out", i, ".npy");
    if (!std::filesystem::is_regular_file(stale, ec)) break;
    if (!std::filesystem::remove(stale, ec)) {
      err << "hgc: warning: '" << stale
          << "' is from an earlier run and could not be removed: "
          << ec.message() << "\n";
      break;
    }
    err << "hgc: note: removed '" << stale << "' (from an earlier run with "
        << "more results)\n";
  }
  return absl::OkStatus();
}

// "fusion groups: attention 1, matmul 2": the fusion ops of `graph` counted
// by kind, kinds in alphabetical order ("none" without any).
std::string FusionGroupsLine(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const auto& op : graph.ops()) {
    if (op->kind_id() != OpKind::kFusion) continue;
    const Attribute* kind = op->FindAttr("kind");
    ++counts[kind != nullptr && kind->is_string() ? kind->as_string() : "?"];
  }
  std::vector<std::string> parts;
  for (const auto& [kind, n] : counts)
    parts.push_back(absl::StrCat(kind, " ", n));
  return absl::StrCat("fusion groups: ",
                      parts.empty() ? "none" : absl::StrJoin(parts, ", "));
}

void PrintCompileStats(const CompileStats& stats, std::ostream& err) {
  err << "compile: " << absl::StrFormat("%.3f", stats.seconds * 1e3)
      << " ms; steps: " << stats.native_steps << " native, "
      << stats.fallback_steps << " fallback (interpreter), " << stats.copy_steps
      << " copy, " << stats.pack_steps
      << " pack; init steps: " << stats.init_steps
      << "; arena: " << stats.arena_bytes
      << " bytes (per-thread scratch: " << stats.per_thread_scratch_bytes
      << " bytes)\n";
  if (!stats.object_cache_dir.empty()) {
    err << "compile cache: graph "
        << (stats.graph_from_cache ? "hit, " : "miss, ")
        << stats.objects_from_cache
        << " objects from the cache, " << stats.objects_compiled
        << " compiled (" << stats.object_cache_dir << ")\n";
  }
}

// --run [--check]: executes the session's entry graph (after the passes)
// and reports; with --check, compares with `original` (the graph as
// parsed). Returns the exit code.
absl::StatusOr<int> Run(const CompileSession& session, const Graph& original,
                        absl::Span<const RandomFillOptions> fill,
                        const DriverOptions& options,
                        const InputBinding& binding, std::ostream& out,
                        std::ostream& err) {
  const Graph& graph = session.entry();
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                       PrepareInputs(graph, fill, options.inputs,
                                     options.seed, binding));
  // The graph, as the passes left it, is compiled (codegen/compile.h) and
  // executed. Should the compiler refuse a graph as
  // Unimplemented, the reference interpreter runs the optimized graph
  // instead (it executes fusion ops by interpreting their bodies).
  CompileOptions compile_options = session.options().compile_options;
  CompileStats stats;
  compile_options.stats = &stats;
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      session.Compile(compile_options);
  std::vector<Tensor> outputs;
  // Steps that ran on the portable kernels, which the reference shares.
  int portable_steps = 0;
  if (exe.ok()) {
    portable_steps = stats.fallback_steps + stats.init_fallback_steps;
    if (options.stats) PrintCompileStats(stats, err);
    if (!(*exe)->thread_status().ok()) {
      err << "hgc: note: " << (*exe)->thread_status().message() << "\n";
    }
    HGC_RETURN_IF_ERROR((*exe)->SetConstants(inputs));
    HGC_ASSIGN_OR_RETURN(outputs, (*exe)->Execute(inputs));
  } else if (absl::IsUnimplemented(exe.status())) {
    err << "hgc: note: not compiled (" << exe.status().message()
        << "); running the reference interpreter\n";
    HGC_ASSIGN_OR_RETURN(outputs, Interpret(graph, inputs));
  } else {
    return exe.status();
  }
  if (!options.output_dir.empty()) {
    HGC_RETURN_IF_ERROR(WriteOutputs(outputs, options.output_dir, err));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    out << "out" << i << ": " << outputs[i].type().ToString() << " = "
        << DescribeTensor(outputs[i]) << "\n";
  }
  if (!options.check) return 0;
  // The reference's values and error bounds (reference/check.h).
  std::vector<Tolerance> tolerances;
  for (const Tensor& output : outputs) {
    Tolerance tolerance = DefaultTolerance(output.dtype());
    if (options.rtol >= 0) tolerance.rtol = options.rtol;
    if (options.atol >= 0) tolerance.atol = options.atol;
    tolerances.push_back(tolerance);
  }
  HGC_ASSIGN_OR_RETURN(
      std::vector<CompareResult> results,
      CompareWithReference(original, inputs, outputs, tolerances));
  bool pass = true;
  for (size_t i = 0; i < results.size(); ++i) {
    pass = pass && results[i].ok();
    out << "check out" << i << ": " << results[i].Summary() << "\n";
  }
  // Such steps agree with the reference by construction: say so, so that a
  // PASS is not read as evidence about code that was never compiled.
  if (portable_steps > 0) {
    out << "check: note: " << portable_steps
        << (portable_steps == 1 ? " step" : " steps")
        << " ran on the portable kernels, which the reference shares\n";
  }
  out << "check: " << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : 1;
}

// The pipeline the options ask for: --pipeline / -O, else O2 where the
// graph is compiled, timed (--bench) or its compiled plan reported
// (--stats), else none (--emit=ir alone prints the graph as parsed).
std::string PipelineText(const DriverOptions& options) {
  if (!options.pipeline.empty()) return options.pipeline;
  const bool compiles = options.run || options.bench || options.emit_llvm ||
                        options.emit_asm || options.emit_loops || options.stats;
  return compiles ? "O2" : "";
}

// How the passes report: IR dumps and timings on `err`.
PassManagerOptions PassOptions(const DriverOptions& options,
                               std::ostream& err) {
  PassManagerOptions pm_options;
  pm_options.verify_each = options.verify_each;
  pm_options.print_ir_after_all = options.print_ir_after_all;
  pm_options.print_ir_after.insert(options.print_ir_after.begin(),
                                   options.print_ir_after.end());
  pm_options.time_passes = options.time_passes;
  pm_options.stop_after = options.stop_after;
  pm_options.dump_stream = &err;
  return pm_options;
}

// The compile session for the options: their pipeline, the passes'
// dumps and timings on `err`, and --run's threads.
SessionOptions SessionOptionsFor(const DriverOptions& options,
                                 std::ostream& err) {
  SessionOptions session_options;
  session_options.pipeline = PipelineText(options);
  session_options.pass_options = PassOptions(options, err);
  session_options.compile_options.num_threads = options.threads;
  session_options.compile_options.threading = options.threading;
  return session_options;
}

// --stats: the entry graph's arena plan, memory, fusion groups, and the
// passes' notes on what they left unfused and why (an attention block whose
// P is also returned, say), on `err`.
void PrintPlanStats(const CompileSession& session, std::ostream& err) {
  const MemoryPlan plan = session.PlanMemory();
  err << "arena: " << plan.buffers.arena_size
      << " bytes (intermediates: " << plan.buffers.sum_of_intermediates
      << " bytes)\n";
  const MemoryEstimate& e = plan.estimate;
  err << "memory: " << e.total() << " bytes (arena " << e.arena_bytes
      << ", constants " << e.constant_bytes << ", inputs " << e.param_bytes
      << ", outputs " << e.result_bytes << ")\n";
  err << FusionGroupsLine(session.entry()) << "\n";
  for (const std::string& note : session.module().notes()) {
    err << "note: " << note << "\n";
  }
}

// --emit=llvm / --emit=asm / --emit=loops: compiles the entry graph for the
// text alone and prints it.
absl::Status EmitCode(const CompileSession& session,
                      const DriverOptions& options, std::ostream& out) {
  CompileOptions compile_options;
  compile_options.num_threads = options.threads;
  std::string text;
  if (options.emit_llvm) compile_options.llvm_ir = &text;
  if (options.emit_asm) compile_options.assembly = &text;
  std::string loops;
  if (options.emit_loops) compile_options.loops = &loops;
  compile_options.emit_target_cpu = options.target_cpu;
  HGC_RETURN_IF_ERROR(session.Compile(compile_options).status());
  out << loops << text;
  return absl::OkStatus();
}

// --bench: BenchGraph (bench/compare.h) on the graph as written (an ONNX
// model as imported, its patterns lifted unless --onnx-literal), with the
// options' --threads, --threading, --bench-iters, --profile, --seed,
// --pipeline/-O and --atol/--rtol; prints the report. Returns the exit
// code: 0 when the outputs agree, else 1.
absl::StatusOr<int> RunBench(const Module& module, const Graph& entry,
                             const DriverOptions& options,
                             const InputBinding& binding, std::ostream& out) {
  // Both sides hold the graph's buffers at once (sharing the inputs).
  MemoryEstimate e = EstimateMemory(entry);
  HGC_RETURN_IF_ERROR(
      CheckMemoryBudget(entry, e.total() - e.param_bytes, "oneDNN baseline"));
  BenchConfig config;
  config.threads = options.threads;
  config.threading = options.threading;
  config.pipeline = options.pipeline.empty() ? "O2" : options.pipeline;
  config.iters = options.bench_iters;
  config.profile = options.profile;
  config.seed = options.seed;
  config.bound_params = binding.constants;
  if (options.atol >= 0) config.atol = options.atol;
  if (options.rtol >= 0) config.rtol = options.rtol;
  HGC_ASSIGN_OR_RETURN(BenchResult result, BenchGraph(module, entry, config));
  PrintBenchResult(result, out);
  return result.agree ? 0 : 1;
}

// Whether `options` ask for something printed from the compile itself:
// --emit, --stats, --time-passes or --print-ir-after*.
bool PrintsCompileOutput(const DriverOptions& options) {
  return options.emit_ir || options.emit_llvm || options.emit_asm ||
         options.emit_loops || options.stats || options.time_passes ||
         options.print_ir_after_all || !options.print_ir_after.empty();
}

// Everything after parsing but --bench: the passes over `module` in
// `session`, what --emit and --stats print, and --run [--check] of `graph`
// (the entry graph as parsed). --check judges against `literal` where
// given (an ONNX model imported as written), else against `module` as
// parsed. Returns the exit code.
absl::StatusOr<int> CompileAndRun(Module module, const Graph& graph,
                                  CompileSession& session,
                                  const DriverOptions& options,
                                  const InputBinding& binding,
                                  const Module* literal, std::ostream& out,
                                  std::ostream& err) {
  const std::string entry_name = graph.name();
  // Seeded inputs take their ranges from the graph as written, so that
  // --run gives the same numbers whatever the pipeline.
  std::vector<RandomFillOptions> fill;
  for (int i = 0; i < graph.num_params(); ++i) {
    fill.push_back(InputFillOptions(graph, i));
  }
  // --check compares against the graph as written, so keep a copy.
  Module original;
  if (options.check) {
    original = CloneModule(literal != nullptr ? *literal : module);
  }
  HGC_RETURN_IF_ERROR(session.Load(std::move(module), entry_name));
  HGC_RETURN_IF_ERROR(session.RunPasses());
  const Graph& entry = session.entry();
  if (options.emit_ir) out << PrintModule(session.module());
  if (options.stats) PrintPlanStats(session, err);
  if (options.emit_llvm || options.emit_asm || options.emit_loops) {
    HGC_RETURN_IF_ERROR(EmitCode(session, options, out));
  }
  if (!options.run) return 0;
  const Graph* reference =
      options.check ? original.FindGraph(entry_name) : &entry;
  // Refuse at once what the process cannot hold, rather than be killed
  // part-way. --check also runs the reference interpreter, which keeps
  // every value of the original graph (the inputs are shared) and, beside
  // each, its f32 error bound (reference/error_bound.h): counted as twice
  // the values' bytes.
  int64_t reference_bytes = 0;
  if (options.check) {
    MemoryEstimate r = EstimateMemory(*reference);
    reference_bytes = 2 * (r.total() - r.param_bytes - r.arena_bytes +
                           PlanBuffers(*reference).sum_of_intermediates);
  }
  HGC_RETURN_IF_ERROR(
      session.CheckMemoryBudget(reference_bytes, "reference check"));
  return Run(session, *reference, fill, options, binding, out, err);
}

// --dim, --input-shape and --onnx-literal as import options: ONNX models
// only, each name once (or with the same value).
absl::StatusOr<OnnxImportOptions> OnnxOptionsOf(const DriverOptions& options) {
  OnnxImportOptions onnx;
  onnx.lift_patterns = !options.onnx_literal;
  if (options.onnx_literal && !IsOnnxPath(options.input_file)) {
    return absl::InvalidArgumentError(
        "--onnx-literal applies to ONNX models (see 'hgc --help')");
  }
  if (options.dims.empty() && options.input_shapes.empty()) return onnx;
  if (!IsOnnxPath(options.input_file)) {
    return absl::InvalidArgumentError(
        "--dim and --input-shape apply to ONNX models (see 'hgc --help')");
  }
  for (const auto& [name, size] : options.dims) {
    auto [it, inserted] = onnx.dims.emplace(name, size);
    if (!inserted && it->second != size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim ", name, " given as ", it->second, " and ", size));
    }
  }
  for (const auto& [name, shape] : options.input_shapes) {
    auto [it, inserted] = onnx.input_shapes.emplace(name, shape);
    if (!inserted && it->second != shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", name, " given twice, differently"));
    }
  }
  return onnx;
}

}  // namespace

std::string ListPassesText() {
  std::string out = "Passes (--pipeline=a,b{option=value},c):\n";
  const PassRegistry& registry = GlobalPassRegistry();
  for (const std::string& arg : registry.Arguments()) {
    std::unique_ptr<Pass> pass = *registry.Create(arg);
    absl::StrAppend(&out,
                    absl::StrFormat("  %-18s %s\n", arg, pass->description()));
    for (const PassOptionInfo& o : pass->options()) {
      absl::StrAppend(
          &out, absl::StrFormat("      %s=<%s> (default %s): %s\n", o.name,
                                o.type, o.value, o.description));
    }
  }
  absl::StrAppend(&out, "Pipelines (-O0, -O2, or --pipeline=NAME):\n");
  for (const std::string& name : NamedPipelines()) {
    absl::StrAppend(&out, absl::StrFormat("  %-18s %s\n", name,
                                          DescribeNamedPipeline(name)));
  }
  return out;
}

int RunDriver(const DriverOptions& options, std::ostream& out,
              std::ostream& err) {
  if (options.list_passes) {
    out << ListPassesText();
    return 0;
  }
  // Pipeline errors are flag errors: report them before reading the input.
  absl::StatusOr<CompileSession> session =
      CompileSession::Create(SessionOptionsFor(options, err));
  if (!session.ok()) {
    err << "hgc: error: " << session.status().message() << "\n";
    return 1;
  }
  SourceManager sm;
  // Errors located in the graph print FILE:LINE:COL; a graph file that
  // cannot be read at all is reported at FILE:1:1, so that every input
  // error has that form; everything else (flags, outputs, the machine's
  // limits) is labelled "hgc".
  auto fail = [&](const absl::Status& status) {
    err << FormatError(status, sm, "hgc");
    return 1;
  };
  absl::StatusOr<OnnxImportOptions> onnx = OnnxOptionsOf(options);
  if (!onnx.ok()) return fail(onnx.status());
  absl::StatusOr<InputFile> input =
      ReadInputFile(options.input_file, *onnx, sm);
  if (!input.ok()) {
    err << FormatInputFileError(input.status(), options.input_file, sm);
    return 1;
  }
  absl::StatusOr<Module> module = std::move(input->module);
  const InputBinding& binding = input->binding;
  // With patterns lifted, --check judges against the model as written.
  std::optional<InputFile> literal;
  if (options.check && !options.bench && input->lifted_patterns > 0) {
    onnx->lift_patterns = false;
    absl::StatusOr<InputFile> read =
        ReadInputFile(options.input_file, *onnx, sm);
    if (!read.ok()) {
      err << FormatInputFileError(read.status(), options.input_file, sm);
      return 1;
    }
    literal = std::move(*read);
  }
  absl::StatusOr<const Graph*> graph =
      SelectEntryGraph(*module, options.graph, options.input_file);
  if (!graph.ok()) return fail(graph.status());
  if (!options.bench) {
    absl::StatusOr<int> code =
        CompileAndRun(std::move(*module), **graph, *session, options, binding,
                      literal ? &literal->module : nullptr, out, err);
    if (!code.ok()) return fail(code.status());
    return *code;
  }
  // --bench compiles and times the graph as written (bench/compare.h);
  // what --emit, --stats and the pass-printing flags ask for is printed
  // first, from the same pipeline run once more on a copy.
  if (PrintsCompileOutput(options)) {
    DriverOptions compile_only = options;
    compile_only.run = compile_only.check = false;
    Module copy = CloneModule(*module);
    const Graph* entry = copy.FindGraph((*graph)->name());
    absl::StatusOr<int> code =
        CompileAndRun(std::move(copy), *entry, *session, compile_only, binding,
                      nullptr, out, err);
    if (!code.ok()) return fail(code.status());
  }
  absl::StatusOr<int> code =
      RunBench(*module, **graph, options, binding, out);
  if (!code.ok()) return fail(code.status());
  return *code;
}

}  // namespace hgc
