#!/usr/bin/env bash
# Every .graph file in testdata/ compiles, runs and matches the reference
# interpreter (`hgc FILE --run --check`) with 1 and 2 threads. Files that do
# not parse or verify must be error tests (a `not hgc` RUN line); they are
# listed as skipped, with the reason.
# Usage: check_all_test.sh HGC GRAPH...
set -uo pipefail

hgc="$1"
shift
checked=0
skipped=0
failed=0
for graph in "$@"; do
  if ! "$hgc" "$graph" --emit=ir > /dev/null 2>&1; then
    if grep -q "RUN:.*not hgc" "$graph"; then
      echo "SKIPPED $graph: an error test (does not compile by design)"
      skipped=$((skipped + 1))
      continue
    fi
    echo "FAIL $graph: does not compile and is not an error test"
    failed=$((failed + 1))
    continue
  fi
  for threads in 1 2; do
    if ! out="$("$hgc" "$graph" --run --check --threads "$threads" 2>&1)"; then
      echo "FAIL $graph (--threads $threads):"
      echo "$out" | tail -5
      failed=$((failed + 1))
    fi
  done
  checked=$((checked + 1))
done
echo "$checked graphs checked with 1 and 2 threads, $skipped error tests" \
  "skipped, $failed failures"
[[ "$checked" -gt 50 && "$failed" -eq 0 ]]
