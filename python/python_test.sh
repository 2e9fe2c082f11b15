#!/usr/bin/env bash
# Runs a Python test script on Debian's Python (the one Debian's numpy and onnx
# serve, whatever `python3` is first on PATH) with the module built here.
set -euo pipefail
module="$1"
script="$2"
export PYTHONPATH="$(cd "$(dirname "$module")" && pwd)"
exec /usr/bin/python3 "$script"
