"""Compiles an ONNX MLP and an ONNX attention block with hgc from Python,
checks each against numpy, and prints hgc's speedup over the same model run
op by op in numpy.

    bazel build //python:hgc.so
    PYTHONPATH=$PWD/bazel-bin/python /usr/bin/python3 examples/onnx_models.py [--threads N]

The models are built with onnx.helper in the form torch.onnx.export writes
them (opset 14): the DLRM bottom MLP (MatMul, Add, Relu per layer, weights
as initializers) and a BERT-base attention block (Q.K^T through a
Transpose, Div by sqrt(head size), Add of the mask, Softmax, .V).
Exit status 1 when a result differs from numpy's.
"""
import argparse
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import hgc


def mlp_model(rng, batch, widths):
    nodes, inits, x = [], [], "x"
    for i in range(1, len(widths)):
        w = (rng.standard_normal((widths[i - 1], widths[i])) /
             np.sqrt(widths[i - 1])).astype(np.float32)
        b = rng.standard_normal(widths[i]).astype(np.float32) * 0.1
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"h{i}"]),
                  helper.make_node("Add", [f"h{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"y{i}"])]
        x = f"y{i}"
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, widths[0]])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT,
                                       [batch, widths[-1]])],
        initializer=inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 14)])

    def numpy_run(inputs):
        y = inputs[0]
        for i in range(1, len(widths)):
            w = numpy_helper.to_array(inits[2 * i - 2])
            b = numpy_helper.to_array(inits[2 * i - 1])
            y = np.maximum(y @ w + b, 0)
        return y

    x = rng.standard_normal((batch, widths[0])).astype(np.float32)
    return model, [x], numpy_run


def attention_model(rng, batch, heads, seq, head_size):
    shape = [batch, heads, seq, head_size]
    scale = np.array(np.sqrt(head_size), np.float32)
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Div", ["s", "scale"], ["t"]),
        helper.make_node("Add", ["t", "mask"], ["m"]),
        helper.make_node("Softmax", ["m"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
              for n in ("q", "k", "v")]
    inputs.append(helper.make_tensor_value_info(
        "mask", TensorProto.FLOAT, [batch, 1, 1, seq]))
    graph = helper.make_graph(
        nodes, "attention", inputs,
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, shape)],
        initializer=[numpy_helper.from_array(scale, "scale")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 14)])

    def numpy_run(inputs):
        q, k, v, mask = inputs
        m = q @ np.swapaxes(k, -1, -2) / scale + mask
        p = np.exp(m - m.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        return p @ v

    data = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(3)]
    data.append(rng.uniform(-1, 0, (batch, 1, 1, seq)).astype(np.float32))
    return model, data, numpy_run


def median_seconds(f, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def run(name, model, inputs, numpy_run, threads, runs):
    compiled = hgc.compile(model, threads=threads)
    expected = numpy_run(inputs)
    result = compiled(*inputs)
    error = float(np.max(np.abs(result - expected)))
    ok = np.allclose(result, expected, rtol=1e-4, atol=1e-4)
    out = np.empty_like(expected)
    # Alternate the two sides so that a machine changing speed affects both.
    hgc_s, numpy_s = [], []
    for _ in range(5):
        hgc_s.append(median_seconds(lambda: compiled(*inputs, out=out), runs))
        numpy_s.append(median_seconds(lambda: numpy_run(inputs), runs))
    speedup = np.median(np.array(numpy_s) / np.array(hgc_s))
    print(f"{name}: max |hgc - numpy| = {error:.2e} ({'PASS' if ok else 'FAIL'}), "
          f"hgc {np.median(hgc_s) * 1e3:.3f} ms, numpy {np.median(numpy_s) * 1e3:.3f} ms, "
          f"speedup {speedup:.2f}x ({threads} thread{'s' if threads > 1 else ''})")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ok = run("MLP (DLRM bottom, batch 128)",
             *mlp_model(rng, 128, [13, 512, 256, 128]), args.threads, args.runs)
    ok &= run("attention (BERT-base, batch 1, seq 128)",
              *attention_model(rng, 1, 12, 128, 64), args.threads, args.runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
