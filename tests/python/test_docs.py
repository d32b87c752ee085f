"""The native module's docs are the docstrings of `_native.pyi`.

`bindings-python/build.rs` reads the stub's docstrings and attaches each to
the native item it declares, so `help()` and IDEs (which read the stub) show
one text. These tests fail when an item's `__doc__` differs from its
docstring, or when a public item has none.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import retrycore._native as native

STUB = Path(__file__).resolve().parents[2] / "bindings-python" / "python" / "retrycore" / "_native.pyi"


def stub_docs() -> Dict[str, Optional[str]]:
    """Every class and def of the stub by qualified name, with its docstring (None: none)."""
    docs: Dict[str, Optional[str]] = {}

    def walk(body: List[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                name = prefix + node.name
                # An overloaded name keeps the docstring one of its declarations has.
                docs[name] = docs.get(name) or ast.get_docstring(node)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, name + ".")

    walk(ast.parse(STUB.read_text(encoding="utf-8")).body, "")
    return docs


STUB_DOCS = stub_docs()


def public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


PUBLIC = sorted(n for n in STUB_DOCS if public(n))


def runtime_items() -> List[str]:
    """Every public class, function, method and property of the built module."""
    names = []
    for name in native.__all__:
        obj = getattr(native, name)
        if not public(name) or not callable(obj):
            continue
        names.append(name)
        if isinstance(obj, type):
            names.extend(f"{name}.{member}" for member in vars(obj) if public(member))
    return sorted(names)


def native_doc(name: str) -> str:
    obj = native
    for part in name.split("."):
        obj = getattr(obj, part)
    doc = obj.__doc__ or ""
    # pyo3 writes `name(signature)\n--\n\n` before the text; CPython shows only the text.
    return doc.split("\n--\n\n", 1)[-1]


def test_stub_declares_the_native_items() -> None:
    assert len(PUBLIC) > 150
    assert sorted(runtime_items()) == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_item_has_a_docstring(name: str) -> None:
    assert STUB_DOCS[name], f"{name} has no docstring in _native.pyi"


@pytest.mark.parametrize("name", PUBLIC)
def test_doc_is_the_stub_docstring(name: str) -> None:
    assert native_doc(name) == STUB_DOCS[name]


def test_multi_line_docstrings_keep_their_lines() -> None:
    # The stub indents a long docstring's lines; Python's cleandoc rules take the indentation off.
    doc = native_doc("Policy.delay")
    assert doc.startswith("The delay in seconds before retry `retry` (≥ 1) for the draw `r` in [0, 1].\n\nA delay")
    assert doc.endswith("\nretry (`invalid_combination`): use `replay_delays`.")
    assert native_doc("derive_key") == "Joins key parts with `:` (business id, operation, version)."


def test_help_shows_the_docstring() -> None:
    import pydoc

    text = pydoc.render_doc(native.Policy.delay, renderer=pydoc.plaintext)
    assert "delay(self, /, retry, r, prev=None)" in text
    assert "`polly` profile's exponential backoff with jitter is refused after the first" in text
