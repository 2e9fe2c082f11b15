#!/usr/bin/env bash
# ONNX's node tests through hgc (conformance_test.py), with Debian's
# /usr/bin/python3, which has python3-onnx and python3-numpy.
# Usage: conformance_test.sh HGC LIST
set -euo pipefail
exec /usr/bin/python3 testdata/onnx/conformance_test.py "$@"
