#!/usr/bin/python3
"""ONNX's own node tests (Debian's libonnx-testdata: a model, its inputs
and the outputs ONNX's reference gives) through `hgc MODEL.onnx --run`.
Each test listed below must import, compile, run and match ONNX's outputs
to 1e-4; the list is what hgc supports of that suite today (others use
ops, dtypes or int64 inputs hgc does not take: docs/onnx.md).

Usage: conformance_test.py HGC   (run with /usr/bin/python3, which has
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

# Without the "test_" prefix.
PASSING = """
    abs add add_bcast add_uint8 cast_FLOAT16_to_FLOAT cast_FLOAT_to_BFLOAT16
    cast_FLOAT_to_FLOAT16 castlike_FLOAT16_to_FLOAT_expanded
    castlike_FLOAT_to_FLOAT16_expanded constant div div_bcast div_example
    dropout_default dropout_default_old dropout_default_ratio
    dropout_random_old equal equal_bcast erf exp exp_example flatten_axis0
    flatten_axis1 flatten_axis2 flatten_axis3 flatten_default_axis
    flatten_negative_axis1 flatten_negative_axis2 flatten_negative_axis3
    flatten_negative_axis4 gemm_all_attributes gemm_alpha gemm_beta
    gemm_default_matrix_bias gemm_default_no_bias gemm_default_scalar_bias
    gemm_default_single_elem_vector_bias gemm_default_vector_bias
    gemm_default_zero_bias gemm_transposeA gemm_transposeB greater
    greater_bcast greater_equal greater_equal_bcast identity
    layer_normalization_2d_axis0_expanded
    layer_normalization_2d_axis1_expanded
    layer_normalization_2d_axis_negative_1_expanded
    layer_normalization_2d_axis_negative_2_expanded
    layer_normalization_3d_axis0_epsilon_expanded
    layer_normalization_3d_axis1_epsilon_expanded
    layer_normalization_3d_axis2_epsilon_expanded
    layer_normalization_3d_axis_negative_1_epsilon_expanded
    layer_normalization_3d_axis_negative_2_epsilon_expanded
    layer_normalization_3d_axis_negative_3_epsilon_expanded
    layer_normalization_4d_axis0_expanded
    layer_normalization_4d_axis1_expanded
    layer_normalization_4d_axis2_expanded
    layer_normalization_4d_axis3_expanded
    layer_normalization_4d_axis_negative_1_expanded
    layer_normalization_4d_axis_negative_2_expanded
    layer_normalization_4d_axis_negative_3_expanded
    layer_normalization_4d_axis_negative_4_expanded
    layer_normalization_default_axis_expanded less less_bcast less_equal
    less_equal_bcast log log_example logsoftmax_axis_0_expanded
    logsoftmax_axis_1_expanded logsoftmax_axis_2_expanded
    logsoftmax_default_axis_expanded logsoftmax_example_1_expanded
    logsoftmax_large_number_expanded logsoftmax_negative_axis_expanded
    matmul_2d matmul_3d matmul_4d max_example max_float16 max_float32
    max_int32 max_int8 max_one_input max_two_inputs max_uint8 min_example
    min_float16 min_float32 min_int32 min_int8 min_one_input min_two_inputs
    min_uint8 mul mul_bcast mul_example mul_uint8 mvn_expanded neg
    neg_example reciprocal reciprocal_example
    reduce_max_default_axes_keepdim_example
    reduce_max_default_axes_keepdims_random
    reduce_max_do_not_keepdims_example reduce_max_do_not_keepdims_random
    reduce_max_keepdims_example reduce_max_keepdims_random
    reduce_max_negative_axes_keepdims_example
    reduce_max_negative_axes_keepdims_random
    reduce_mean_default_axes_keepdims_example
    reduce_mean_default_axes_keepdims_random
    reduce_mean_do_not_keepdims_example reduce_mean_do_not_keepdims_random
    reduce_mean_keepdims_example reduce_mean_keepdims_random
    reduce_mean_negative_axes_keepdims_example
    reduce_mean_negative_axes_keepdims_random relu sigmoid sigmoid_example
    softmax_axis_0 softmax_axis_0_expanded softmax_axis_1
    softmax_axis_1_expanded softmax_axis_2 softmax_axis_2_expanded
    softmax_default_axis softmax_default_axis_expanded softmax_example
    softmax_example_expanded softmax_large_number
    softmax_large_number_expanded softmax_negative_axis
    softmax_negative_axis_expanded sqrt sqrt_example sub sub_bcast
    sub_example sub_uint8 tanh tanh_example transpose_all_permutations_0
    transpose_all_permutations_1 transpose_all_permutations_2
    transpose_all_permutations_3 transpose_all_permutations_4
    transpose_all_permutations_5 transpose_default unsqueeze_axis_3
    where_example
""".split()


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def check(hgc, name, scratch):
    folder = os.path.join(NODE_TESTS, "test_" + name)
    model_path = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "test_data_set_0")
    model = onnx.load(model_path)
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
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    hgc = os.path.abspath(sys.argv[1])
    if not os.path.isdir(NODE_TESTS):
        print("%s is missing: install libonnx-testdata (./configure)" % NODE_TESTS)
        return 1
    scratch = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    failures = 0
    for name in PASSING:
        problem = check(hgc, name, scratch)
        if problem:
            failures += 1
            print("FAIL %s: %s" % (name, problem))
    print("%d of ONNX's node tests run, %d failures" % (len(PASSING), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
