#!/usr/bin/env python3
"""make parity: the differential test across runtimes.

Generates random cases in batches (core/tests/parity.rs: the Rust core
answers them, and the Rust vector runner must agree), then runs every
batch through the other runtimes' ordinary vector runners with
RETRYCORE_VECTORS pointing at it: Python (the installed wheel), Node (napi)
and Node (wasm). Every decision, delay (exact nanoseconds), state, code and
fingerprint must agree. Prints the number of cases and disagreements per
runtime; a disagreement is shrunk (a step sequence is cut after its first
failing step) and written to target/parity/reproducers/ as a vector file
ready for tests/vectors/.

Usage: scripts/parity.py [--cases N] [--batch N] [--seed S] [--runtimes python,node,wasm]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "target" / "parity"


def run(cmd, env=None, cwd=ROOT):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def generate(batch_dir, cases, seed):
    code, out = run(["cargo", "test", "-q", "-p", "retrycore", "--test", "parity", "--", "--nocapture"],
                    {"PARITY_OUT": str(batch_dir), "PARITY_CASES": str(cases), "PARITY_SEED": str(seed)})
    if code != 0:
        print(out[-4000:])
        sys.exit("parity: the Rust core and the Rust runner disagree (see above)")
    m = re.search(r"parity: (\d+) cases", out)
    return int(m.group(1)) if m else 0


def python_runner():
    py = ROOT / "bindings-python" / ".venv" / "test" / "bin" / "python"
    if not py.exists():
        return None
    return lambda d: run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/python/test_vectors.py"],
                         {"RETRYCORE_VECTORS": str(d)})


def node_runner(impl):
    def go(d):
        return run(["node", "--test", "tests/js/vectors.test.cjs"], {"RETRYCORE_VECTORS": str(d), "RETRYCORE_IMPL": impl})
    return go


NAME = re.compile(r"parity (\w+) (\d+)")
STEP = re.compile(r"step (\d+)")


def failures(output):
    """Names of failing cases and the first failing step each message names."""
    found = {}
    for line in output.splitlines():
        m = NAME.search(line)
        if m and ("FAILED" in line or ":" in line and ("got" in line or "want" in line or "Error" in line or "expected" in line)):
            name = m.group(0)
            s = STEP.search(line[m.end():])
            found.setdefault(name, int(s.group(1)) if s else None)
    return found


def reproducer(batch_dir, name, step):
    for f in batch_dir.glob("*.json"):
        doc = json.loads(f.read_text())
        for c in doc["cases"]:
            if c.get("name") == name:
                c = dict(c)
                if step is not None and "steps" in c:
                    c["steps"] = c["steps"][: step + 1]
                return {"_comment": f"A parity disagreement, shrunk: {name}.", "kind": doc["kind"], "cases": [c]}
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("PARITY_SEED", "1")))
    ap.add_argument("--runtimes", default="python,node,wasm")
    a = ap.parse_args()
    runners = {}
    for r in a.runtimes.split(","):
        if r == "python":
            runners[r] = python_runner()
        elif r == "node":
            runners[r] = node_runner("node")
        elif r == "wasm":
            has_wasm = (ROOT / "bindings-wasm" / "dist" / "node").exists()
            runners[r] = node_runner("wasm") if has_wasm else None
    missing = [r for r, f in runners.items() if f is None]
    if missing:
        sys.exit(f"parity: build these runtimes first: {', '.join(missing)} (make test-python / test-node / test-wasm)")
    OUT.mkdir(parents=True, exist_ok=True)
    repro = OUT / "reproducers"
    total, disagreements = 0, {r: 0 for r in runners}
    started = time.time()
    batch = 0
    while total < a.cases:
        n = min(a.batch, a.cases - total)
        d = OUT / f"batch-{a.seed}-{batch}"
        got = generate(d, n, a.seed * 1_000_003 + batch)
        for r, f in runners.items():
            code, out = f(d)
            if code != 0:
                fails = failures(out)
                if not fails:
                    print(out[-3000:])
                    sys.exit(f"parity: the {r} runner failed without naming a case")
                disagreements[r] += len(fails)
                repro.mkdir(exist_ok=True)
                for name, step in fails.items():
                    doc = reproducer(d, name, step)
                    if doc:
                        p = repro / f"{r}-{name.replace(' ', '-')}.json"
                        p.write_text(json.dumps(doc, indent=1) + "\n")
                        print(f"parity: {r} disagrees on {name}; reproducer: {p.relative_to(ROOT)}")
        total += got
        batch += 1
        for x in d.glob("*.json"):
            x.unlink()
        d.rmdir()
    took = time.time() - started
    print(f"parity: {total} cases × {len(runners) + 1} runtimes (rust, {', '.join(runners)}) in {took:.0f}s; "
          + ", ".join(f"{r}: {n} disagreements" for r, n in disagreements.items()))
    if any(disagreements.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
