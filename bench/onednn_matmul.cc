#include "bench/onednn_matmul.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace hgc {
namespace bench {

using microkernels::BrgemmDataType;

struct OnednnMatmul::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory::desc a_md, c_md;
  dnnl::memory weights;
  dnnl::matmul prim;
  std::string impl;
};

namespace {

struct Types {
  dnnl::memory::data_type a, b, c;
};

Types TypesFor(BrgemmDataType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case BrgemmDataType::kF32: return {dt::f32, dt::f32, dt::f32};
    case BrgemmDataType::kBf16: return {dt::bf16, dt::bf16, dt::f32};
    case BrgemmDataType::kU8S8: return {dt::u8, dt::s8, dt::s32};
    case BrgemmDataType::kS8S8: return {dt::s8, dt::s8, dt::s32};
  }
  return {dt::f32, dt::f32, dt::f32};
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnednnMatmul>> OnednnMatmul::Create(
    BrgemmDataType dtype, int64_t m, int64_t n, int64_t k, const void* b) {
  using tag = dnnl::memory::format_tag;
  // oneDNN reports errors with exceptions; this file is the one place that
  // meets them, and turns them into statuses.
  try {
    auto state = std::make_unique<State>();
    const Types t = TypesFor(dtype);
    state->a_md = dnnl::memory::desc({m, k}, t.a, tag::ab);
    state->c_md = dnnl::memory::desc({m, n}, t.c, tag::ab);
    const dnnl::memory::desc b_any({k, n}, t.b, tag::any);
    const dnnl::memory::desc b_plain({k, n}, t.b, tag::ab);
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(state->a_md, b_any, state->c_md), state->engine);
    state->impl = pd.impl_info_str();
    dnnl::memory src(b_plain, state->engine, const_cast<void*>(b));
    state->weights = dnnl::memory(pd.weights_desc(), state->engine);
    dnnl::reorder(src, state->weights).execute(state->stream, src, state->weights);
    state->stream.wait();
    state->prim = dnnl::matmul(pd);
    return std::unique_ptr<OnednnMatmul>(new OnednnMatmul(std::move(state)));
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
}

OnednnMatmul::OnednnMatmul(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
OnednnMatmul::~OnednnMatmul() = default;

void OnednnMatmul::Run(const void* a, void* c) {
  dnnl::memory am(state_->a_md, state_->engine, const_cast<void*>(a));
  dnnl::memory cm(state_->c_md, state_->engine, c);
  state_->prim.execute(state_->stream, {{DNNL_ARG_SRC, am},
                                        {DNNL_ARG_WEIGHTS, state_->weights},
                                        {DNNL_ARG_DST, cm}});
  state_->stream.wait();
}

const std::string& OnednnMatmul::impl() const { return state_->impl; }

void CapOnednnIsa(Isa isa) {
  dnnl::cpu_isa cap = dnnl::cpu_isa::all;
  switch (isa) {
    case Isa::kNone: cap = dnnl::cpu_isa::sse41; break;
    case Isa::kAvx2: cap = dnnl::cpu_isa::avx2; break;
    case Isa::kAvx512Core: cap = dnnl::cpu_isa::avx512_core; break;
    case Isa::kAvx512CoreVnni: cap = dnnl::cpu_isa::avx512_core_vnni; break;
    // oneDNN 2.6 has no separate fp16 rung; bf16 is the matching cap.
    case Isa::kAvx512CoreBf16:
    case Isa::kAvx512CoreFp16: cap = dnnl::cpu_isa::avx512_core_bf16; break;
    case Isa::kAvx512CoreAmx: cap = dnnl::cpu_isa::all; break;
  }
  try {
    dnnl::set_max_cpu_isa(cap);
  } catch (const dnnl::error&) {
    // Already used: the cap stays as it was.
  }
}

}  // namespace bench
}  // namespace hgc
