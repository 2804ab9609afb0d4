#!/usr/bin/env python3
"""Writes the seed corpora in tests/fuzz/corpus/<target>/ from the
conformance cases, the test data and the unit tests' own inputs.

Run from anywhere: /usr/bin/python3 tests/fuzz/make_seeds.py. The corpora
are committed; rerun this when the conformance cases or tests grow. Seeds
are named by a hash of their content, so reruns are idempotent."""
import ast
import glob
import hashlib
import json
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
DATA = os.path.join(ROOT, "tests", "data")


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def cxx_strings(path, pattern):
    """C++ string literals in lines of `path` matching `pattern` (simple
    escapes only, which is all the tests use)."""
    out = []
    for line in read(path).splitlines():
        if not re.search(pattern, line):
            continue
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
            try:
                out.append(ast.literal_eval('"' + lit + '"'))
            except (ValueError, SyntaxError):
                pass
    return out


# Overrides: Hydra's own grammar cases, the conformance overrides, and what
# the shim's conformance arguments look like once translated.
hydra = json.load(open(os.path.join(DATA, "override_grammar", "hydra_cases.json")))
cases = json.load(open(os.path.join(DATA, "conformance", "compose", "cases.json")))
vertex = json.load(open(os.path.join(DATA, "conformance", "vertex_args.json")))
overrides = [c["input"] for c in hydra]
for c in cases:
    overrides += c["overrides"]
for v in vertex:
    for slot in v["expect"]:
        overrides += slot["any_of"]
for o in overrides:
    write("override_parser_fuzz", o)
    write("render_roundtrip_fuzz", o.split("=", 1)[-1])
for v in vertex:
    for a in v["argv"]:
        if "=" in a:
            write("render_roundtrip_fuzz", a.split("=", 1)[1])

# Trial argv: mode byte 0 (syntactic) and 0x1f (every option, config-aware
# with recomposition), items NUL-separated.
for v in vertex:
    for mode in (0, 0x1F):
        write("translate_fuzz", bytes([mode]) + "\0".join(v["argv"]).encode())

# Composition: the conformance trees squeezed into the fixed slots
# config.yaml %% db/mysql.yaml %% db/pg.yaml %% model/base.yaml %% overrides.
SEP = "\n%%\n"
write("compose_fuzz", SEP.join([
    "defaults:\n  - db: mysql\n  - model: base\n  - _self_\nx: ${db.host}\n",
    "host: localhost\nport: 3306\n",
    "host: pg\nport: 5432\n",
    "layers: 2\nwidth: ${.layers}\n",
    "db=pg\nx=1\n+y=[1,2]\n~model"]))
write("compose_fuzz", SEP.join([
    "defaults:\n  - _self_\n  - db@src: mysql\n  - optional model: base\n",
    "# @package _global_\nhost: h\n", "", "", "db@src=pg"]))
write("compose_fuzz", SEP.join(["defaults:\n  - db: mysql\n", "", "", "",
                                "db=../../outside"]))
write("compose_fuzz", SEP.join(["defaults:\n  - db: ../../outside\n"]))
for tree in glob.glob(os.path.join(DATA, "conformance", "compose", "trees", "*")):
    write("compose_fuzz", read(os.path.join(tree, "config.yaml")))
for c in cases:
    tree = os.path.join(DATA, "conformance", "compose", "trees", c["tree"])
    write("compose_fuzz", SEP.join([read(os.path.join(tree, "config.yaml")),
                                    "", "", "", "\n".join(c["overrides"])]))
for f in glob.glob(os.path.join(ROOT, "tests", "config", "data", "compose",
                                "features", "*.yaml")):
    write("compose_fuzz", read(f))

# Interpolation: the unit tests' YAML documents (mode byte 0) and the same
# as key=value lines where they are flat (mode byte 1).
for s in cxx_strings(os.path.join(ROOT, "tests", "config",
                                  "interpolation_test.cc"), r'\$\{|\\\$'):
    if ":" in s:
        write("interpolation_fuzz", b"\0" + s.encode())
        lines = []
        for line in s.splitlines():
            if re.match(r"^[A-Za-z_]\w*: ", line):
                k, v = line.split(": ", 1)
                lines.append(k + "=" + v)
        if lines:
            write("interpolation_fuzz", b"\1" + "\n".join(lines).encode())
