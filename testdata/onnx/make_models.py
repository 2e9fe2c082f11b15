#!/usr/bin/python3
"""Writes the ONNX models of testdata/onnx/ (run with Debian's
/usr/bin/python3, which has python3-onnx and python3-numpy):

  mlp.onnx             MatMul + Add + Relu, twice
  mlp_gemm.onnx        the same MLP as torch.nn.Linear exports it: Gemm
                       with transB = 1
  attention.onnx       one multi-head self-attention block as torch
                       exports it (opset 14): projections, Reshape through
                       an int64 shape chain, Transpose, MatMul, Div by
                       sqrt(d), Add mask, Softmax, MatMul
  layernorm_gelu.onnx  LayerNorm and GELU decomposed into elementwise ops
                       and reductions, as torch exports them at opset 14
  gelu_tanh.onnx       GELU's tanh approximation decomposed as torch exports
                       it at opset 17 (approximate='tanh')
  symbolic_batch.onnx  a Relu whose input has a symbolic batch dimension
                       (bound with --dim batch=N or --input-shape x=N,4)
  unsupported.onnx     Conv, Relu, MaxPool: two ops hgc does not convert
  truncated.onnx       the first half of mlp.onnx's bytes
  mlp_gemm_input.npy   an input for mlp_gemm.onnx's `input.1`

Weights come from a seeded numpy generator, so every run writes the same
bytes. Usage: make_models.py [OUTPUT_DIR] (default: this script's folder).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2024)


def weight(name, *shape, scale=None):
    scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
    values = (RNG.standard_normal(shape) * scale).astype(np.float32)
    return numpy_helper.from_array(values, name)


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def model(nodes, name, inputs, outputs, initializers, opset):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    m = helper.make_model(graph, producer_name="hgc-testdata",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp():
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["h0"], name="fc0"),
        helper.make_node("Add", ["h0", "b0"], ["a0"], name="bias0"),
        helper.make_node("Relu", ["a0"], ["r0"], name="relu0"),
        helper.make_node("MatMul", ["r0", "w1"], ["h1"], name="fc1"),
        helper.make_node("Add", ["h1", "b1"], ["a1"], name="bias1"),
        helper.make_node("Relu", ["a1"], ["y"], name="relu1"),
    ]
    inits = [weight("w0", 32, 64), weight("b0", 64, scale=0.1),
             weight("w1", 64, 16), weight("b1", 16, scale=0.1)]
    return model(nodes, "mlp", [f32("x", [8, 32])], [f32("y", [8, 16])],
                 inits, 13)


def mlp_gemm():
    nodes = [
        helper.make_node("Gemm", ["input.1", "fc0.weight", "fc0.bias"], ["h0"],
                         name="/fc0/Gemm", transB=1),
        helper.make_node("Relu", ["h0"], ["r0"], name="/relu/Relu"),
        helper.make_node("Gemm", ["r0", "fc1.weight", "fc1.bias"], ["out"],
                         name="/fc1/Gemm", alpha=1.0, beta=1.0, transB=1),
    ]
    inits = [weight("fc0.weight", 64, 32, scale=1 / np.sqrt(32)),
             weight("fc0.bias", 64, scale=0.1),
             weight("fc1.weight", 16, 64, scale=1 / np.sqrt(64)),
             weight("fc1.bias", 16, scale=0.1)]
    return model(nodes, "torch_jit", [f32("input.1", [8, 32])],
                 [f32("out", [8, 16])], inits, 13)


def attention():
    b, s, d, heads = 2, 32, 64, 4
    dh = d // heads
    nodes = []
    inits = [const("zero", [0], np.int64), const("one", [1], np.int64),
             const("heads", [heads], np.int64), const("head_dim", [dh], np.int64),
             const("model_dim", [d], np.int64),
             const("scale", np.sqrt(dh))]

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs,
                                      name="/attn/%s_%d" % (op, len(nodes)),
                                      **attrs))

    # torch's x.size(0), x.size(1): Shape, Gather, Unsqueeze.
    node("Shape", ["x"], ["x_shape"])
    node("Gather", ["x_shape", "zero"], ["batch"], axis=0)
    node("Gather", ["x_shape", "one"], ["seq"], axis=0)
    node("Concat", ["batch", "seq", "heads", "head_dim"], ["split_shape"],
         axis=0)
    node("Concat", ["batch", "seq", "model_dim"], ["merge_shape"], axis=0)
    for p in "qkv":
        inits += [weight("w" + p, d, d), weight("b" + p, d, scale=0.1)]
        node("MatMul", ["x", "w" + p], [p + "_proj"])
        node("Add", [p + "_proj", "b" + p], [p + "_biased"])
        node("Reshape", [p + "_biased", "split_shape"], [p + "_heads"])
        perm = [0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]
        node("Transpose", [p + "_heads"], [p + "_t"], perm=perm)
    node("MatMul", ["q_t", "k_t"], ["scores"])
    node("Div", ["scores", "scale"], ["scaled"])
    node("Add", ["scaled", "mask"], ["masked"])
    node("Softmax", ["masked"], ["probs"], axis=-1)
    node("MatMul", ["probs", "v_t"], ["context"])
    node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3])
    node("Reshape", ["context_t", "merge_shape"], ["merged"])
    inits += [weight("wo", d, d)]
    node("MatMul", ["merged", "wo"], ["y"])
    return model(nodes, "attention",
                 [f32("x", [b, s, d]), f32("mask", [b, 1, 1, s])],
                 [f32("y", [b, s, d])], inits, 14)


def layernorm_gelu():
    d = 64
    nodes = []

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs,
                                      name="/block/%s_%d" % (op, len(nodes)),
                                      **attrs))

    # LayerNorm: (x - mean) / sqrt(var + eps) * gamma + beta.
    node("ReduceMean", ["x"], ["mean"], axes=[-1])
    node("Sub", ["x", "mean"], ["centered"])
    node("Pow", ["centered", "two"], ["squared"])
    node("ReduceMean", ["squared"], ["var"], axes=[-1])
    node("Add", ["var", "eps"], ["var_eps"])
    node("Sqrt", ["var_eps"], ["std"])
    node("Div", ["centered", "std"], ["normed"])
    node("Mul", ["normed", "gamma"], ["scaled"])
    node("Add", ["scaled", "beta"], ["ln"])
    # GELU: x * 0.5 * (1 + erf(x / sqrt(2))).
    node("Div", ["ln", "sqrt2"], ["ln_div"])
    node("Erf", ["ln_div"], ["erf"])
    node("Add", ["erf", "one"], ["erf_1"])
    node("Mul", ["ln", "erf_1"], ["gelu_x"])
    node("Mul", ["gelu_x", "half"], ["y"])
    inits = [const("two", 2.0), const("eps", 1e-5), const("sqrt2", np.sqrt(2.0)),
             const("one", 1.0), const("half", 0.5),
             weight("gamma", d, scale=1.0), weight("beta", d, scale=0.1)]
    return model(nodes, "layernorm_gelu", [f32("x", [8, d])], [f32("y", [8, d])],
                 inits, 14)


def gelu_tanh():
    nodes = []

    def node(op, inputs, outputs):
        nodes.append(helper.make_node(op, inputs, outputs,
                                      name="/act/%s_%d" % (op, len(nodes))))

    # 0.5 * (x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * (x * (x * x)))))).
    node("Mul", ["x", "x"], ["x2"])
    node("Mul", ["x", "x2"], ["x3"])
    node("Mul", ["kappa", "x3"], ["kx3"])
    node("Add", ["x", "kx3"], ["inner"])
    node("Mul", ["beta", "inner"], ["scaled"])
    node("Tanh", ["scaled"], ["tanh"])
    node("Add", ["one", "tanh"], ["tanh_1"])
    node("Mul", ["x", "tanh_1"], ["gelu_x"])
    node("Mul", ["half", "gelu_x"], ["y"])
    inits = [const("kappa", 0.044715), const("beta", np.sqrt(2.0 / np.pi)),
             const("one", 1.0), const("half", 0.5)]
    return model(nodes, "gelu_tanh", [f32("x", [4, 32])], [f32("y", [4, 32])],
                 inits, 17)


def symbolic_batch():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, "symbolic", [f32("x", ["batch", 4])],
                 [f32("y", ["batch", 4])], [], 14)


def unsupported():
    nodes = [
        helper.make_node("Conv", ["image", "filters"], ["c"], name="conv1"),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["y"], name="pool1",
                         kernel_shape=[2, 2]),
    ]
    return model(nodes, "convnet", [f32("image", [1, 3, 8, 8])],
                 [f32("y", [1, 4, 3, 3])], [weight("filters", 4, 3, 3, 3)], 14)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    written = {}
    for name, make in [("mlp", mlp), ("mlp_gemm", mlp_gemm),
                       ("attention", attention),
                       ("layernorm_gelu", layernorm_gelu),
                       ("gelu_tanh", gelu_tanh),
                       ("symbolic_batch", symbolic_batch)]:
        path = os.path.join(out, name + ".onnx")
        written[name] = make().SerializeToString()
        with open(path, "wb") as f:
            f.write(written[name])
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    with open(os.path.join(out, "unsupported.onnx"), "wb") as f:
        f.write(unsupported().SerializeToString())
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(written["mlp"][:len(written["mlp"]) // 2])
    np.save(os.path.join(out, "mlp_gemm_input.npy"),
            RNG.standard_normal((8, 32)).astype(np.float32))


if __name__ == "__main__":
    main()
