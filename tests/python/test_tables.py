"""The Python view of the core's tables (`retrycore::tables::host_tables()`, exposed as
`retrycore._native.host_tables()`) must equal the core's: error code → exception class by
family, the `Literal[...]` unions of `_native.pyi`, the lists the package shows, its
limits and its defaults. A copied table drifts (a hand copy of the duration keys once
missed `sampling_duration`); this test fails when one does."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List

import pytest

import retrycore
from retrycore import _errors, _native

TABLES = _native.host_tables()

# The Python class of each error class the core names (docs/python.md, "Errors"); a new
# class in the core fails here until the binding gives it a Python class.
CLASS = {
    "config": retrycore.ConfigError,
    "config_type": retrycore.ConfigTypeError,
    "idempotency": retrycore.IdempotencyError,
    "idempotency_type": retrycore.IdempotencyTypeError,
    "state": retrycore.StateError,
    "snapshot": retrycore.SnapshotError,
    "key": retrycore.InvalidKeyError,
    "fingerprint": retrycore.FingerprintError,
    "fence": retrycore.FenceError,
    "dead_letter": retrycore.DeadLetterError,
}

def _codes(key: str) -> List[str]:
    return [x["code"] if isinstance(x, dict) else x for x in TABLES[key]]


def _pyi_literals() -> Dict[str, List[str]]:
    tree = ast.parse((Path(_native.__file__).parent / "_native.pyi").read_text(encoding="utf-8"))
    out: Dict[str, List[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            if isinstance(node.value.value, ast.Name) and node.value.value.id == "Literal":
                elts = node.value.slice.elts if isinstance(node.value.slice, ast.Tuple) else [node.value.slice]
                out[node.targets[0].id] = [e.value for e in elts]  # type: ignore[attr-defined]
    return out


def test_every_error_code_becomes_the_class_the_core_names() -> None:
    assert TABLES["error_classes"] == list(CLASS)
    assert _errors._BY_CLASS == CLASS
    assert retrycore.error_codes() == _codes("error_codes")
    for c in TABLES["error_codes"]:
        assert set(c["classes"]) == {"config", "idempotency"}, c
        for domain, name in c["classes"].items():
            exc = _errors._from_core(c["code"], "f", "why", name)
            assert type(exc) is CLASS[name], (c, domain)
            assert (exc.code, exc.field) == (c["code"], "f")
            assert isinstance(exc, TypeError) == c["type_error"], c


@pytest.mark.parametrize(
    "make, code, cls",
    [
        (lambda: retrycore.RetryPolicy.from_json("{"), "invalid_json", retrycore.ConfigTypeError),
        (lambda: retrycore.validate_key(""), "invalid_key", retrycore.InvalidKeyError),
        (lambda: retrycore.canonicalize(float("nan")), "invalid_number", retrycore.FingerprintError),
        (lambda: retrycore.CircuitBreaker().restore({"version": 1}), "invalid_snapshot", retrycore.SnapshotError),
        (lambda: retrycore.CircuitBreaker().transition_to("nope"), "invalid_value", retrycore.ConfigError),
    ],
)
def test_native_errors_take_the_family_the_core_gives(make: object, code: str, cls: type) -> None:
    with pytest.raises(retrycore.RetrycoreError) as ei:
        make()  # type: ignore[operator]
    assert ei.value.code == code and type(ei.value) is cls


def test_the_stub_unions_equal_the_core_lists() -> None:
    lits = _pyi_literals()
    want = {
        "_Category": _codes("categories"),
        "_GiveUpReason": _codes("give_up_reasons"),
        "_RejectReason": TABLES["reject_reasons"],
        "_BackoffKind": TABLES["backoff_kinds"],
        "_Jitter": TABLES["jitters"],
        "_BreakerKind": TABLES["breaker_kinds"],
        "_BudgetKind": TABLES["budget_kinds"],
        "_Profile": TABLES["profiles"],
    }
    assert {k: lits.get(k) for k in want} == want
    assert set(lits) == set(want), "a Literal union in _native.pyi that this test does not check"


def test_the_lists_the_package_shows_are_the_core_lists() -> None:
    assert retrycore.categories() == _codes("categories")
    assert retrycore.give_up_reasons() == _codes("give_up_reasons")
    assert dict(retrycore.LIMITS) == TABLES["limits"]


def test_every_kind_is_accepted_and_every_budget_kind_has_a_helper() -> None:
    for kind in TABLES["breaker_kinds"]:
        assert retrycore.CircuitBreaker(kind=kind).to_dict()["kind"] == kind
    for kind in TABLES["backoff_kinds"]:
        assert retrycore.RetryPolicy(backoff=kind, jitter="none", initial=1.0).to_dict()["backoff"] == kind
    for name in TABLES["profiles"]:
        assert retrycore.RetryPolicy.profile(name).to_dict()["profile"] == name
    helpers = {n for n, v in vars(retrycore.Budget).items() if isinstance(v, classmethod) and not n.startswith("_")}
    assert helpers == set(TABLES["budget_kinds"])


def test_the_defaults_the_facade_shows_are_the_core_defaults() -> None:
    d = TABLES["defaults"]
    assert retrycore.RetryPolicy().to_dict() == d["policy"]
    assert retrycore.CircuitBreaker().to_dict() == d["breaker"]
    for kind, default in d["budgets"].items():
        if default is None:  # no defaults: the helper requires its numbers
            with pytest.raises(TypeError):
                getattr(retrycore.Budget, kind)()
            continue
        assert getattr(retrycore.Budget, kind)().to_dict() == default, kind
        assert retrycore.Budget(kind=kind).to_dict() == default, kind
