"""The core's store protocol (``host_tables()["store_protocol"]``) and its row codec.

Every statement a store runs comes from this document; a store keeps no SQL of its own.
The codec is mechanical: the document's ``columns`` table says which record field each
column holds and how (``text``, ``integer``, or ``json``: the RFC 8785 canonical JSON of
the stored response, written by the core's ``canonicalize``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import _native

#: The store protocol document, read once from the core.
PROTOCOL: Dict[str, Any] = _native.host_tables()["store_protocol"]


def statement(dialect: str, op: str, style: str) -> Tuple[str, List[str]]:
    """The text of `op` in `dialect` with `style` placeholders, and the parameter names to bind in order."""
    form = PROTOCOL["dialects"][dialect]["statements"][op][style]
    return form["text"], form["params"]


def bind(names: Sequence[str], values: Mapping[str, Any]) -> List[Any]:
    """The values to pass for a statement's parameter names."""
    return [values[n] for n in names]


def to_row(record: Mapping[str, Any], storage_key: str) -> Dict[str, Any]:
    """A record (the core's dict) as a row: column name → value."""
    row: Dict[str, Any] = {}
    for col in PROTOCOL["columns"]:
        value = storage_key if col["field"] is None else record.get(col["field"])
        if col["type"] == "json" and value is not None:
            value = _native.canonicalize(value)
        row[col["name"]] = value
    return row


def from_row(row: Mapping[str, Any]) -> Tuple[Dict[str, Any], str]:
    """A row (column name → value) as a record dict and its storage key; integers may be decimal strings."""
    record: Dict[str, Any] = {}
    storage_key = ""
    for col in PROTOCOL["columns"]:
        value = row.get(col["name"])
        if value is not None and col["type"] == "integer":
            value = int(value)
        elif value is not None and col["type"] == "json":
            value = json.loads(value)
        if col["field"] is None:
            storage_key = str(value)
        else:
            record[col["field"]] = value
    return record, storage_key


def column_names() -> List[str]:
    """The columns, in the order the `read` statement selects them."""
    return [c["name"] for c in PROTOCOL["columns"]]


def release_params(failure_handling: Optional[str], release_categories: Optional[Sequence[str]]) -> Dict[str, str]:
    """The claim's failure-handling parameters (the protocol's defaults for None)."""
    d = PROTOCOL["defaults"]
    cats = d["release_categories"] if release_categories is None else list(release_categories)
    return {
        "failure_handling": failure_handling or d["failure_handling"],
        "release_categories": ",".join(cats),
    }
