// Graphs the C++ API tests build with hgc::Builder.
#ifndef HGC_HGC_TEST_GRAPHS_H_
#define HGC_HGC_TEST_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace hgc {

// @name: x[batch, widths[0]] through matmul + bias + relu per layer, the
// weights and biases const (DLRM's MLPs are {13, 512, 256, 128} and
// {479, 1024, 1024, 512, 256, 1}).
Graph* BuildMlp(Module& module, const std::string& name, int64_t batch,
                const std::vector<int64_t>& widths);

}  // namespace hgc

#endif  // HGC_HGC_TEST_GRAPHS_H_
