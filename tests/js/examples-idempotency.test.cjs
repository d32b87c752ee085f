'use strict';
// examples/idempotency: the Express and the Hono app, each with its one line of set-up,
// charge once per Idempotency-Key under concurrent retries: as written (SQLite in a file,
// the default store), and with the store their comments name given to that line (SQLite,
// PostgreSQL, MariaDB, Redis on the servers scripts/test-servers.sh started). Each example
// runs from a scratch directory where `retrycore` is the Node package of this checkout.
// The napi package only: skipped under RETRYCORE_IMPL=wasm.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const impl = require('./impl.cjs');
const crypto = require('node:crypto');
const { root } = require('./_servers.cjs');

const onNode = impl.IMPL === 'node';
const examples = path.join(root, 'examples', 'idempotency');

/**
 * A scratch directory holding the example, with retrycore, express and hono resolvable;
 * with `line`, the example's one line of set-up rewritten to take the options the test puts
 * in `globalThis.RETRYCORE_EXAMPLE_OPTIONS` (a store), and nothing else changed.
 */
function scratch(file, line) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-example.'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(path.join(root, 'bindings-node'), path.join(dir, 'node_modules', 'retrycore'));
  for (const dep of ['express', 'hono']) {
    fs.symlinkSync(path.join(root, 'bindings-node', 'node_modules', dep), path.join(dir, 'node_modules', dep));
  }
  let text = fs.readFileSync(path.join(examples, file), 'utf8');
  if (line !== undefined) {
    assert.equal(text.split(line[0]).length, 2, `${file} has its one line ${line[0]}`);
    text = text.replace(line[0], line[1]);
  }
  fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

/** The examples' shared check, as tests/python/test_examples_idempotency.py does it. */
async function check(post, charges, prefix = '') {
  const one = `"${prefix}charge-1"`;
  const got = await Promise.all(Array.from({ length: 6 }, () => post(one, 5)));
  assert.equal(charges.size, 1);
  const statuses = got.map((r) => r.status);
  assert.ok(statuses.every((s) => s === 201 || s === 409) && statuses.includes(201), String(statuses));
  const again = await post(one, 5);
  assert.equal(again.status, 201);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await again.json(), { id: 1, amount: 5 });
  assert.equal((await post(one, 7)).status, 422);
  assert.equal((await post(`${prefix}charge-2`, 7)).status, 201); // Stripe's bare token is accepted too
  assert.equal(charges.size, 2);
}

const request = (url, key, amount) =>
  new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ amount }) });

test('the Express example charges once per key', { skip: !onNode && 'napi only' }, async () => {
  const dir = scratch('express_app.cjs');
  const cwd = process.cwd();
  process.chdir(dir); // the default store is idempotency.db in the working directory
  try {
    const { app, CHARGES } = require(path.join(dir, 'express_app.cjs'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${server.address().port}/charges`;
      await check((key, amount) => fetch(request(url, key, amount)), CHARGES);
      assert.ok(fs.existsSync(path.join(dir, 'idempotency.db')));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  } finally {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the Hono example charges once per key', { skip: !onNode && 'napi only' }, async () => {
  const dir = scratch('hono_app.mjs');
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const m = await import(path.join(dir, 'hono_app.mjs'));
    await check((key, amount) => m.default.fetch(request('http://app.test/charges', key, amount)), m.CHARGES);
    assert.ok(fs.existsSync(path.join(dir, 'idempotency.db')));
  } finally {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The same apps with each store given to their one line (keys unique to this run: the
// servers' tables are shared with the other suites).
const OPTIONS = 'globalThis.RETRYCORE_EXAMPLE_OPTIONS';
const stores = onNode ? require('./_store_backends.cjs').backends() : null;
test.after(async () => stores && stores.end());

/** Creates a SQL store's table (idempotent). */
async function schema(b) {
  if (!b.sql) return;
  const conn = await b.connect();
  await b.make().createSchema(conn);
  await b.close(conn);
}

for (const name of ['sqlite', 'postgresql', 'mariadb', 'redis']) {
  const options = (b) => ({ store: b.make(), connect: b.connect, close: b.close });
  const prefix = () => `ex-${name}-${crypto.randomBytes(4).toString('hex')}-`;

  test(`the Express example on ${name}`, { skip: !onNode && 'napi only' }, async () => {
    const b = stores.list[name];
    await schema(b);
    globalThis.RETRYCORE_EXAMPLE_OPTIONS = options(b);
    const dir = scratch('express_app.cjs', ['app.use(idempotency());', `app.use(idempotency(${OPTIONS}));`]);
    try {
      const { app, CHARGES } = require(path.join(dir, 'express_app.cjs'));
      const server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const url = `http://127.0.0.1:${server.address().port}/charges`;
        await check((key, amount) => fetch(request(url, key, amount)), CHARGES, prefix());
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    } finally {
      delete globalThis.RETRYCORE_EXAMPLE_OPTIONS;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`the Hono example on ${name}`, { skip: !onNode && 'napi only' }, async () => {
    const b = stores.list[name];
    await schema(b);
    globalThis.RETRYCORE_EXAMPLE_OPTIONS = options(b);
    const dir = scratch('hono_app.mjs', ['fetch: withIdempotency(app.fetch) }', `fetch: withIdempotency(app.fetch, ${OPTIONS}) }`]);
    try {
      const m = await import(path.join(dir, 'hono_app.mjs'));
      await check((key, amount) => m.default.fetch(request('http://app.test/charges', key, amount)), m.CHARGES, prefix());
    } finally {
      delete globalThis.RETRYCORE_EXAMPLE_OPTIONS;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
