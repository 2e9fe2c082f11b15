#include "microkernels/brgemm_kernel.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "microkernels/amx.h"
#include "microkernels/brgemm_amx.h"
#include "microkernels/brgemm_avx2.h"
#include "microkernels/brgemm_avx2_dot.h"
#include "microkernels/brgemm_avx512_bf16.h"
#include "microkernels/brgemm_avx512_bf16_fma.h"
#include "microkernels/brgemm_avx512_f32.h"
#include "microkernels/brgemm_avx512_int8.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/kernel_dump.h"
#include "support/check.h"
#include "support/status_macros.h"

namespace hgc {
namespace microkernels {
namespace {

std::unique_ptr<JitGenerator> MakeGenerator(const BrgemmDesc& desc) {
  if (desc.isa == Isa::kAvx512CoreAmx) {
    return std::make_unique<BrgemmAmx>(desc, BuildAmxPlan(desc));
  }
  if (desc.b_layout == BLayout::kTransposed) {
    return std::make_unique<BrgemmAvx2Dot>(desc);
  }
  const BrgemmBlocking blocking = ChooseBlocking(desc);
  if (desc.isa == Isa::kAvx2) {
    return std::make_unique<BrgemmAvx2>(desc, blocking);
  }
  switch (desc.dtype) {
    case BrgemmDataType::kF32:
      return std::make_unique<BrgemmAvx512F32>(desc, blocking);
    case BrgemmDataType::kBf16:
      if (UsesBf16Widening(desc)) {
        return std::make_unique<BrgemmAvx512Bf16Fma>(desc, blocking);
      }
      return std::make_unique<BrgemmAvx512Bf16>(desc, blocking);
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8:
      return std::make_unique<BrgemmAvx512Int8>(desc, blocking);
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BrgemmKernel>> BrgemmKernel::Create(
    const BrgemmDesc& desc) {
  HGC_RETURN_IF_ERROR(ValidateBrgemmDesc(desc));
  if (!IsaAvailable(desc.isa)) {
    return absl::FailedPreconditionError(
        absl::StrCat(IsaName(desc.isa), " not available on this CPU (",
                     DescribeCpu(), ") for ", desc.ToString()));
  }
  if (desc.isa == Isa::kAvx512CoreAmx)
    HGC_RETURN_IF_ERROR(RequestAmxPermission());
  // A tile reads its B columns from one panel: the panels are as wide as the
  // tiles (or one panel holds every column).
  if (HasBPanels(desc) && desc.ldb != BlockColumns(desc)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "B panels of ", desc.ldb, " columns; this kernel's tiles are ",
        BlockColumns(desc), " wide: ", desc.ToString()));
  }
  std::unique_ptr<JitGenerator> gen = MakeGenerator(desc);
  HGC_CHECK(gen != nullptr);
  HGC_RETURN_IF_ERROR(gen->Create());
  std::unique_ptr<BrgemmKernel> kernel(new BrgemmKernel(desc, std::move(gen)));
  const char* dump_dir = std::getenv("HGC_DUMP_KERNELS");
  if (dump_dir != nullptr && *dump_dir != '\0') {
    absl::Status dumped = DumpKernel(kernel->name(), kernel->code(),
                                     kernel->code_size(), dump_dir);
    if (!dumped.ok()) {
      std::fprintf(stderr, "hgc: HGC_DUMP_KERNELS: %s\n",
                   std::string(dumped.message()).c_str());
    }
  }
  return kernel;
}

BrgemmKernel::BrgemmKernel(const BrgemmDesc& desc,
                           std::unique_ptr<JitGenerator> gen)
    : desc_(desc), gen_(std::move(gen)) {
  fn_ = reinterpret_cast<BrgemmFn>(const_cast<uint8_t*>(gen_->code()));
}

BrgemmKernel::~BrgemmKernel() = default;

const std::string& BrgemmKernel::name() const { return gen_->name(); }
const uint8_t* BrgemmKernel::code() const { return gen_->code(); }
size_t BrgemmKernel::code_size() const { return gen_->code_size(); }

void BrgemmKernel::CheckPostOpArgs(const float* bias, const float* row_divisors,
                                   const float* scale,
                                   const float* row_max) const {
  HGC_CHECK(desc_.bias == (bias != nullptr));
  HGC_CHECK(desc_.divide_rows == (row_divisors != nullptr));
  HGC_CHECK(desc_.scale == (scale != nullptr));
  HGC_CHECK(desc_.row_max == (row_max != nullptr));
}

void BrgemmKernel::Execute(const void* const* a_ptrs, const void* const* b_ptrs,
                           int64_t batch, void* c, const float* bias,
                           const float* row_divisors, const float* scale,
                           float* row_max) const {
  HGC_CHECK(desc_.batch_kind == BatchKind::kPointerList);
  CheckPostOpArgs(bias, row_divisors, scale, row_max);
  const BrgemmCallArgs args{a_ptrs,       b_ptrs, c,       batch,  bias,
                            row_divisors, scale,  row_max, nullptr};
  fn_(&args);
}

void BrgemmKernel::ExecuteStrided(const void* a, const void* b, int64_t batch,
                                  void* c, const float* bias,
                                  const float* row_divisors, const float* scale,
                                  float* row_max) const {
  HGC_CHECK(desc_.batch_kind == BatchKind::kStrided);
  CheckPostOpArgs(bias, row_divisors, scale, row_max);
  const BrgemmCallArgs args{a,     b,       c,      batch, bias, row_divisors,
                            scale, row_max, nullptr};
  fn_(&args);
}

}  // namespace microkernels
}  // namespace hgc
