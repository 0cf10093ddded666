#!/usr/bin/python3
"""Generates the ONNX models of fallback/model_dynamic_test.go (onnx 1.12):

dyn_symbolic.onnx  x[N,4], y[N,4] (one symbol N), k[] int64, w[4,3] an
                   initializer: sum = Relu(x + y)  [N,4];
                   proj = MatMul(x, w)  [N,3];  seq = Range(0, k, 1) [?]:
                   a shape only the data (k's value) fixes.
                   w is written below so that the test computes the
                   reference itself.
dyn_loop.onnx      a Loop with M = 2^62 and a condition that stays true:
                   it never ends on its own (the execution timeout ends it).
unsupported.onnx   a node of an op no converter knows (NoSuchOp).

Run: python3 gen_dynamic_onnx.py (in this directory)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

W = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5.5) / 4.0


def symbolic():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    s = helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["N", 4])
    p = helper.make_tensor_value_info("proj", TensorProto.FLOAT, ["N", 3])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [])
    seq = helper.make_tensor_value_info("seq", TensorProto.INT64, [None])
    zero = numpy_helper.from_array(np.array(0, dtype=np.int64), "zero")
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "one")
    w = numpy_helper.from_array(W, "w")
    nodes = [
        helper.make_node("Add", ["x", "y"], ["xy"]),
        helper.make_node("Relu", ["xy"], ["sum"]),
        helper.make_node("MatMul", ["x", "w"], ["proj"]),
        helper.make_node("Range", ["zero", "k", "one"], ["seq"]),
    ]
    g = helper.make_graph(nodes, "dyn_symbolic", [x, y, k], [s, p, seq], [zero, one, w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, "dyn_symbolic.onnx")


def loop():
    # body(iter, cond, acc) -> (cond, acc + 1)
    it = helper.make_tensor_value_info("i", TensorProto.INT64, [])
    ci = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    ai = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])
    co = helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])
    ao = helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [1])
    one = numpy_helper.from_array(np.array([1], dtype=np.float32), "one")
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Add", ["a", "one"], ["a_out"])],
        "body", [it, ci, ai], [co, ao], [one])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])
    m_ = numpy_helper.from_array(np.array(2**62, dtype=np.int64), "M")
    t = numpy_helper.from_array(np.array(True), "T")
    g = helper.make_graph([helper.make_node("Loop", ["M", "T", "x"], ["out"], body=body)],
                          "dyn_loop", [x], [out], [m_, t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, "dyn_loop.onnx")


def unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")], "unsupported", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, "unsupported.onnx")


if __name__ == "__main__":
    symbolic()
    loop()
    unsupported()
