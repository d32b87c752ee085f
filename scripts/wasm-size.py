#!/usr/bin/env python3
"""wasm-size.py <names-build.wasm> [rows] — what the wasm package's bytes are.

Reads twiggy's per-item sizes (`twiggy top -f json`; `make -C bindings-wasm
size-report` installs twiggy, makes the names build and runs this) and prints a Markdown table of code
by crate::module (Rust symbol hashes dropped, generic instances folded into
the module they are defined in), data segments, and the rest, for the size
steps in BENCHMARKS.md ("Package size"). The names build (WASM_KEEP_NAMES=1)
is the shipped build with its "name" section kept: the same code and data, so
every row but "names" is what ships.
"""
import collections
import json
import os
import re
import subprocess
import sys

HASH = re.compile(r"\[[0-9a-f]{16}\]")


def module_of(name: str) -> str:
    """`<retrycore::policy::PolicyConfig>::from_value_in` -> `retrycore::policy`."""
    n = HASH.sub("", name)
    if n.endswith(" shim") or n.startswith(("__wbg", "__wbindgen", "wasm_bindgen")):
        return "wasm-bindgen shims (work of the exports inlined)"
    # The defining path of an impl method is inside the first <...>: take the type's path.
    n = re.sub(r"^<+(?:&mut |&)?", "<", n).lstrip("<")
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)", n)
    if not m:
        return "(other)"
    parts = m.group(1).split("::")
    if len(parts) == 1:
        if parts[0] in ("str", "f64", "f32", "u8", "u16", "u32", "u64", "i64", "usize", "char", "bool"):
            return "core (methods of primitives)"
        if re.match(r"^[a-z]+[A-Z_]", parts[0]) or parts[0] in ("lint", "alerts", "info"):
            return "exports (work inlined)"
        return parts[0]
    if parts[0] in ("core", "alloc", "std"):
        return "::".join(parts[:2])
    # A type name (capitalised) ends the module path; keep crate::module.
    mod = [parts[0]] + [p for p in parts[1:] if p[:1].islower()][:1]
    return "::".join(mod)


def fmt(v: int) -> str:
    return f"{v:,}".replace(",", " ")


def main() -> None:
    wasm = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    twiggy = os.environ.get("TWIGGY", "twiggy")
    items = json.loads(subprocess.check_output([twiggy, "top", "-n", "1000000", "-f", "json", wasm]))
    total = os.path.getsize(wasm)
    kinds = collections.Counter()
    code = collections.Counter()
    for it in items:
        name, size = it["name"], it["shallow_size"]
        if name.startswith("data segment"):
            kinds["data"] += size
        elif name.startswith('"function names"') or name.startswith('"local names"') or name.startswith("custom section"):
            kinds["names (not shipped)"] += size
        elif name.startswith(("type[", "import ", "export ", "table[", "elem[", "global[", "memory[", "wasm magic", "header")) or name.endswith(" section headers"):
            kinds["types, imports, exports, tables"] += size
        else:
            kinds["code"] += size
            code[module_of(name)] += size
    shipped = total - kinds["names (not shipped)"]
    print(f"{wasm}: {total} B with names, {shipped} B without\n")
    print("| part | bytes |\n| --- | ---: |")
    for k, v in kinds.most_common():
        print(f"| {k} | {fmt(v)} |")
    print(f"\n| code by module (top {rows}) | bytes |\n| --- | ---: |")
    for k, v in code.most_common(rows):
        print(f"| `{k}` | {fmt(v)} |")
    rest = sum(code.values()) - sum(v for _, v in code.most_common(rows))
    print(f"| the other {max(len(code) - rows, 0)} modules | {fmt(rest)} |")


if __name__ == "__main__":
    main()
