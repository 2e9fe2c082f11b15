#include "hgc/test_graphs.h"

#include "absl/strings/str_cat.h"
#include "ir/builder.h"

namespace hgc {

Graph* BuildMlp(Module& module, const std::string& name, int64_t batch,
                const std::vector<int64_t>& widths) {
  Graph* g = module.AddGraph(name);
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kF32, {batch, widths[0]}));
  for (size_t i = 1; i < widths.size(); ++i) {
    Value* w = g->AddParam(absl::StrCat("w", i),
                           TensorType(DType::kF32, {widths[i - 1], widths[i]}),
                           /*is_const=*/true);
    Value* bias = g->AddParam(absl::StrCat("b", i),
                              TensorType(DType::kF32, {widths[i]}), true);
    x = *b.Matmul(x, w);
    x = *b.Binary("add", x, bias);
    x = *b.Unary("relu", x);
  }
  g->SetResults({x});
  g->SetDeclaredResultTypes({x->type()});
  return g;
}

}  // namespace hgc
