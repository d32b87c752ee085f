// A Hono app whose keyed POSTs run once per Idempotency-Key (docs/idempotency.md, "Middleware").
//
//     npm install retrycore hono better-sqlite3@12
//
// The one line wraps the app's fetch handler: `withIdempotency(app.fetch)`. Records go to
// SQLite in `idempotency.db` by default (Node); on Workers and Deno pass a store:
// `withIdempotency(app.fetch, { store })` (in tests there, `new MemoryStore()`).
import { Hono } from 'hono';
import { withIdempotency } from 'retrycore/middleware';

const app = new Hono();

let nextId = 1;
/** The charges made, for the example's test: a retried POST must not add one. */
export const CHARGES = new Map();

app.post('/charges', async (c) => {
  const { amount } = await c.req.json();
  const id = nextId++;
  CHARGES.set(id, amount);
  return c.json({ id, amount }, 201);
});

export default { fetch: withIdempotency(app.fetch) };
