#!/usr/bin/env bash
# The ISA matrix: runs the tests that exercise kernels and their choice
# under each instruction-set cap the project supports, so that a test
# assuming the host's features fails on every machine, not only on the ones
# that lack them. Each cap applies to hgc (HGC_MAX_ISA) and to oneDNN
# (ONEDNN_MAX_CPU_ISA, and DNNL_MAX_CPU_ISA, its older spelling) together; a
# cap above the host's ISA is the host. The uncapped host is `bazel test
# //...` itself.
#
# Usage: tools/isa_matrix.sh [CAP ...]   (default: every cap below)
# Extra Bazel flags go in ISA_MATRIX_BAZEL_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."

caps=("$@")
if [[ ${#caps[@]} -eq 0 ]]; then
  caps=(avx2 avx512_core avx512_core_vnni avx512_core_bf16)
fi

# Per cap: every golden test (kernel choice, loop nests, --check at 1 and 2
# threads), the executable, API and baseline tests, and the microkernel and
# codegen tests that compare kernels with the reference on every tail case.
targets=(
  //testdata:all
  //runtime:executable_test
  //hgc:hgc_test
  //baseline:all
  //microkernels:all
  //codegen:all
)

for cap in "${caps[@]}"; do
  echo "isa_matrix: HGC_MAX_ISA=${cap}"
  upper=$(echo "${cap}" | tr '[:lower:]' '[:upper:]')
  # shellcheck disable=SC2086
  bazel test ${ISA_MATRIX_BAZEL_FLAGS:-} \
    --test_env=HGC_MAX_ISA="${cap}" \
    --test_env=ONEDNN_MAX_CPU_ISA="${upper}" \
    --test_env=DNNL_MAX_CPU_ISA="${upper}" \
    "${targets[@]}"
done
