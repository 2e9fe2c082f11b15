// Observability for generated machine code: raw bytes and LLVM disassembly.
//
// Setting HGC_DUMP_KERNELS=DIR makes every new BrgemmKernel write
// DIR/<name>.bin (the raw bytes) and DIR/<name>.s (one instruction per line,
// Intel syntax, through LLVM's C disassembler), <name> being the descriptor
// string with characters other than [A-Za-z0-9._-] replaced by '_'. This is
// hgc's ONEDNN_JIT_DUMP. The same functions serve any other JIT code.
#ifndef HGC_MICROKERNELS_KERNEL_DUMP_H_
#define HGC_MICROKERNELS_KERNEL_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hgc {
namespace microkernels {

// Disassembles x86-64 code as if loaded at address 0. Each line is
// "<hex offset>:\t<instruction>". Bytes LLVM cannot decode become
// "<offset>:\t.byte 0x..", and decoding resumes at the next byte.
// Internal when LLVM has no x86 disassembler.
absl::StatusOr<std::string> DisassembleX86(const uint8_t* code, size_t size);

// The file name stem used for `kernel_name`.
std::string KernelFileStem(absl::string_view kernel_name);

// Writes <dir>/<stem>.bin and <dir>/<stem>.s. The directory must exist.
// Internal (with the path and errno text) when a file cannot be written.
absl::Status DumpKernel(absl::string_view kernel_name, const uint8_t* code,
                        size_t size, absl::string_view dir);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_KERNEL_DUMP_H_
