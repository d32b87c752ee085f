"""A FastAPI app whose keyed POSTs run once per Idempotency-Key (docs/idempotency.md, "Middleware").

    pip install retrycore fastapi uvicorn && uvicorn fastapi_app:app

The one line is `app.add_middleware(IdempotencyMiddleware)`: records go to SQLite in
`idempotency.db` by default; pass `store=PostgresStore(), connect=...` (or `MariaDBStore`,
`RedisStore(client)`) to share them between processes and runtimes.
"""

from __future__ import annotations

import itertools
from typing import Dict

from fastapi import FastAPI

from retrycore.middleware import IdempotencyMiddleware

app = FastAPI()
app.add_middleware(IdempotencyMiddleware)

_ids = itertools.count(1)
#: The charges made, for the example's test: a retried POST must not add one.
CHARGES: Dict[int, int] = {}


@app.post("/charges", status_code=201)
def charge(body: Dict[str, int]) -> Dict[str, int]:
    charge_id = next(_ids)
    CHARGES[charge_id] = body["amount"]
    return {"id": charge_id, "amount": body["amount"]}
