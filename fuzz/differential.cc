#include "fuzz/differential.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "frontend/parser.h"
#include "hgc/hgc.h"
#include "ir/printer.h"
#include "reference/check.h"
#include "reference/error_bound.h"
#include "reference/reference_interpreter.h"
#include "support/diagnostics.h"
#include "support/source_location.h"
#include "tensor_util/npy.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/random_inputs.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

// What a crash handler writes: the running seed's message and graph.
char crash_message[256];
char crash_path[4096];
std::string* crash_text = nullptr;

void OnCrash(int sig) {
  ssize_t ignored = write(2, crash_message, strlen(crash_message));
  if (crash_path[0] != '\0' && crash_text != nullptr) {
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ignored = write(fd, crash_text->data(), crash_text->size());
      close(fd);
    }
  }
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}

bool IsSpecial(uint64_t seed, const FuzzOptions& options) {
  return options.special_every > 0 && seed % options.special_every == 0;
}

std::string CheckCommand(const std::string& graph_path, uint64_t seed,
                         bool special, const std::vector<std::string>& params,
                         int threads) {
  std::string cmd = absl::StrCat("hgc ", graph_path, " --run --check");
  if (special) {
    for (const std::string& p : params) {
      absl::StrAppend(&cmd, " --input ", p, "=",
                      absl::StrReplaceAll(graph_path, {{".graph", ""}}), "_",
                      p, ".npy");
    }
  } else {
    absl::StrAppend(&cmd, " --seed ", seed);
  }
  absl::StrAppend(&cmd, " --threads ", threads);
  return cmd;
}

// Bitwise equality of two tensors' data.
bool SameBits(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() &&
         (a.size_in_bytes() == 0 ||
          memcmp(a.raw(), b.raw(), a.size_in_bytes()) == 0);
}

}  // namespace

std::string CheckExecutions(CompiledGraph& compiled,
                            absl::Span<const Tensor> inputs,
                            const BoundedResults& reference,
                            int64_t* outputs_compared) {
  absl::Status bound = compiled.SetConstants(inputs);
  if (!bound.ok()) return absl::StrCat("SetConstants: ", bound.ToString());
  std::vector<Tensor> runs[2];
  for (auto& run : runs) {
    absl::StatusOr<std::vector<Tensor>> outputs = compiled.Execute(inputs);
    if (!outputs.ok()) {
      return absl::StrCat("Execute: ", outputs.status().ToString());
    }
    run = std::move(*outputs);
  }
  const std::vector<Tensor>& expected = reference.values;
  if (runs[0].size() != expected.size()) {
    return absl::StrCat(runs[0].size(), " outputs, expected ", expected.size());
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor& actual = runs[0][i];
    const Tensor& want = expected[i];
    if (actual.type() != want.type()) {
      return absl::StrCat("out", i, " is ", actual.type().ToString(),
                          ", expected ", want.type().ToString());
    }
    if (!SameBits(actual, runs[1][i])) {
      return absl::StrCat("out", i, " differs between two executions");
    }
  }
  // --check's model: the reference's error bound beside its tolerance.
  absl::StatusOr<std::vector<CompareResult>> results =
      CompareWithReference(reference, runs[0]);
  if (!results.ok()) {
    return absl::StrCat("compare: ", results.status().message());
  }
  for (size_t i = 0; i < results->size(); ++i) {
    if (expected[i].num_elements() == 0) continue;
    if (outputs_compared != nullptr) ++*outputs_compared;
    if (!(*results)[i].ok()) {
      return absl::StrCat("out", i, ": ", (*results)[i].Summary());
    }
  }
  return "";
}

