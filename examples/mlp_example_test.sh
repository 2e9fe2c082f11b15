#!/usr/bin/env bash
# Runs the MLP example and checks that it reports PASS and exits 0.
# Usage (from Bazel): mlp_example_test.sh PATH_TO_mlp_example
set -euo pipefail
out=$("$1" --threads=2)
echo "$out"
[[ "$out" == *": PASS "* ]] || { echo "expected PASS" >&2; exit 1; }
