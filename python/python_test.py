"""Tests of the hgc Python module (python/hgc_module.cc)."""
import os
import tempfile
import threading
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import hgc

MLP = """
graph @mlp(%x: f32[4, 8], %w: f32[8, 3] const, %b: f32[3] const) -> f32[4, 3] {
  %0 = matmul(%x, %w)
  %1 = add(%0, %b)
  %2 = relu(%1)
  return %2
}
"""

TWO_RESULTS = """
graph @two(%x: f32[2, 3], %y: f32[2, 3]) -> (f32[2, 3], f32[2, 3]) {
  %0 = add(%x, %y)
  %1 = mul(%x, %y)
  return %0, %1
}
"""

BF16 = """
graph @h(%x: bf16[5]) -> bf16[5] {
  %0 = add(%x, %x)
  return %0
}
"""


def mlp_reference(x, w, b):
    return np.maximum(x @ w + b, 0)


def onnx_mlp(rng):
    w = rng.standard_normal((8, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]),
         helper.make_node("Add", ["h", "b"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["y"])],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
        initializer=[numpy_helper.from_array(w, "w"),
                     numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return model, w, b


def onnx_erf_gelu():
    """x * (1 + erf(x / sqrt(2))) * 0.5, as torch exports GELU before
    opset 20."""
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["t"]),
             helper.make_node("Erf", ["t"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["p"]),
             helper.make_node("Mul", ["x", "p"], ["xp"]),
             helper.make_node("Mul", ["xp", "half"], ["y"])]
    constants = [numpy_helper.from_array(np.array(v, np.float32), name)
                 for name, v in (("sqrt2", 1.4142135), ("one", 1.0),
                                 ("half", 0.5))]
    graph = helper.make_graph(
        nodes, "gelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        initializer=constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


class CompileTest(unittest.TestCase):

    def setUp(self):
        self.rng = np.random.default_rng(0)
        self.w = self.rng.standard_normal((8, 3)).astype(np.float32)
        self.b = self.rng.standard_normal(3).astype(np.float32)

    def test_graph_text_with_constants(self):
        model = hgc.compile(MLP, constants={"w": self.w, "b": self.b})
        self.assertEqual(model.input_names, ["x"])
        self.assertEqual(model.input_types, ["f32[4, 8]"])
        self.assertEqual(model.output_types, ["f32[4, 3]"])
        x = self.rng.standard_normal((4, 8)).astype(np.float32)
        np.testing.assert_allclose(model(x), mlp_reference(x, self.w, self.b),
                                   rtol=1e-5, atol=1e-5)

    def test_graph_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.graph")
            with open(path, "w") as f:
                f.write(MLP)
            model = hgc.compile(path, threads=2,
                                constants={"w": self.w, "b": self.b})
        self.assertEqual(model.num_threads, 2)
        x = self.rng.standard_normal((4, 8)).astype(np.float32)
        np.testing.assert_allclose(model(x), mlp_reference(x, self.w, self.b),
                                   rtol=1e-5, atol=1e-5)

    def test_missing_constant_is_an_error(self):
        with self.assertRaisesRegex(hgc.Error, "w.*need values"):
            hgc.compile(MLP, constants={"b": self.b})

    def test_syntax_error_has_its_location(self):
        with self.assertRaisesRegex(hgc.Error, r"<text>:2:\d+: error:"):
            hgc.compile("graph @g(%x: f32[2]) -> f32[2] {\n  %0 = nope(%x)\n"
                        "  return %0\n}\n")
        self.assertTrue(issubclass(hgc.Error, ValueError))

    def test_unknown_source_kind(self):
        with self.assertRaises(hgc.Error):
            hgc.compile(42)


class CallTest(unittest.TestCase):

    def setUp(self):
        rng = np.random.default_rng(1)
        self.w = rng.standard_normal((8, 3)).astype(np.float32)
        self.b = rng.standard_normal(3).astype(np.float32)
        self.x = rng.standard_normal((4, 8)).astype(np.float32)
        self.model = hgc.compile(MLP, constants={"w": self.w, "b": self.b})
        self.expected = mlp_reference(self.x, self.w, self.b)

    def test_out_is_written_in_place(self):
        out = np.zeros((4, 3), np.float32)
        result = self.model(self.x, out=out)
        self.assertIs(result, out)
        np.testing.assert_allclose(out, self.expected, rtol=1e-5, atol=1e-5)

    def test_inputs_of_the_right_kind_are_not_copied(self):
        self.model(self.x)
        self.assertEqual(self.model.last_call_input_copies, 0)
        self.model(self.x.astype(np.float64))
        self.assertEqual(self.model.last_call_input_copies, 1)
        transposed = np.asfortranarray(self.x)
        np.testing.assert_allclose(self.model(transposed), self.expected,
                                   rtol=1e-5, atol=1e-5)
        self.assertEqual(self.model.last_call_input_copies, 1)

    def test_bad_inputs_are_errors(self):
        with self.assertRaisesRegex(hgc.Error, "expected 1 input"):
            self.model()
        with self.assertRaisesRegex(hgc.Error, "input 'x': expected shape"):
            self.model(np.zeros((4, 9), np.float32))
        with self.assertRaisesRegex(hgc.Error, "cannot take complex"):
            self.model(np.zeros((4, 8), np.complex64))
        with self.assertRaisesRegex(hgc.Error, "out= needs"):
            self.model(self.x, out=np.zeros((4, 3), np.float64))

    def test_the_gil_is_released_while_running(self):
        self.model(self.x)
        self.assertTrue(self.model.last_call_released_gil)
        results = [None] * 4

        def call(i):
            results[i] = self.model(self.x)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            np.testing.assert_allclose(r, self.expected, rtol=1e-5, atol=1e-5)

    def test_several_results_are_a_tuple(self):
        model = hgc.compile(TWO_RESULTS)
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        s, p = model(x, x)
        np.testing.assert_array_equal(s, x + x)
        np.testing.assert_array_equal(p, x * x)
        outs = (np.empty((2, 3), np.float32), np.empty((2, 3), np.float32))
        self.assertIs(model(x, x, out=outs)[1], outs[1])

    def test_bf16_goes_in_and_out_as_float32(self):
        model = hgc.compile(BF16)
        x = np.array([1.0, 1.00390625, 3.0, -2.5, 1e-3], np.float32)
        y = model(x)
        self.assertEqual(y.dtype, np.float32)
        # Rounded to bf16 (nearest even: 1.00390625 is halfway between 1.0
        # and 1.0078125), then doubled exactly.
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        expected = 2 * rounded.astype(np.uint32).view(np.float32)
        self.assertEqual(expected[1], 2.0)
        np.testing.assert_array_equal(y, expected)
        # uint16 arrays are bf16 bit patterns, taken as they are.
        bits = np.array([0x3F80, 0x4040, 0xC020, 0x0000, 0x7F80], np.uint16)
        np.testing.assert_array_equal(
            model(bits), np.array([2, 6, -5, 0, np.inf], np.float32))
        self.assertEqual(model.last_call_input_copies, 0)


class OnnxTest(unittest.TestCase):

    def setUp(self):
        self.onnx_model, self.w, self.b = onnx_mlp(np.random.default_rng(2))
        self.x = np.random.default_rng(3).standard_normal((4, 8)).astype(
            np.float32)
        self.expected = mlp_reference(self.x, self.w, self.b)

    def check(self, model):
        self.assertEqual(model.input_names, ["x"])
        np.testing.assert_allclose(model(self.x), self.expected, rtol=1e-5,
                                   atol=1e-5)

    def test_model_proto(self):
        self.check(hgc.compile(self.onnx_model))

    def test_bytes(self):
        self.check(hgc.compile(self.onnx_model.SerializeToString()))

    def test_path(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.onnx")
            onnx.save(self.onnx_model, path)
            self.check(hgc.compile(path, threads=2))

    def test_symbolic_batch_compiles_once_per_shape(self):
        self.onnx_model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = (
            "batch")
        self.onnx_model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = (
            "batch")
        model = hgc.compile(self.onnx_model)
        self.assertIsInstance(model, hgc.DynamicModel)
        self.assertEqual(model.input_names, ["x"])
        rng = np.random.default_rng(4)
        for batch in (4, 7, 4, 7, 1):
            x = rng.standard_normal((batch, 8)).astype(np.float32)
            np.testing.assert_allclose(model(x), mlp_reference(x, self.w, self.b),
                                       rtol=1e-5, atol=1e-5)
        self.assertEqual(model.compiles, 3)
        self.assertEqual(model.cached_shapes, 3)
        with self.assertRaisesRegex(hgc.Error, "has 0 dimensions"):
            model(np.float32(1))
        # Bound at compile time: an ordinary model.
        bound = hgc.compile(self.onnx_model, dims={"batch": 4})
        self.assertIsInstance(bound, hgc.Model)
        self.check(bound)

    def test_lift_patterns_false_imports_the_chain_as_written(self):
        # At -10 the chain's 1 + erf(-10 / sqrt(2)) is 0 in f32, so it gives
        # -0; the lifted gelu op computes the tiny true value (-7.6e-23).
        model = onnx_erf_gelu()
        x = np.array([-10, 1, 2], np.float32)
        lifted = hgc.compile(model)(x)
        literal = hgc.compile(model, lift_patterns=False)(x)
        self.assertLess(lifted[0], 0)
        self.assertEqual(literal[0], 0)
        self.assertEqual(np.signbit(literal[0]), True)
        np.testing.assert_allclose(literal[1:], lifted[1:], rtol=1e-6)
        np.testing.assert_allclose(literal[1:], [0.8413447, 1.9544997],
                                   rtol=1e-6)
        self.assertEqual(
            hgc.compile(model, lift_patterns=True)(x)[0], lifted[0])

    def test_unsupported_op_is_an_error(self):
        self.onnx_model.graph.node[2].op_type = "NoSuchOp"
        with self.assertRaisesRegex(hgc.Error, "NoSuchOp"):
            hgc.compile(self.onnx_model)


if __name__ == "__main__":
    unittest.main()
