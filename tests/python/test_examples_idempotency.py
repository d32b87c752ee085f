"""examples/idempotency: the FastAPI and the Flask app, each with its one line of set-up,
charge once per Idempotency-Key under concurrent retries: as written (SQLite in a file,
the default store), and with the store their docstrings name passed to that line instead
(SQLite, PostgreSQL, MariaDB, Redis; servers from scripts/test-servers.sh)."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, List

import pytest

from _store_backends import Backend
from retrycore.middleware import IdempotencyMiddleware, IdempotencyWSGI
from test_middleware import _options, backend  # noqa: F401 (the store fixture, every store)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "idempotency"


def _load(name: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.chdir(where)  # the default store is idempotency.db in the working directory
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _concurrently(n: int, call: Callable[[], Any]) -> List[Any]:
    out: List[Any] = []
    lock = threading.Lock()

    def run() -> None:
        r = call()
        with lock:
            out.append(r)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _check(post: Callable[[str, int], Any], charges: Any) -> None:
    got = _concurrently(6, lambda: post('"charge-1"', 5))
    assert len(charges) == 1
    assert {r.status_code for r in got} <= {201, 409} and [r.status_code for r in got].count(201) >= 1
    again = post('"charge-1"', 5)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == {"id": 1, "amount": 5}
    assert post('"charge-1"', 7).status_code == 422
    assert post("charge-2", 7).status_code == 201  # Stripe's bare token is accepted too
    assert len(charges) == 2


def _fastapi_client(m: ModuleType) -> Callable[[str, int], Any]:
    from fastapi.testclient import TestClient

    client = TestClient(m.app)
    return lambda key, amount: client.post("/charges", json={"amount": amount}, headers={"Idempotency-Key": key})


def _flask_client(m: ModuleType) -> Callable[[str, int], Any]:
    client = m.app.test_client()

    class Shim:
        def __init__(self, r: Any) -> None:
            self.status_code, self.headers, self._json = r.status_code, r.headers, r.get_json()

        def json(self) -> Any:
            return self._json

    return lambda key, amount: Shim(client.post("/charges", json={"amount": amount},
                                               headers={"Idempotency-Key": key}))


def test_fastapi_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _load("fastapi_app", tmp_path, monkeypatch)
    _check(_fastapi_client(m), m.CHARGES)


def test_flask_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _load("flask_app", tmp_path, monkeypatch)
    _check(_flask_client(m), m.CHARGES)


def test_fastapi_example_on_every_store(backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.middleware import Middleware

    m = _load("fastapi_app", tmp_path, monkeypatch)
    # The example's one line, with the store given: app.add_middleware(IdempotencyMiddleware, store=…).
    [mw] = m.app.user_middleware
    assert mw.cls is IdempotencyMiddleware
    m.app.user_middleware[0] = Middleware(IdempotencyMiddleware, **_options(backend))
    m.app.middleware_stack = None
    _check(_fastapi_client(m), m.CHARGES)


def test_flask_example_on_every_store(backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _load("flask_app", tmp_path, monkeypatch)
    # The example's one line, with the store given: app.wsgi_app = IdempotencyWSGI(app.wsgi_app, store=…).
    assert isinstance(m.app.wsgi_app, IdempotencyWSGI)
    m.app.wsgi_app = IdempotencyWSGI(m.app.wsgi_app.app, **_options(backend))
    _check(_flask_client(m), m.CHARGES)


def test_the_docs_one_lines_are_the_examples_lines() -> None:
    """docs/idempotency.md opens with the four apps' one lines: each is in its example as shown."""
    doc = (EXAMPLES.parents[1] / "docs" / "idempotency.md").read_text()
    shown = {"python": ["fastapi_app.py", "flask_app.py"], "js": ["express_app.cjs", "hono_app.mjs"]}
    for lang, files in shown.items():
        block = doc.split(f"```{lang}\n", 1)[1].split("```", 1)[0]
        lines = [line.split("  #")[0].split("  //")[0].strip() for line in block.strip().splitlines()]
        assert len(lines) == len(files), block
        for line, name in zip(lines, files):
            code = (EXAMPLES / name).read_text()
            assert line in code.replace("  # type: ignore[method-assign]", ""), (line, name)
