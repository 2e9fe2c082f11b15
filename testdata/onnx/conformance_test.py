#!/usr/bin/python3
"""ONNX's own node tests (Debian's libonnx-testdata: a model, its inputs
and the outputs ONNX's reference gives) through `hgc MODEL.onnx --run`.
The tests are those python/onnx_node_tests.txt lists (the one list of what
hgc supports of that suite, which //python:onnx_node_test keeps): each
that the driver can give its inputs must import, compile, run and match
ONNX's outputs to 1e-4. The others are skipped with their reason.

Usage: conformance_test.py HGC LIST   (run with /usr/bin/python3, which has
python3-onnx and python3-numpy)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"

# Inputs (by position) that hgc needs as constants whatever their type:
# the python runner freezes them into initializers, the driver gives every
# model input at run time.
CONSTANT_INPUTS = {
    "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2),
    "Range": (0, 1, 2),
}


def read_list(path):
    with open(path) as f:
        return [line.strip() for line in f
                if line.strip() and not line.startswith("#")]


def driver_limit(model):
    """Why the driver cannot run `model` with the test's inputs, or None."""
    initializers = {i.name for i in model.graph.initializer}
    constant = set()
    for node in model.graph.node:
        for i in CONSTANT_INPUTS.get(node.op_type, ()):
            if i < len(node.input):
                constant.add(node.input[i])
    for info in model.graph.input:
        if info.name in initializers:
            continue
        elem_type = info.type.tensor_type.elem_type
        # hgc has no int64 dtype: a listed test's int64 input is a shape or
        # axes, which the python runner freezes.
        if info.name in constant or elem_type == onnx.TensorProto.INT64:
            return "an input needed at compile time (the driver gives " \
                   "every input at run time)"
        if elem_type == onnx.TensorProto.BFLOAT16:
            return "a bf16 input (.npy has no bf16)"
    return None


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def check(hgc, name, model, scratch):
    folder = os.path.join(NODE_TESTS, name)
    model_path = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "test_data_set_0")
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    work = tempfile.mkdtemp(dir=scratch)
    args = [hgc, model_path, "--run", "--output-dir", os.path.join(work, "out")]
    for k, input_name in enumerate(inputs):
        path = os.path.join(work, "in%d.npy" % k)
        np.save(path, read_tensor(os.path.join(data, "input_%d.pb" % k)))
        args += ["--input", "%s=%s" % (input_name, path)]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        return "hgc failed: " + run.stderr.strip()
    for k in range(len(model.graph.output)):
        want = read_tensor(os.path.join(data, "output_%d.pb" % k))
        got = np.load(os.path.join(work, "out", "out%d.npy" % k))
        if got.shape != want.shape:
            return "output %d has shape %s, ONNX gives %s" % (k, got.shape,
                                                            want.shape)
        if want.size and np.max(np.abs(got.astype(np.float64) -
                                       want.astype(np.float64))) > 1e-4:
            return "output %d differs from ONNX's" % k
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    hgc = os.path.abspath(sys.argv[1])
    if not os.path.isdir(NODE_TESTS):
        print("%s is missing: install libonnx-testdata (./configure)" % NODE_TESTS)
        return 1
    scratch = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    ran, failures, skipped = 0, 0, {}
    for name in read_list(sys.argv[2]):
        model = onnx.load(os.path.join(NODE_TESTS, name, "model.onnx"))
        limit = driver_limit(model)
        if limit:
            skipped.setdefault(limit, []).append(name)
            continue
        ran += 1
        problem = check(hgc, name, model, scratch)
        if problem:
            failures += 1
            print("FAIL %s: %s" % (name, problem))
    for reason, names in sorted(skipped.items()):
        print("SKIP %d, %s: %s" % (len(names), reason, " ".join(names)))
    print("%d of ONNX's node tests run, %d failures, %d skipped" %
          (ran, failures, sum(len(n) for n in skipped.values())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
