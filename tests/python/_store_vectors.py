"""The runners of the store protocol kinds (tests/vectors/idempotency/README.md), used by
test_vectors.py: the protocol's pins, the claim against decide() and against the SQLite
claim statement run by the SQLite store, and the row codec of retrycore.stores."""

from __future__ import annotations

import hashlib
from typing import Any, Dict

import retrycore
from retrycore import _native, stores
from retrycore.stores import _protocol as P


class Mismatch(AssertionError):
    pass


def _eq(what: str, got: Any, want: Any) -> None:
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def k_store_protocol(case: Dict[str, Any]) -> None:
    doc = _native.host_tables()["store_protocol"]
    _eq("the stores' document", P.PROTOCOL, doc)
    want = case["expect"]
    target = case["target"]
    if target == "document":
        _eq("version", doc["version"], want["version"])
        _eq("sha256", _sha256(_native.canonicalize(doc)), want["sha256"])
    elif target == "schema":
        _eq("schema sha256", [_sha256(t) for t in doc["dialects"][case["dialect"]]["schema"]], want["sha256"])
    elif target == "statement":
        text, params = P.statement(case["dialect"], case["op"], case["style"])
        _eq("params", params, want["params"])
        _eq("sha256", _sha256(text), want["sha256"])
    elif target == "script":
        s = doc["redis"]["scripts"][case["script"]]
        _eq("args", s["args"], want["args"])
        _eq("sha1", hashlib.sha1(s["lua"].encode()).hexdigest(), want["sha1"])
    else:
        raise Mismatch(f"unknown target {target!r}")


def k_store_claim(case: Dict[str, Any]) -> None:
    cfg = case.get("config") or {}
    kw: Dict[str, Any] = {"lease": cfg["lease_ms"] / 1000, "retention": cfg["retention_ms"] / 1000,
                          "failure_handling": cfg.get("failure_handling"),
                          "release_categories": cfg.get("release_categories")}
    store = stores.SqliteStore(**kw)
    d = retrycore.decide(case["record"], case["key"], case["fingerprint"], case["now"], store.config)
    executes = d["decision"] == "execute"
    want = case["expect"]
    _eq("decide", {"claimed": executes, "fence": d.get("fence"), "created_ms": d.get("created_ms")}, want)
    # The SQLite claim statement on the same record, through the store.
    conn = stores.SqliteStore.connect(":memory:")
    store.create_schema(conn)
    if case["record"] is not None:
        row = P.to_row(case["record"], retrycore.storage_key(case["key"], P.PROTOCOL["key_max_len"]))
        marks = ", ".join("?" * len(row))
        conn.execute(f"INSERT INTO idempotency_records ({', '.join(row)}) VALUES ({marks})", list(row.values()))
        conn.commit()
    text, names = P.statement("sqlite", "claim", "qmark")
    values = {"storage_key": retrycore.storage_key(case["key"], P.PROTOCOL["key_max_len"]), "key": case["key"],
              "fingerprint": case["fingerprint"], "now": case["now"],
              "lease_until_ms": case["now"] + cfg["lease_ms"],
              "expires_at_ms": case["now"] + cfg["lease_ms"] + cfg["retention_ms"],
              **P.release_params(cfg.get("failure_handling"), cfg.get("release_categories"))}
    rows = conn.execute(text, P.bind(names, values)).fetchall()
    conn.commit()
    got = {"claimed": bool(rows), "fence": rows[0][0] if rows else None, "created_ms": rows[0][1] if rows else None}
    _eq("sqlite claim", got, want)
    claim = store.claim(conn, case["key"], case["fingerprint"], now_ms=case["now"]) if not rows else None
    if claim is not None:
        _eq("the store's answer after no claim", claim.decision["decision"], d["decision"])
    conn.close()


def k_store_row(case: Dict[str, Any]) -> None:
    record, skey, want = case["record"], case["storage_key"], case["expect"]
    _eq("storage_key", retrycore.storage_key(record["key"], P.PROTOCOL["key_max_len"]), skey)
    _eq("row", P.to_row(record, skey), want)
    _eq("read back", P.from_row(want), (record, skey))
    strings = {k: str(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in want.items()}
    _eq("read back from strings", P.from_row(strings), (record, skey))
