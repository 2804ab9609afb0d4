#!/usr/bin/env python3
"""Compares `trialshim compose` with real Hydra 1.3.2 on Hydra's own material.

Not a test: the figures in the issue notes come from it. Hydra runs from the
interpreter that runs this script (the anchors environment, `make anchors`);
the material, Hydra's examples/ and tests/ (which its wheel does not ship),
comes from a checkout of its repository at tag v1.3.2:

    git clone -b v1.3.2 https://github.com/facebookresearch/hydra /tmp/hydra132
    HYDRA_SRC=/tmp/hydra132 build/anchors/bin/python tests/data/hydra_app/scan.py \\
        build/bin/trialshim

1. apps: every @hydra.main app with a config directory in Hydra's examples/
   and tests/test_apps/, run with `--cfg job --resolve` and `--cfg hydra`.
2. overrides: every primary config of Hydra's test config trees composed
   through Hydra's compose API with each single group override (g=o, +g=o,
   ~g, ++g=o), against `compose --cfg job`.
Prints each difference and a count per kind: same, both refuse, differ.
"""
import difflib, glob, json, os, re, subprocess, sys, tempfile

H = os.environ["HYDRA_SRC"]
SHIM = os.path.abspath(sys.argv[1])
# Hydra's test apps import `tests.…` from the checkout; the checkout's own
# `hydra` (without its generated parser) must not shadow the installed one.
TESTS_ONLY = tempfile.mkdtemp()
os.symlink(os.path.join(H, "tests"), os.path.join(TESTS_ONLY, "tests"))


def show(tag, want, got, herr, gerr):
    print("=====", tag)
    if want is None or got is None:
        print("hydra:", (herr or want or "")[:300], "\nours:", (gerr or got or "")[:300])
    else:
        print("".join(list(difflib.unified_diff(want.splitlines(1), got.splitlines(1)))[:30]))


def tally(counts, tag, want, got, herr=None, gerr=None):
    if want is None and got is None:
        counts["both refuse"] += 1
    elif want == got:
        counts["same"] += 1
    else:
        counts["differ"] += 1
        show(tag, want, got, herr, gerr)


def apps(mode):
    counts = {"same": 0, "both refuse": 0, "differ": 0}
    files = glob.glob(H + "/examples/**/*.py", recursive=True) + \
        glob.glob(H + "/tests/test_apps/**/*.py", recursive=True)
    for f in sorted(files):
        src = open(f).read()
        m = re.search(r'@hydra\.main\(([^)]*)\)', src, re.S)
        if not m or "ConfigStore" in src or "cs.store" in src:
            continue  # no decorator, or structured configs (not file trees)
        cp = re.search(r'config_path\s*=\s*"([^"]*)"', m.group(1))
        cn = re.search(r'config_name\s*=\s*"([^"]*)"', m.group(1))
        d = os.path.dirname(f)
        if not cp or not cn or not os.path.isdir(os.path.join(d, cp.group(1))):
            continue
        args = ["--cfg", mode] + (["--resolve"] if mode == "job" else [])
        p = subprocess.run([sys.executable, f] + args, cwd=d, capture_output=True,
                           text=True, env=dict(os.environ, PYTHONPATH=TESTS_ONLY), timeout=60)
        q = subprocess.run([SHIM, "compose", "--config-path", os.path.join(d, cp.group(1)),
                            "--config-name", cn.group(1), "--job-name",
                            os.path.splitext(os.path.basename(f))[0]] + args,
                           cwd=d, capture_output=True, text=True)
        tally(counts, os.path.relpath(f, H), p.stdout if p.returncode == 0 else None,
              q.stdout if q.returncode == 0 else None, p.stderr[-300:], q.stderr)
    return counts


def overrides():
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf
    counts = {"same": 0, "both refuse": 0, "differ": 0}
    roots = set()
    for pat in ["hydra/test_utils/configs", "tests/**/conf", "tests/**/configs",
                "tests/defaults_list/data", "examples/**/conf"]:
        roots.update(d for d in glob.glob(os.path.join(H, pat), recursive=True)
                     if os.path.isdir(d))
    for root in sorted(roots):
        if os.path.exists(root + "/hydra/config.yaml"):
            continue  # refused by both, as Hydra 1.2+ refuses it
        groups = {}
        for dp, _, names in os.walk(root):
            rel = os.path.relpath(dp, root)
            opts = sorted(n[:-5] for n in names if n.endswith(".yaml"))
            if rel != "." and not rel.startswith("hydra") and opts:
                groups[rel] = opts
        ovs = [[]] + [[f"{g}={o}"] for g, os_ in groups.items() for o in os_] + \
              [[f"+{g}={o}"] for g, os_ in groups.items() for o in os_] + \
              [[f"~{g}"] for g in groups] + \
              [[f"++{g}={o}"] for g, os_ in groups.items() for o in os_]
        for f in sorted(glob.glob(root + "/*.yaml")):
            name = os.path.basename(f)[:-5]
            for ov in ovs:
                GlobalHydra.instance().clear()
                try:
                    with initialize_config_dir(config_dir=root, version_base="1.3",
                                               job_name="app"):
                        want, herr = OmegaConf.to_yaml(compose(name, overrides=ov)), None
                except BaseException as e:
                    want, herr = None, f"{type(e).__name__}: {e}"
                q = subprocess.run([SHIM, "compose", "--config-path", root, "--config-name",
                                    name, "--cfg", "job"] + ov, capture_output=True, text=True)
                tally(counts, os.path.relpath(f, H) + " " + " ".join(ov), want,
                      q.stdout if q.returncode == 0 else None, herr, q.stderr)
    return counts


if __name__ == "__main__":
    result = {"apps --cfg job --resolve": apps("job"), "apps --cfg hydra": apps("hydra"),
              "single overrides": overrides()}
    print(json.dumps(result, indent=1))