std::string RunOneSeed(uint64_t seed, const FuzzOptions& options,
                       std::string* text, bool* unimplemented,
                       GraphKind* kind, int64_t* outputs_compared) {
  *unimplemented = false;
  const bool special = IsSpecial(seed, options);
  GenerateOptions gen;
  gen.special_values = special;
  gen.fixed_kind = options.fixed_kind;
  gen.kind = options.kind;
  gen.empty_tensors = options.empty_tensors;
  absl::StatusOr<GeneratedGraph> generated = GenerateGraph(seed, gen);
  if (!generated.ok()) {
    return absl::StrCat("generator: ", generated.status().message());
  }
  *kind = generated->kind;
  *text = PrintModule(generated->module);

  SourceManager sm;
  absl::StatusOr<Module> parsed = ParseModule(*text, "fuzz.graph", sm);
  if (!parsed.ok()) {
    return absl::StrCat("the printed graph does not parse back: ",
                        FormatError(parsed.status(), sm));
  }
  const Graph& graph = *parsed->graphs().front();
  // Random inputs as `hgc --run --seed` makes them (the fill per
  // parameter chosen on the graph), so that the repro line reproduces.
  std::vector<Tensor> inputs;
  if (special) {
    for (int i = 0; i < graph.num_params(); ++i) {
      inputs.push_back(SpecialTensor(graph.param(i)->type(), seed, i));
    }
  } else {
    absl::StatusOr<std::vector<Tensor>> random = RandomInputs(graph, seed);
    if (!random.ok()) {
      return absl::StrCat("inputs: ", random.status().message());
    }
    inputs = *std::move(random);
  }
  // One reference run (values and error bounds) judges every execution.
  absl::StatusOr<BoundedResults> reference =
      InterpretWithErrorBounds(graph, inputs);
  if (!reference.ok()) {
    return absl::StrCat("reference interpreter: ",
                        reference.status().message());
  }

  for (int threads : options.thread_counts) {
    Options compile_options;
    compile_options.num_threads = threads;
    absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
        CompileText(*text, compile_options, "fuzz.graph");
    if (!compiled.ok()) {
      if (absl::IsUnimplemented(compiled.status())) {
        *unimplemented = true;
        return "";
      }
      return absl::StrCat("threads ", threads, ": compile: ",
                          compiled.status().ToString());
    }
    std::string failed =
        CheckExecutions(**compiled, inputs, *reference, outputs_compared);
    if (!failed.empty()) return absl::StrCat("threads ", threads, ": ", failed);
  }
  return "";
}

