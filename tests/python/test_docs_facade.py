"""The facade's public docs are written once, in its stubs (`retrycore/__init__.pyi`,
`_errors.pyi`); `scripts/gen-py-docs.py` copies them into the `@generated`
`retrycore/_docs.py`, which the package applies at import time. These tests fail when
`_docs.py` drifts from the stubs, and when a public class, function or method of the
facade has a runtime `__doc__` other than its stub's docstring (or none at all)."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import pydoc
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Iterator, Tuple

import retrycore
from retrycore import _docs, _errors, _limiters

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "scripts" / "gen-py-docs.py"
FACADE = {"retrycore": retrycore, "retrycore._errors": _errors, "retrycore._limiters": _limiters}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_py_docs", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stub_docs() -> Dict[str, str]:
    """The stubs' docstrings, read here with `ast` (not through the generator's output)."""
    gen = _generator()
    out: Dict[str, str] = {}
    for module, stub in gen.STUBS.items():
        out.update(gen.docs_of(module, ast.parse((gen.PACKAGE / stub).read_text(encoding="utf-8"))))
    return out


def test_docs_module_is_what_the_generator_writes_from_the_stubs() -> None:
    run = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # The installed package carries the same table.
    assert _docs.DOCS == stub_docs()


def test_the_generator_check_fails_on_a_drifted_docs_module(tmp_path: Path) -> None:
    gen = _generator()
    gen.OUT = tmp_path / "_docs.py"
    gen.OUT.write_text(gen.render().replace("Every failure category.", "Every category."), encoding="utf-8")
    assert gen.main(["gen-py-docs.py", "--check"]) == 1
    gen.OUT.write_text(gen.render(), encoding="utf-8")
    assert gen.main(["gen-py-docs.py", "--check"]) == 0


def facade_objects() -> Iterator[Tuple[str, Any, Any]]:
    """(`module:qualname`, the object as `help()` reads it, the raw object) of every public
    class, function and method the facade defines (re-exports of `_native` are not its)."""
    for name in retrycore.__all__:
        obj = getattr(retrycore, name)
        module = getattr(obj, "__module__", None)
        if module not in FACADE or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"{module}:{name}", obj, obj
        if inspect.isclass(obj):
            for attr, raw in vars(obj).items():
                public = not attr.startswith("_") or attr in ("__call__", "__init__", "__new__")
                if public and isinstance(raw, (staticmethod, classmethod, property)) or (public and inspect.isfunction(raw)):
                    yield f"{module}:{name}.{attr}", inspect.getattr_static(obj, attr), raw


def test_every_public_facade_name_has_its_stub_docstring() -> None:
    docs = stub_docs()
    names = 0
    for key, obj, raw in facade_objects():
        _, _, qualname = key.partition(":")
        if "." not in qualname:  # classes and functions: documented, by the stubs
            names += 1
            assert obj.__doc__, f"{key} has no docstring"
            assert key in docs, f"{key} has no docstring in its stub"
        expected = docs.get(key)
        assert getattr(raw, "__func__", raw).__doc__ == expected, key  # a function, class or property
        if expected is not None:  # a classmethod shows its function's docstring too
            assert raw.__doc__ == expected, key
    assert names >= 25  # the facade's own classes and functions, errors included
    assert retrycore.__doc__ == docs["retrycore:"] and _errors.__doc__ == docs["retrycore._errors:"]


def test_every_stub_docstring_lands_on_its_object() -> None:
    for key, text in stub_docs().items():
        module, _, path = key.partition(":")
        obj: Any = FACADE[module]
        for part in filter(None, path.split(".")):
            obj = inspect.getattr_static(obj, part)
        assert getattr(obj, "__func__", obj).__doc__ == text, key


def test_help_reads_the_stub_docstrings() -> None:
    docs = stub_docs()
    assert inspect.getdoc(retrycore.retry) == inspect.cleandoc(docs["retrycore:retry"])
    assert inspect.getdoc(retrycore.RetryPolicy.from_file) == inspect.cleandoc(docs["retrycore:RetryPolicy.from_file"])
    assert retrycore.RetryPolicy.__doc__ == docs["retrycore:RetryPolicy"]
    assert retrycore.RetryError.__doc__ == docs["retrycore._errors:RetryError"]
    text = pydoc.render_doc(retrycore.retry, renderer=pydoc.plaintext)
    assert "Retries a function (plain or ``async def``) under a policy." in text
    assert "gRFC A6 retry throttling" in pydoc.render_doc(retrycore.Budget, renderer=pydoc.plaintext)
