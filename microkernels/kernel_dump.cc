#include "microkernels/kernel_dump.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm-c/Disassembler.h"
#include "llvm-c/Target.h"

namespace hgc {
namespace microkernels {
namespace {

constexpr char kTriple[] = "x86_64-unknown-linux-gnu";

void InitX86Disassembler() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
  });
}

absl::Status WriteFile(const std::string& path, const void* data,
                       size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  const size_t written = std::fwrite(data, 1, size, f);
  const bool closed = std::fclose(f) == 0;
  if (written != size || !closed) {
    return absl::InternalError(absl::StrCat("short write to ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> DisassembleX86(const uint8_t* code, size_t size) {
  InitX86Disassembler();
  LLVMDisasmContextRef dc =
      LLVMCreateDisasm(kTriple, nullptr, 0, nullptr, nullptr);
  if (dc == nullptr) {
    return absl::InternalError("LLVM has no x86-64 disassembler");
  }
  // Intel syntax reads like the Xbyak source.
  LLVMSetDisasmOptions(dc, LLVMDisassembler_Option_AsmPrinterVariant);
  std::string out;
  char text[256];
  size_t pc = 0;
  while (pc < size) {
    const size_t used = LLVMDisasmInstruction(
        dc, const_cast<uint8_t*>(code + pc), size - pc, pc, text, sizeof(text));
    if (used == 0) {
      absl::StrAppendFormat(&out, "%6x:\t.byte 0x%02x\n", pc, code[pc]);
      ++pc;
      continue;
    }
    // LLVM indents with a tab; keep one.
    const char* t = text;
    while (*t == '\t' || *t == ' ') ++t;
    absl::StrAppendFormat(&out, "%6x:\t%s\n", pc, t);
    pc += used;
  }
  LLVMDisasmDispose(dc);
  return out;
}

std::string KernelFileStem(absl::string_view kernel_name) {
  std::string stem(kernel_name);
  for (char& ch : stem) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
                    ch == '-';
    if (!ok) ch = '_';
  }
  return stem;
}

absl::Status DumpKernel(absl::string_view kernel_name, const uint8_t* code,
                        size_t size, absl::string_view dir) {
  const std::string base = absl::StrCat(dir, "/", KernelFileStem(kernel_name));
  absl::Status bin = WriteFile(base + ".bin", code, size);
  if (!bin.ok()) return bin;
  absl::StatusOr<std::string> text = DisassembleX86(code, size);
  if (!text.ok()) return text.status();
  const std::string listing = absl::StrCat("// ", kernel_name, "\n", *text);
  return WriteFile(base + ".s", listing.data(), listing.size());
}

}  // namespace microkernels
}  // namespace hgc
