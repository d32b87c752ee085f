#!/usr/bin/env python3
"""Prints how large the hosts are next to the core, and checks the bounds.

A binding translates; it never decides. Its size next to the core's is how
that shows: lines of the tracked files under

- Python: bindings-python/src and bindings-python/python/retrycore;
- JS: bindings-{js,node,wasm}/{src,lib,js} together;

against core/src, leaving out generated files (``@generated`` in their first
lines), type stubs (``.pyi``, ``.d.ts``), benches, build scripts, and the
``integrations/``, ``stores/``, ``middleware/`` and ``exporters/`` modules
(adapters to other libraries, not the surface).

    scripts/host-lines.py                print the table
    scripts/host-lines.py --check        also fail when a ratio is above its bound
    scripts/host-lines.py --check=js     the same for the named parts only (comma-separated)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUNDS = {"python": 0.20, "js": 0.30}
GROUPS = {
    "core": ["core/src"],
    "python": ["bindings-python/src", "bindings-python/python/retrycore"],
    "js": [f"bindings-{c}/{d}" for c in ("js", "node", "wasm") for d in ("src", "lib", "js")],
}
SOURCE = (".rs", ".py", ".ts", ".mjs", ".cjs", ".js")
SKIP_PARTS = {"integrations", "stores", "middleware", "exporters", "bench", "benches"}


def tracked(prefix: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--", prefix], cwd=ROOT, check=True, capture_output=True, text=True)
    return [ROOT / p for p in out.stdout.split()]


def counted(path: Path) -> bool:
    name = path.name
    if not name.endswith(SOURCE) or name.endswith((".d.ts", ".pyi")) or name == "build.rs":
        return False
    if SKIP_PARTS & set(path.relative_to(ROOT).parts):
        return False
    head = path.read_text(encoding="utf-8", errors="replace").splitlines()[:5]
    return not any("@generated" in line for line in head)


def lines(group: str) -> tuple[int, int]:
    files = [p for prefix in GROUPS[group] for p in tracked(prefix) if counted(p)]
    return sum(len(p.read_text(encoding="utf-8", errors="replace").splitlines()) for p in files), len(files)


def main() -> int:
    core, core_files = lines("core")
    print(f"{'part':<8} {'files':>5} {'lines':>7} {'of core':>8} {'bound':>6}")
    print(f"{'core':<8} {core_files:>5} {core:>7}")
    failed = []
    for group, bound in BOUNDS.items():
        n, files = lines(group)
        ratio = n / core
        print(f"{group:<8} {files:>5} {n:>7} {ratio:>7.1%} {bound:>6.0%}")
        if ratio > bound:
            failed.append(f"{group} is {ratio:.1%} of the core, above its bound of {bound:.0%}")
    checked = set(BOUNDS)
    for a in sys.argv[1:]:
        if a.startswith("--check="):
            checked = set(a.split("=", 1)[1].split(","))
            unknown = checked - set(BOUNDS)
            if unknown:
                print(f"host-lines: unknown part {sorted(unknown)}", file=sys.stderr)
                return 2
    failed = [f for f in failed if f.split(" ", 1)[0] in checked]
    if any(a == "--check" or a.startswith("--check=") for a in sys.argv[1:]) and failed:
        for f in failed:
            print(f"host-lines: {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