namespace {

// RunOneSeed in a child process, so that a crash of compiled code is a
// reported failure and the run goes on.
std::string RunOneSeedForked(uint64_t seed, const FuzzOptions& options,
                             std::string* text, bool* unimplemented,
                             GraphKind* kind, int64_t* outputs_compared) {
  *unimplemented = false;
  GenerateOptions gen;
  gen.special_values = IsSpecial(seed, options);
  gen.fixed_kind = options.fixed_kind;
  gen.kind = options.kind;
  gen.empty_tensors = options.empty_tensors;
  absl::StatusOr<GeneratedGraph> generated = GenerateGraph(seed, gen);
  if (generated.ok()) {
    *kind = generated->kind;
    *text = PrintModule(generated->module);
  }
  int fds[2];
  if (pipe(fds) != 0) {
    return RunOneSeed(seed, options, text, unimplemented, kind,
                      outputs_compared);
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return RunOneSeed(seed, options, text, unimplemented, kind,
                      outputs_compared);
  }
  if (pid == 0) {
    close(fds[0]);
    std::string child_text;
    bool child_unimplemented = false;
    GraphKind child_kind;
    int64_t compared = 0;
    std::string failure = RunOneSeed(seed, options, &child_text,
                                     &child_unimplemented, &child_kind,
                                     &compared);
    std::string message = absl::StrCat(child_unimplemented ? "U" : "-",
                                       compared, ":", failure);
    size_t done = 0;
    while (done < message.size()) {
      ssize_t n = write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) {
    message.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    return absl::StrCat("crashed with signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || message.empty()) {
    return absl::StrCat("the child process exited with status ",
                        WEXITSTATUS(status));
  }
  *unimplemented = message[0] == 'U';
  const size_t colon = message.find(':');
  int64_t compared = 0;
  if (colon != std::string::npos) {
    compared = std::strtoll(message.c_str() + 1, nullptr, 10);
    message = message.substr(colon + 1);
  }
  *outputs_compared += compared;
  return message;
}

}  // namespace

std::string GraphText(uint64_t seed, const FuzzOptions& options) {
  GenerateOptions gen;
  gen.special_values = IsSpecial(seed, options);
  gen.fixed_kind = options.fixed_kind;
  gen.kind = options.kind;
  gen.empty_tensors = options.empty_tensors;
  absl::StatusOr<GeneratedGraph> generated = GenerateGraph(seed, gen);
  if (!generated.ok()) return "";
  return PrintModule(generated->module);
}

FuzzStats RunFuzz(const FuzzOptions& options, std::ostream& log) {
  FuzzStats stats;
  std::string text;
  crash_text = &text;
  if (!options.fork) {
    signal(SIGSEGV, OnCrash);
    signal(SIGBUS, OnCrash);
    signal(SIGFPE, OnCrash);
    signal(SIGILL, OnCrash);
    signal(SIGABRT, OnCrash);
  }
  for (int64_t n = 0; n < options.count; ++n) {
    const uint64_t seed = options.first_seed + static_cast<uint64_t>(n);
    const bool special = IsSpecial(seed, options);
    std::string path;
    if (!options.out_dir.empty()) {
      path = absl::StrCat(options.out_dir, "/fuzz_", seed, ".graph");
    }
    snprintf(crash_message, sizeof(crash_message),
             "graph_fuzz: CRASH at seed %llu; graph written to %s\n",
             static_cast<unsigned long long>(seed),
             path.empty() ? "(no --out_dir)" : path.c_str());
    snprintf(crash_path, sizeof(crash_path), "%s", path.c_str());
    if (options.verbose) log << "seed " << seed << "\n" << std::flush;
    bool unimplemented = false;
    GraphKind kind = GraphKind::kMixed;
    text.clear();
    std::string failure =
        options.fork
            ? RunOneSeedForked(seed, options, &text, &unimplemented, &kind,
                               &stats.outputs_compared)
            : RunOneSeed(seed, options, &text, &unimplemented, &kind,
                         &stats.outputs_compared);
    ++stats.graphs;
    ++stats.per_kind[static_cast<int>(kind)];
    if (special) ++stats.special;
    if (unimplemented) ++stats.unimplemented;
    if (failure.empty()) continue;
    ++stats.failures;
    stats.failing_seeds.push_back(seed);
    log << "FAIL seed " << seed << " (" << GraphKindName(kind)
        << (special ? ", special values" : "") << "): " << failure << "\n";
    if (!path.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options.out_dir, ec);
      std::vector<std::string> params;
      SourceManager sm;
      absl::StatusOr<Module> parsed = ParseModule(text, "fuzz.graph", sm);
      if (parsed.ok()) {
        const Graph& graph = *parsed->graphs().front();
        for (int i = 0; i < graph.num_params(); ++i) {
          params.push_back(graph.param(i)->name());
          if (special) {
            absl::Status w = WriteNpy(
                absl::StrCat(options.out_dir, "/fuzz_", seed, "_",
                             graph.param(i)->name(), ".npy"),
                SpecialTensor(graph.param(i)->type(), seed, i));
            if (!w.ok()) log << "  cannot write input: " << w.message() << "\n";
          }
        }
      }
      std::ofstream file(path);
      file << "// graph_fuzz seed " << seed << " ("
           << GraphKindName(kind) << (special ? ", special values" : "")
           << ")\n// " << absl::StrReplaceAll(failure, {{"\n", "\n// "}})
           << "\n";
      for (int threads : options.thread_counts) {
        file << "// repro: " << CheckCommand(path, seed, special, params, threads)
             << "\n";
      }
      file << text;
      log << "  wrote " << path << "\n";
    }
    if (options.max_failures > 0 && stats.failures >= options.max_failures) {
      break;
    }
  }
  crash_text = nullptr;
  crash_path[0] = '\0';
  return stats;
}

}  // namespace hgc
