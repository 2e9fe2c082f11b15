#!/usr/bin/python3
"""Writes the ONNX models of the issue's "done when" checks into
testdata/onnx/ (run with Debian's /usr/bin/python3), in the forms
torch.onnx.export and ONNX Runtime's static quantizer write them:

  dlrm_mlp.onnx          the DLRM bottom MLP (13 -> 512 -> 256 -> 128,
                         batch 128): MatMul + Add + Relu per layer
  dlrm_mlp_qdq.onnx      the same MLP quantized in the QDQ form: u8
                         activations (QuantizeLinear / DequantizeLinear per
                         tensor), s8 weights with one scale per output
                         column (DequantizeLinear, axis 1)
  encoder_opset14.onnx   a BERT-style encoder layer (batch 2, seq 32,
                         hidden 64, 4 heads, FFN 256): self-attention
                         through an int64 shape chain, residual adds,
                         LayerNorm decomposed and GELU as erf (opset 14)
  encoder_opset17.onnx   the same layer at opset 17, LayerNorm as
                         LayerNormalization

Weights come from a seeded numpy generator (make_models.py's helpers), so
every run writes the same bytes. Usage: make_paper_models.py [OUTPUT_DIR].
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import make_models
from make_models import const, f32, model, weight


class Nodes:
    """Collects nodes with torch-like names."""

    def __init__(self, scope):
        self.scope = scope
        self.nodes = []

    def __call__(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(
            op, inputs, outputs, name=f"/{self.scope}/{op}_{len(self.nodes)}",
            **attrs))
        return outputs[0]


def dlrm_mlp():
    widths = [13, 512, 256, 128]
    node, inits, x = Nodes("mlp"), [], "x"
    for i in range(1, len(widths)):
        inits += [weight(f"w{i}", widths[i - 1], widths[i]),
                  weight(f"b{i}", widths[i], scale=0.1)]
        x = node("Relu", [node("Add", [node("MatMul", [x, f"w{i}"], [f"h{i}"]),
                                        f"b{i}"], [f"a{i}"])], [f"y{i}"])
    return model(node.nodes, "dlrm_mlp", [f32("x", [128, widths[0]])],
                 [f32(x, [128, widths[-1]])], inits, 14)


def dlrm_mlp_qdq():
    widths = [13, 512, 256, 128]
    node, inits = Nodes("mlp"), []
    inits += [const("x_scale", 0.02), const("x_zp", 128, np.uint8),
              const("h_scale", 0.03), const("h_zp", 0, np.uint8)]
    x = "x"
    scale, zp = "x_scale", "x_zp"
    for i in range(1, len(widths)):
        k, n = widths[i - 1], widths[i]
        w = make_models.RNG.integers(-127, 128, (k, n)).astype(np.int8)
        w_scale = (make_models.RNG.uniform(0.5, 1.5, n) /
                   (127 * np.sqrt(k))).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}_q"),
                  numpy_helper.from_array(w_scale, f"w{i}_scale"),
                  numpy_helper.from_array(np.zeros(n, np.int8), f"w{i}_zp"),
                  weight(f"b{i}", n, scale=0.1)]
        xq = node("QuantizeLinear", [x, scale, zp], [f"x{i}_q"])
        xd = node("DequantizeLinear", [xq, scale, zp], [f"x{i}_dq"])
        wd = node("DequantizeLinear", [f"w{i}_q", f"w{i}_scale", f"w{i}_zp"],
                  [f"w{i}_dq"], axis=1)
        h = node("MatMul", [xd, wd], [f"h{i}"])
        x = node("Relu", [node("Add", [h, f"b{i}"], [f"a{i}"])], [f"y{i}"])
        scale, zp = "h_scale", "h_zp"
    return model(node.nodes, "dlrm_mlp_qdq", [f32("x", [128, widths[0]])],
                 [f32(x, [128, widths[-1]])], inits, 13)


def layer_norm(node, inits, x, name, d, opset):
    inits += [weight(f"{name}_gamma", d, scale=1.0),
              weight(f"{name}_beta", d, scale=0.1)]
    if opset >= 17:
        return node("LayerNormalization", [x, f"{name}_gamma", f"{name}_beta"],
                    [f"{name}_out"], axis=-1, epsilon=1e-5)
    mean = node("ReduceMean", [x], [f"{name}_mean"], axes=[-1])
    centered = node("Sub", [x, mean], [f"{name}_centered"])
    squared = node("Pow", [centered, "two"], [f"{name}_squared"])
    var = node("ReduceMean", [squared], [f"{name}_var"], axes=[-1])
    std = node("Sqrt", [node("Add", [var, "eps"], [f"{name}_var_eps"])],
               [f"{name}_std"])
    normed = node("Div", [centered, std], [f"{name}_normed"])
    scaled = node("Mul", [normed, f"{name}_gamma"], [f"{name}_scaled"])
    return node("Add", [scaled, f"{name}_beta"], [f"{name}_out"])


def encoder(opset):
    b, s, d, heads, ffn = 2, 32, 64, 4, 256
    dh = d // heads
    node, inits = Nodes("encoder"), []
    inits += [const("zero", [0], np.int64), const("one_i", [1], np.int64),
              const("heads", [heads], np.int64),
              const("head_dim", [dh], np.int64),
              const("model_dim", [d], np.int64), const("scale", np.sqrt(dh)),
              const("two", 2.0), const("eps", 1e-5),
              const("sqrt2", np.sqrt(2.0)), const("one", 1.0),
              const("half", 0.5)]
    shape = node("Shape", ["x"], ["x_shape"])
    batch = node("Gather", [shape, "zero"], ["batch"], axis=0)
    seq = node("Gather", [shape, "one_i"], ["seq"], axis=0)
    split = node("Concat", [batch, seq, "heads", "head_dim"], ["split_shape"],
                 axis=0)
    merge = node("Concat", [batch, seq, "model_dim"], ["merge_shape"], axis=0)
    t = {}
    for p in "qkv":
        inits += [weight("w" + p, d, d), weight("b" + p, d, scale=0.1)]
        proj = node("Add", [node("MatMul", ["x", "w" + p], [p + "_proj"]),
                            "b" + p], [p + "_biased"])
        t[p] = node("Transpose", [node("Reshape", [proj, split], [p + "_heads"])],
                    [p + "_t"], perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])
    scores = node("Div", [node("MatMul", [t["q"], t["k"]], ["scores"]), "scale"],
                  ["scaled"])
    probs = node("Softmax", [node("Add", [scores, "mask"], ["masked"])],
                 ["probs"], axis=-1)
    context = node("Transpose", [node("MatMul", [probs, t["v"]], ["context"])],
                   ["context_t"], perm=[0, 2, 1, 3])
    merged = node("Reshape", [context, merge], ["merged"])
    inits += [weight("wo", d, d), weight("bo", d, scale=0.1)]
    attn = node("Add", [node("MatMul", [merged, "wo"], ["attn_proj"]), "bo"],
                ["attn_out"])
    ln1 = layer_norm(node, inits, node("Add", [attn, "x"], ["res1"]), "ln1", d,
                     opset)
    inits += [weight("w1", d, ffn), weight("b1", ffn, scale=0.1),
              weight("w2", ffn, d), weight("b2", d, scale=0.1)]
    h = node("Add", [node("MatMul", [ln1, "w1"], ["ffn1"]), "b1"], ["ffn1_b"])
    erf = node("Erf", [node("Div", [h, "sqrt2"], ["gelu_div"])], ["gelu_erf"])
    gelu = node("Mul", [node("Mul", [h, node("Add", [erf, "one"], ["gelu_1"])],
                             ["gelu_x"]), "half"], ["gelu"])
    out = node("Add", [node("MatMul", [gelu, "w2"], ["ffn2"]), "b2"], ["ffn2_b"])
    y = layer_norm(node, inits, node("Add", [out, ln1], ["res2"]), "ln2", d,
                   opset)
    return model(node.nodes, f"encoder_opset{opset}",
                 [f32("x", [b, s, d]), f32("mask", [b, 1, 1, s])],
                 [f32(y, [b, s, d])], inits, opset)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    for name, build in [("dlrm_mlp", dlrm_mlp), ("dlrm_mlp_qdq", dlrm_mlp_qdq),
                        ("encoder_opset14", lambda: encoder(14)),
                        ("encoder_opset17", lambda: encoder(17))]:
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(build().SerializeToString())


if __name__ == "__main__":
    main()
