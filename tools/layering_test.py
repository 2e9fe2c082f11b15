#!/usr/bin/python3
"""The layering check (docs/architecture.md, "Layers"): no library depends
on a package above it.

Usage: layering_test.py PACKAGE/BUILD.bazel ...  (the BUILD files of the
packages to check, as the test's data: tools/BUILD.bazel lists them). Each BUILD file is evaluated with stand-ins for
the rules it calls, so that every target's kind, testonly and labels
(deps, data, srcs, hdrs) are known; a label into another package is an
edge between packages. Tests and testonly targets may reach up (a test of
ir/ parses .graph text with frontend/); every other target may depend only
on packages of a lower layer; nothing in the stack may depend on the tools
beside it (BESIDE).
"""
import os
import sys

# Lowest first. A package may depend on packages in earlier entries only;
# packages in one entry are siblings and do not depend on each other.
LAYERS = [
    ["support", "third_party", "third_party/remote_coverage_tools"],
    ["ir"],
    ["frontend", "frontend/onnx", "tensor_util", "analysis"],
    ["microkernels", "codegen/llvm", "runtime", "runtime/portable"],
    ["passes", "codegen"],
    ["hgc"],
    # Beside the stack: the tools that judge and measure it.
    ["reference"],
    ["baseline"],
    ["bench"],
    ["driver", "python", "fuzz", "examples", "testdata", "testdata/bad_input",
     "tools", ""],
]
# reference/ and baseline/ are beside the stack, not under it: nothing in
# the stack depends on them. (fold-constants and codegen's fallback steps
# run the portable kernels of runtime/portable/, which the reference uses
# too.)
BESIDE = {"reference", "baseline"}
# reference/ is a tool, but it sits on the stack's lower layers.
REFERENCE_MAY_USE = {"support", "third_party", "ir", "frontend", "tensor_util",
                     "runtime/portable"}

RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


class Anything:
    """Stands for a value loaded from a .bzl file (e.g. LLVM_COPTS)."""

    def __add__(self, other):
        return other

    def __radd__(self, other):
        return other

    def __call__(self, *args, **kwargs):
        return None

    def __iter__(self):
        return iter(())


def evaluate(build_file, package):
    targets = []

    def rule(kind):
        def make(name=None, **attrs):
            targets.append((kind, name, attrs))
        return make

    def load(_bzl, *names, **aliases):
        for n in list(names) + list(aliases):
            env[n] = rule(n) if n.endswith("_tests") or n.endswith("_test") else Anything()

    def select(branches, **_):
        out = []
        for v in branches.values():
            out += list(v)
        return out

    env = {
        "load": load, "select": select, "glob": lambda *a, **k: [],
        "package": lambda **k: None, "exports_files": lambda *a, **k: None,
        "licenses": lambda *a, **k: None,
    }
    for kind in ["cc_library", "cc_binary", "cc_test", "sh_test", "sh_binary",
                 "py_test", "py_binary", "filegroup", "config_setting",
                 "genrule", "genquery", "test_suite", "cc_import"]:
        env[kind] = rule(kind)
    with open(build_file, encoding="utf-8") as f:
        exec(compile(f.read(), build_file, "exec"), env)
    return targets


def label_package(label, package):
    if label.startswith("@"):
        return None
    if label.startswith("//"):
        return label[2:].split(":")[0]
    if label.startswith("$(location "):
        return label_package(label[len("$(location "):-1], package)
    return package


def check(build_files):
    errors = []
    for build_file in build_files:
        package = os.path.dirname(os.path.normpath(build_file))
        if package == ".":
            package = ""
        if package not in RANK:
            errors.append("%s: package //%s is in no layer (tools/layering_test.py)"
                          % (build_file, package))
            continue
        for kind, name, attrs in evaluate(build_file, package):
            if kind.endswith("_test") or kind.endswith("_tests") or attrs.get("testonly"):
                continue
            labels = []
            for attr in ("deps", "data", "srcs", "hdrs", "implementation_deps"):
                v = attrs.get(attr) or []
                labels += [x for x in v if isinstance(x, str)]
            for label in labels:
                dep = label_package(label, package)
                if dep is None or dep == package:
                    continue
                if dep not in RANK:
                    errors.append("//%s:%s -> %s: package //%s is in no layer"
                                  % (package, name, label, dep))
                    continue
                if package == "reference":
                    ok = dep in REFERENCE_MAY_USE
                elif dep in BESIDE and RANK[package] < RANK["reference"]:
                    ok = False
                else:
                    ok = RANK[dep] < RANK[package]
                if not ok:
                    errors.append("//%s:%s -> %s: //%s may not depend on //%s"
                                  % (package, name, label, package, dep))
    return errors


def main():
    build_files = sys.argv[1:]
    if not build_files:
        print("usage: layering_test.py BUILD.bazel ...")
        return 2
    errors = check(build_files)
    for e in errors:
        print("layering: " + e)
    if errors:
        print("layering: %d upward dependencies (docs/architecture.md, Layers)" % len(errors))
        return 1
    print("layering: %d packages, no upward dependency" % len(build_files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
