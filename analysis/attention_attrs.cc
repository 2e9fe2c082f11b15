#include "analysis/attention_attrs.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/attention_attrs_internal.h"

namespace hgc {
namespace {

using attention_attrs::Bad;

std::vector<int64_t> OperandInts(const StridedOperand& x) {
  return {x.param->index(), x.offset,     x.strides[0],
          x.strides[1],     x.strides[2], x.strides[3]};
}

// Reads the attributes into a match whose ops and parameters point into
// the body; the values are not checked against the body yet.
class Reader {
 public:
  Reader(const AttrMap& attrs, const Graph& body) : attrs_(attrs), body_(body) {
    for (const auto& op : body.ops()) ops_.push_back(op.get());
  }

  absl::StatusOr<AttentionMatch> Run() {
    AttentionMatch m;
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints("match_dims", 7));
    for (int64_t d : dims) {
      if (d < 1) return Bad("match_dims: a dim below 1");
    }
    m.batch = dims[0];
    m.heads = dims[1];
    m.group = dims[2];
    m.seq_q = dims[3];
    m.seq_kv = dims[4];
    m.head_dim = dims[5];
    m.head_dim_v = dims[6];
    HGC_ASSIGN_OR_RETURN(m.q, Operand("match_q"));
    HGC_ASSIGN_OR_RETURN(m.k, Operand("match_k"));
    HGC_ASSIGN_OR_RETURN(m.v, Operand("match_v"));
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> out, Ints("match_out", 5));
    m.out_offset = out[0];
    m.out_strides = {out[1], out[2], out[3], out[4]};
    HGC_ASSIGN_OR_RETURN(std::vector<const Op*> main, Ops("match_ops", 3));
    m.qk = main[0];
    m.softmax = main[1];
    m.pv = main[2];
    HGC_ASSIGN_OR_RETURN(m.q_ops, Ops("match_q_ops", -1));
    HGC_ASSIGN_OR_RETURN(m.q_quant, Ops("match_q_quant", -1));
    HGC_ASSIGN_OR_RETURN(m.k_quant, Ops("match_k_quant", -1));
    HGC_ASSIGN_OR_RETURN(m.v_quant, Ops("match_v_quant", -1));
    HGC_ASSIGN_OR_RETURN(m.score_ops, Ops("match_score_ops", -1));
    HGC_ASSIGN_OR_RETURN(m.prob_ops, Ops("match_prob_ops", -1));
    HGC_ASSIGN_OR_RETURN(m.out_ops, Ops("match_out_ops", -1));
    if (body_.results().size() != 1) return Bad("the body has not one result");
    m.result = body_.results()[0];
    return m;
  }

 private:
  // The int list `name` of `size` elements (any number when size < 0,
  // and then an absent list is empty).
  absl::StatusOr<std::vector<int64_t>> Ints(const char* name, int size) {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) {
      if (size < 0) return std::vector<int64_t>{};
      return Bad(absl::StrCat(name, " is missing"));
    }
    if (!it->second.is_int_list()) {
      return Bad(absl::StrCat(name, " is not a list of integers"));
    }
    std::vector<int64_t> v = it->second.as_int_list();
    if (size >= 0 && v.size() != static_cast<size_t>(size)) {
      return Bad(absl::StrCat(name, " has ", v.size(), " elements, not ", size));
    }
    return v;
  }

  absl::StatusOr<StridedOperand> Operand(const char* name) {
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> v, Ints(name, 6));
    if (v[0] < 0 || v[0] >= body_.num_params()) {
      return Bad(absl::StrCat(name, ": parameter ", v[0], " out of range (",
                              body_.num_params(), " parameters)"));
    }
    return StridedOperand{body_.param(static_cast<int>(v[0])), v[1],
                          {v[2], v[3], v[4], v[5]}};
  }

  // The ops at the indices of list `name`; each op may take one role.
  absl::StatusOr<std::vector<const Op*>> Ops(const char* name, int size) {
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> indices, Ints(name, size));
    std::vector<const Op*> ops;
    for (int64_t i : indices) {
      if (i < 0 || i >= static_cast<int64_t>(ops_.size())) {
        return Bad(absl::StrCat(name, ": op ", i, " out of range (",
                                ops_.size(), " ops in the body)"));
      }
      if (!named_.emplace(i, name).second) {
        return Bad(absl::StrCat(name, ": op ", i, " is named in ",
                                named_.at(i), " too"));
      }
      ops.push_back(ops_[i]);
    }
    return ops;
  }

  const AttrMap& attrs_;
  const Graph& body_;
  std::vector<const Op*> ops_;
  absl::flat_hash_map<int64_t, std::string> named_;
};

}  // namespace

bool HasAttentionMatchAttrs(const AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    if (absl::StartsWith(name, "match_")) return true;
  }
  return false;
}

AttrMap EncodeAttentionMatch(const AttentionMatch& m, const Graph& body) {
  absl::flat_hash_map<const Op*, int64_t> index;
  for (const auto& op : body.ops()) {
    index.emplace(op.get(), static_cast<int64_t>(index.size()));
  }
  auto indices = [&](const std::vector<const Op*>& ops) {
    std::vector<int64_t> out;
    for (const Op* op : ops) out.push_back(index.at(op));
    return Attribute::IntList(out);
  };
  AttrMap attrs;
  attrs["match_dims"] =
      Attribute::IntList({m.batch, m.heads, m.group, m.seq_q, m.seq_kv,
                          m.head_dim, m.head_dim_v});
  attrs["match_q"] = Attribute::IntList(OperandInts(m.q));
  attrs["match_k"] = Attribute::IntList(OperandInts(m.k));
  attrs["match_v"] = Attribute::IntList(OperandInts(m.v));
  attrs["match_out"] =
      Attribute::IntList({m.out_offset, m.out_strides[0], m.out_strides[1],
                          m.out_strides[2], m.out_strides[3]});
  attrs["match_ops"] = indices({m.qk, m.softmax, m.pv});
  const std::pair<const char*, const std::vector<const Op*>*> roles[] = {
      {"match_q_ops", &m.q_ops},
      {"match_q_quant", &m.q_quant},
      {"match_k_quant", &m.k_quant},
      {"match_v_quant", &m.v_quant},
      {"match_score_ops", &m.score_ops},
      {"match_prob_ops", &m.prob_ops},
      {"match_out_ops", &m.out_ops}};
  for (const auto& [name, ops] : roles) {
    if (!ops->empty()) attrs[name] = indices(*ops);
  }
  return attrs;
}

absl::StatusOr<AttentionMatch> DecodeAttentionMatch(const AttrMap& attrs,
                                                    const Graph& body) {
  HGC_ASSIGN_OR_RETURN(AttentionMatch m, Reader(attrs, body).Run());
  HGC_RETURN_IF_ERROR(attention_attrs::CheckAgainstBody(m, body));
  return m;
}

}  // namespace hgc