for s in ["a=${b}\nb=${a}", "a=${oc.select:b,1}", "a=${oc.create:'{x: 1}'}",
          "a.b=1\nc=${a.b}${a.b}", "a=${nope:1}", "a=${oc.dict.keys:d}\nd.x=1",
          "a=${..x}", "a=${a[0]}", "a=\\${x}"]:
    write("interpolation_fuzz", b"\1" + s.encode())

# CLUSTER_SPEC / TF_CONFIG: both shapes, every role, and broken ones.
def pools(task_type, index):
    return json.dumps({"cluster": {"workerpool0": ["cmle-training-workerpool0-ab-0:2222"],
                                   "workerpool1": ["w-0:2222", "w-1:2222"],
                                   "workerpool2": ["rs-0:2222"]},
                       "environment": "cloud",
                       "task": {"type": task_type, "index": index, "trial": "3"},
                       "job": "{\"python_module\":\"\"}"})
for t, i in [("workerpool0", 0), ("workerpool1", 1), ("workerpool2", 0),
             ("workerpool3", 0)]:
    write("cluster_spec_fuzz", b"\0" + pools(t, i).encode())
tf = json.dumps({"cluster": {"chief": ["[::1]:2222"], "worker": ["w:1", "w:2"],
                             "ps": ["p:3"]}, "task": {"type": "worker", "index": 1}})
write("cluster_spec_fuzz", b"\1" + tf.encode())
write("cluster_spec_fuzz", b"\x0f" + tf.encode())
for s in ["{cluster", "[1]", '{"task":{"type":"workerpool0"}}',
          '{"cluster":{"workerpool0":["h"]},"task":{"type":"workerpool0","index":-1}}',
          '{"cluster":{"workerpool0":["h:99999"]},"task":{"type":"workerpool0","index":0}}']:
    write("cluster_spec_fuzz", b"\0" + s.encode())

# Job specs: the examples and the test jobs.
for f in (glob.glob(os.path.join(ROOT, "examples", "vertex", "*.yaml")) +
          glob.glob(os.path.join(ROOT, "tests", "shim", "data", "jobs", "**",
                                 "*.yaml"), recursive=True)):
    write("job_spec_fuzz", read(f))

# Python's format() and str.format(): format specs as checkpoint names use
# them and their corners, for the int 0 (mode byte 0) and the float 0.25
# (mode byte 8); the checkpoint filenames of the trainer's tests rewritten
# as Lightning rewrites them ("{epoch:03d}" -> "epoch={0[epoch]:03d}") and
# the format engine's own templates (mode byte 1).
for s in ["", "d", "03d", ".2f", ".4f", ".1e", ".1%", "g", ".3", "+06d",
          "*^5", ",", "010,", "012,.2f", "_x", "#X", "#010x", "c", "=5c",
          "n", "z.1f", "#.0e", "#g", "<05", "0=8.2", "\u20ac^7", ".17",
          "99999999999999", ".9999999999f", "4096", ",.4096f"]:
    write("python_format_fuzz", b"\0" + s.encode())
    write("python_format_fuzz", b"\x08" + s.encode())


def lightning_rewrite(filename):
    groups = sorted(re.findall(r"(\{.*?)[:\}]", filename), key=len,
                    reverse=True)
    for group in groups:
        name = group[1:]
        filename = filename.replace(group, name + "={" + name)
        filename = filename.replace(group, "{0[" + name + "]")
    return filename


for f in cxx_strings(os.path.join(ROOT, "tests", "trainer",
                                  "callbacks_test.cc"), r'"\{'):
    if "{" in f:
        write("python_format_fuzz", b"\1" + lightning_rewrite(f).encode())
for t in cxx_strings(os.path.join(ROOT, "tests", "base",
                                  "python_format_test.cc"), r'"\{'):
    write("python_format_fuzz", b"\1" + t.encode())
