"""ONNX's own node tests (Debian's libonnx-testdata) through hgc.

Each test is a one-node model with its inputs and expected outputs. This
runs every test named in onnx_node_tests.txt through the hgc module and
compares the outputs with the test data (rtol 1e-3, atol 1e-5, as ONNX's
backend tests); onnx_node_skips.txt names the tests of the same ops that
are not expected to pass, each with its reason, and they are listed as
skipped.

hgc compiles a graph for fixed shapes and values known at compile time, so
a test input that the model uses as such (a Reshape's shape, Unsqueeze's
axes, quantization parameters, a Slice's starts: compile_time_inputs)
becomes an initializer with the test's value, as a framework's exported
model holds it; the other inputs are given at run time.

    python3 onnx_node_test.py [--update]

--update rewrites both lists from what passes now (reasons are hgc's
errors). Under Bazel the results go to $XML_OUTPUT_FILE, one test case per
ONNX test.
"""
import glob
import os
import sys
import traceback
from xml.sax.saxutils import quoteattr

import numpy as np
import onnx
from onnx import numpy_helper

import hgc

DATA = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "onnx_node_tests.txt")
SKIPS = os.path.join(HERE, "onnx_node_skips.txt")

# Inputs (by position) that an op needs at compile time.
COMPILE_TIME_INPUTS = {
    "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2),
    "Reshape": (1,),
    "Unsqueeze": (1,),
    "Squeeze": (1,),
    "ReduceSum": (1,),
    "ReduceMean": (1,),
    "ReduceMax": (1,),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "Expand": (1,),
    "Tile": (1,),
    "ConstantOfShape": (0,),
    "Range": (0, 1, 2),
    "Pow": (1,),
}


# Why a test fails where hgc's error or the comparison does not say it.
KNOWN_REASONS = {
    "test_cast_FLOAT_to_BFLOAT16":
        "ONNX 1.12's expected bf16 values are truncated; hgc rounds to "
        "nearest even (design.md: cast)",
}


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def as_float(value, elem_type):
    """The expected values as float64: bf16 data comes as uint16 bit
    patterns, which the module returns as float32 values."""
    if elem_type == onnx.TensorProto.BFLOAT16 and value.dtype == np.uint16:
        value = (value.astype(np.uint32) << 16).view(np.float32)
    return value.astype(np.float64)


def compile_time_inputs(model):
    names = set()
    for node in model.graph.node:
        for i in COMPILE_TIME_INPUTS.get(node.op_type, ()):
            if i < len(node.input) and node.input[i]:
                names.add(node.input[i])
    return names


def run_test(name):
    """None when the outputs match, else what went wrong."""
    directory = os.path.join(DATA, name)
    model = onnx.load(os.path.join(directory, "model.onnx"))
    data = os.path.join(directory, "test_data_set_0")
    inputs = [read_tensor(p) for p in sorted(glob.glob(data + "/input_*.pb"))]
    expected = [read_tensor(p)
                for p in sorted(glob.glob(data + "/output_*.pb"))]
    frozen = compile_time_inputs(model)
    run_inputs = []
    for info, value in zip(model.graph.input, inputs):
        if info.name in frozen:
            model.graph.initializer.append(
                numpy_helper.from_array(value, info.name))
        else:
            run_inputs.append(value)
    try:
        outputs = hgc.compile(model)(*run_inputs)
    except hgc.Error as e:
        message = str(e).splitlines()[0]
        return message.split("error: ", 1)[-1]
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, the test data has {len(expected)}"
    for i, (got, want) in enumerate(zip(outputs, expected)):
        if got.shape != want.shape:
            return f"output {i}: shape {got.shape}, expected {want.shape}"
        want = as_float(want, model.graph.output[i].type.tensor_type.elem_type)
        if not np.allclose(got.astype(np.float64), want, rtol=1e-3,
                           atol=1e-5, equal_nan=True):
            return f"output {i}: results differ from the test data"
    return None


def read_list(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f
                if line.strip() and not line.startswith("#")]


def write_xml(results):
    path = os.environ.get("XML_OUTPUT_FILE")
    if not path:
        return
    with open(path, "w") as f:
        failures = sum(1 for _, error in results if error)
        f.write(f'<?xml version="1.0"?>\n<testsuites><testsuite '
                f'name="onnx_node_tests" tests="{len(results)}" '
                f'failures="{failures}">\n')
        for name, error in results:
            f.write(f'<testcase name="{name}" classname="onnx_node_tests">')
            if error:
                f.write(f'<failure message={quoteattr(error)}/>')
            f.write("</testcase>\n")
        f.write("</testsuite></testsuites>\n")


def update(names):
    """Rewrites both lists: every listed test is rerun."""
    passing, skipped = [], []
    for name in names:
        try:
            error = run_test(name)
        except Exception as e:  # unreadable test data
            error = f"{type(e).__name__}: {e}"
        if error:
            skipped.append((name, KNOWN_REASONS.get(name, error)))
        else:
            passing.append(name)
    with open(EXPECTED) as f:
        header = [line for line in f if line.startswith("#")]
    with open(EXPECTED, "w") as f:
        f.writelines(header)
        f.writelines(n + "\n" for n in passing)
    with open(SKIPS) as f:
        header = [line for line in f if line.startswith("#")]
    with open(SKIPS, "w") as f:
        f.writelines(header)
        f.writelines(f"{n}\t{e}\n" for n, e in skipped)
    print(f"{len(passing)} expected to pass, {len(skipped)} skipped")


def main():
    expected = [row[0] for row in read_list(EXPECTED)]
    skips = read_list(SKIPS)
    if "--update" in sys.argv:
        update(sorted(expected + [row[0] for row in skips]))
        return 0
    results = []
    for name in expected:
        try:
            error = run_test(name)
        except Exception:
            error = traceback.format_exc().splitlines()[-1]
        results.append((name, error))
        if error:
            print(f"FAIL {name}: {error}")
    for name, reason in skips:
        print(f"SKIP {name}: {reason}")
    failed = sum(1 for _, error in results if error)
    print(f"{len(results) - failed} of {len(results)} ONNX node tests pass, "
          f"{len(skips)} skipped with their reasons")
    write_xml(results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
