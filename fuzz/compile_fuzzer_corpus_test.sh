#!/usr/bin/env bash
# Runs the compile fuzzer's entry point (built with its standalone main) over
# every file given: the graphs under testdata/ and the bad-input corpus. The
# entry point traps on any broken invariant (a crash, an undiagnosed error, a
# run that disagrees with the reference), which fails this test; every file
# must also be reported as run.
# Usage: compile_fuzzer_corpus_test.sh COMPILE_FUZZER FILE...
set -euo pipefail
fuzzer="$1"
shift
log="$(mktemp)"
"$fuzzer" "$@" > "$log"
ran=$(grep -c '^ok ' "$log" || true)
if [[ "$ran" -ne "$#" ]]; then
  echo "ran $ran of $# files" >&2
  exit 1
fi
echo "compile fuzzer entry point: $ran files"
