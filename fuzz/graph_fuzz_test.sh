#!/usr/bin/env bash
# The short seeded differential run that `bazel test` includes: seeds 1 to
# 300 (a quarter on special values), compiled at 1 and 2 threads and checked
# against the reference interpreter, empty tensors included.
# Usage: graph_fuzz_test.sh GRAPH_FUZZ
set -euo pipefail
fuzz="$1"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}"
"$fuzz" --seed=1 --count=300 --out_dir="$out"
