"""hgc_lit_test: one sh_test per `.graph` file, running its `// RUN:` lines."""

_TOOLS = ["//driver:hgc", "@llvm//:FileCheck", "@llvm//:not"]

def hgc_lit_test(src, data = []):
    native.sh_test(
        name = src + ".test",
        size = "small",
        srcs = ["//tools:run_lit.sh"],
        args = ["$(location %s)" % src] + ["$(location %s)" % t for t in _TOOLS],
        data = [src] + _TOOLS + data,
    )

def hgc_lit_tests(srcs, data = []):
    for src in srcs:
        hgc_lit_test(src, data)
