"""Server middleware for idempotency keys: ASGI (Starlette, FastAPI) and WSGI (Flask),
on the stores of `retrycore.stores` (default: SQLite in a file); docs/idempotency.md,
"Middleware"."""

from ._common import Idempotency
from .asgi import IdempotencyMiddleware
from .wsgi import IdempotencyWSGI

__all__ = ["Idempotency", "IdempotencyMiddleware", "IdempotencyWSGI"]
