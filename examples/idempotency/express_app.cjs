'use strict';
// An Express app whose keyed POSTs run once per Idempotency-Key (docs/idempotency.md, "Middleware").
//
//     npm install retrycore express better-sqlite3@12 && node express_app.cjs
//
// The one line is `app.use(idempotency())`, before any body parser: records go to SQLite in
// `idempotency.db` by default; pass `{ store: new PostgresStore(), connect, close }` (or
// `MariaDBStore`, `new RedisStore(client)`) from 'retrycore/stores' to share them between
// processes and runtimes.
const express = require('express');
const { idempotency } = require('retrycore/middleware');

const app = express();
app.use(idempotency());
app.use(express.json()); // for requests without a key; a keyed one's body is already read

let nextId = 1;
/** The charges made, for the example's test: a retried POST must not add one. */
const CHARGES = new Map();

app.post('/charges', (req, res) => {
  const id = nextId++;
  CHARGES.set(id, req.body.amount);
  res.status(201).json({ id, amount: req.body.amount });
});

module.exports = { app, CHARGES };
if (require.main === module) app.listen(Number(process.env.PORT || 3000));
