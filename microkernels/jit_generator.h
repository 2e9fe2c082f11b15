// JitGenerator: the base of every Xbyak code generator in microkernels/.
//
// Xbyak is built with XBYAK_NO_EXCEPTION: an encoding error sets a
// thread-local error code and emission carries on. Create() clears that code,
// runs the subclass's Generate(), finalizes the buffer (read + execute) and
// turns any Xbyak error into an absl::Status, so no kernel with a broken
// encoding is ever handed out.
#ifndef HGC_MICROKERNELS_JIT_GENERATOR_H_
#define HGC_MICROKERNELS_JIT_GENERATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "xbyak/xbyak.h"

namespace hgc {
namespace microkernels {

class JitGenerator : public Xbyak::CodeGenerator {
 public:
  // `name` identifies the kernel in dumps and errors (the descriptor string).
  explicit JitGenerator(std::string name);
  ~JitGenerator() override = default;

  JitGenerator(const JitGenerator&) = delete;
  JitGenerator& operator=(const JitGenerator&) = delete;

  // Emits the code once. Internal("xbyak: <error> in <name>") on an encoding
  // or allocation failure, or whatever Generate() returned. Not thread-safe
  // (Xbyak's error code is per thread, so one generator per thread is fine).
  absl::Status Create();

  const std::string& name() const { return name_; }
  // Valid after a successful Create().
  const uint8_t* code() const { return getCode(); }
  size_t code_size() const { return getSize(); }

 protected:
  // Subclasses emit their whole function here.
  virtual absl::Status Generate() = 0;

  // System V prologue/epilogue: saves and restores rbx, rbp, r12-r15, and
  // clears the upper ZMM state before returning (avoids AVX-SSE transition
  // penalties in the caller).
  void Preamble();
  void Postamble();

  // reg += imm, via a scratch register when imm does not fit in 32 bits.
  void AddImm(const Xbyak::Reg64& reg, int64_t imm,
              const Xbyak::Reg64& scratch);

  // AVX2 has no opmasks: a YMM lane mask with lanes [0, count) set (count
  // in 1..8), for vmaskmovps, loaded from a table in the code (through
  // `scratch`). A generator that loads one emits the table with
  // EmitLaneMaskTable after its last instruction.
  void LoadLaneMask(const Xbyak::Ymm& dst, int count,
                    const Xbyak::Reg64& scratch);
  void EmitLaneMaskTable();

 private:
  std::string name_;
  Xbyak::Label lane_mask_table_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_JIT_GENERATOR_H_
