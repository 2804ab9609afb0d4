#!/usr/bin/env python3
"""The include graph between trialshim's top-level folders, and its layers.

Prints one line per edge, "from -> to  (N includes)", counting the
`#include "trialshim/<folder>/..."` lines of each folder's .h and .cc files
(the folder's own headers and its tests' are left out: tests/<lib>/ may
reach anything). With --check it also exits 1 when an include points up
the layers below, naming the file and line, so that a library never needs
one above it: the search engine (search/) sits below the app entry (app/),
which an app's -m needs, and the job runner (tuning/) above it, so a
trainer links no sweep, job spec or report. Usage:

  tools/include_graph.py [--check] [--dot] [ROOT]
"""
import os
import re
import sys

# Bottom to top. A folder may include its own headers and those of any
# lower layer; folders on one layer do not include each other.
LAYERS = [
    ["base"],
    ["config"],
    ["hypertune", "translate"],
    ["search"],
    ["app", "shim"],
    ["tuning", "trainer"],
    ["cli", "examples", "bench"],
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"trialshim/([a-z_]+)/')


def layer_of(folder):
    for i, layer in enumerate(LAYERS):
        if folder in layer:
            return i
    return None


def scan(root):
    """{(from, to): [(path, line), ...]} over the layered folders."""
    edges = {}
    for folder in sorted(f for layer in LAYERS for f in layer):
        top = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    for n, text in enumerate(f, 1):
                        m = INCLUDE.match(text)
                        if m and m.group(1) != folder:
                            edges.setdefault((folder, m.group(1)), []).append(
                                (os.path.relpath(path, root), n))
    return edges


def main(argv):
    check = "--check" in argv
    dot = "--dot" in argv
    rest = [a for a in argv if not a.startswith("--")]
    root = rest[0] if rest else os.path.join(os.path.dirname(__file__), "..")
    edges = scan(root)
    if dot:
        print("digraph includes {")
        for (a, b), where in sorted(edges.items()):
            print(f'  "{a}" -> "{b}" [label={len(where)}];')
        print("}")
    else:
        for (a, b), where in sorted(edges.items()):
            print(f"{a} -> {b}  ({len(where)} includes)")
    bad = []
    for (a, b), where in sorted(edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if lb is None:
            bad.append(f"{where[0][0]}:{where[0][1]}: includes trialshim/{b}/, "
                       f"a folder tools/include_graph.py does not layer "
                       f"(add it to LAYERS)")
        elif lb >= la:
            for path, line in where:
                bad.append(f"{path}:{line}: {a}/ (layer {la}) includes "
                           f"trialshim/{b}/ (layer {lb}): an include may only "
                           f"point down the layers")
    if check:
        for b in bad:
            print(b, file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
