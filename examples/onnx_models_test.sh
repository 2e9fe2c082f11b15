#!/usr/bin/env bash
# Runs examples/onnx_models.py (few timed runs) on Debian's Python with the
# module built here: both models must match numpy (exit 0, two PASS lines).
set -euo pipefail
module="$1"
script="$2"
export PYTHONPATH="$(cd "$(dirname "$module")" && pwd)"
out="$(/usr/bin/python3 "$script" --threads 2 --runs 2)"
echo "$out"
[[ $(grep -c "(PASS)" <<<"$out") -eq 2 ]]
