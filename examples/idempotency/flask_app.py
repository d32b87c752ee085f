"""A Flask app whose keyed POSTs run once per Idempotency-Key (docs/idempotency.md, "Middleware").

    pip install retrycore flask && flask --app flask_app run

The one line is `app.wsgi_app = IdempotencyWSGI(app.wsgi_app)`: records go to SQLite in
`idempotency.db` by default; pass `store=PostgresStore(), connect=...` (or `MariaDBStore`,
`RedisStore(client)`) to share them between processes and runtimes.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, Tuple

from flask import Flask, request

from retrycore.middleware import IdempotencyWSGI

app = Flask(__name__)
app.wsgi_app = IdempotencyWSGI(app.wsgi_app)  # type: ignore[method-assign]

_ids = itertools.count(1)
#: The charges made, for the example's test: a retried POST must not add one.
CHARGES: Dict[int, int] = {}


@app.post("/charges")
def charge() -> Tuple[Dict[str, Any], int]:
    amount = int(request.get_json()["amount"])
    charge_id = next(_ids)
    CHARGES[charge_id] = amount
    return {"id": charge_id, "amount": amount}, 201
