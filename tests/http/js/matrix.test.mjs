// The real-client matrix, JS half (issue 15): fetch, undici.request, axios, got, ky and
// node:http × every fault of tests/http/faults.py × GET and POST, through the integrations
// (retrycore/integrations) and through plain `execute`, against the fault servers of
// tests/http/faults.py (one process, driven by fault_bridge.py). Each case asserts the
// category, whether it was retried, and the requests the server saw; an integration case
// also that every attempt carried the same Idempotency-Key.
//
// The oracle is test_matrix.py's (docs/classification.md written out): the category each
// fault must get, and each category's rule (`always` is retried for any method,
// `if_idempotent` for a GET only — the POSTs here declare nothing). So no POST that may have
// run is retried, and no transient failure is `unknown`. Every case runs at once, before the
// first assertion; sleeps are recorded, not slept (the policy's injected clock).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import readline from 'node:readline';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const rc = require('../../js/impl.cjs');
const { wrapFetch, interceptor, axiosAdapter, gotExtend, kyExtend } = require('../../../bindings-node/dist/integrations/index.js');
const undici = require('undici');
const axios = require('axios');
const { default: got } = await import('got');
const { default: ky } = await import('ky');

const ATTEMPTS = 3;
const KEY_HEADER = 'Idempotency-Key';

/** The category each fault must get (test_matrix.py's CATEGORY). */
const CATEGORY = {
  refused: ['connect'],
  drop_connect: ['connect'],
  reset_before: ['connection_lost'],
  reset_after: ['connection_lost'],
  close: ['connection_lost'],
  hang: ['timeout'],
  503: ['server_error'],
  '503_retry_after': ['overloaded'],
  '429_http_date': ['overloaded'],
  500: ['server_error'],
  502: ['server_error'],
  504: ['timeout'],
  400: ['invalid_request'],
  401: ['auth'],
  404: ['not_found'],
  409: ['conflict'],
  truncated: ['connection_lost'],
  plain_to_tls: ['connection_lost', 'connect'],
};
/** axios has one timeout for connect and answer, whose error (`ECONNABORTED`) cannot say which timed out (docs/classification.md, axios). */
const AXIOS_TIMEOUTS = { drop_connect: ['connection_lost'], hang: ['connection_lost'] };
const RULE = { connect: 'always', not_processed: 'always', overloaded: 'always', resource_exhausted: 'always', connection_lost: 'if_idempotent', timeout: 'if_idempotent', server_error: 'if_idempotent' };
const UNSEEN = new Set(['refused', 'drop_connect']);
/** The least each sleep must be, ms (Retry-After: 1; the 429's date is 30 s ahead). */
const SERVER_DELAY = { '503_retry_after': 1000, '429_http_date': 10000 };
/** Integrations that hand the response on before its body is read: a body cut short fails after the session. */
const BODY_AFTER = new Set(['fetch/integration', 'undici/integration', 'ky/integration']);

/**
 * The rows of tests/vectors/classify/clients.json the errors here must match: what each
 * client raised per fault when the vectors were captured, read by `errorNames` as it is now.
 * (ky's own TimeoutError rows are not met here: its fetch carries the undici timeouts.)
 */
const VECTORS = JSON.parse(readFileSync(path.join(here, '..', '..', 'vectors', 'classify', 'clients.json'), 'utf8')).cases;
const CLIENT_ROWS = { fetch: 'fetch (Node 20, undici 6; Agent connect/headers timeouts)', undici: 'undici 7.30.2 request()', axios: 'axios 1.21.1', got: 'got 14.6.6', ky: 'ky 1.14.3', 'node:http': 'node:http / node:https' };
const FAULT_ROWS = { refused: 'connection refused', drop_connect: 'connect timeout (accept queue full)', reset_before: 'reset before the request was read', reset_after: 'reset after the request was read', close: 'closed without an answer', hang: 'read timeout (no answer)', truncated: 'body cut short', plain_to_tls: 'plain HTTP answering TLS' };
function vectorNames(way, fault) {
  const client = CLIENT_ROWS[way.split('/')[0]];
  if (client === CLIENT_ROWS.ky && (fault === 'drop_connect' || fault === 'hang')) return undefined;
  return VECTORS.find((v) => v.client === client && v.fault === FAULT_ROWS[fault])?.failure.error_names;
}

// ---------------------------------------------------------------- the fault servers

const bridge = spawn('python3', [path.join(here, 'fault_bridge.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = readline.createInterface({ input: bridge.stdout })[Symbol.asyncIterator]();
async function ask(msg) {
  bridge.stdin.write(JSON.stringify(msg) + '\n');
  const { value, done } = await lines.next();
  if (done) throw new Error('the fault bridge exited');
  return JSON.parse(value);
}
const FAULTS = (await ask({ faults: [] })).faults;

// ---------------------------------------------------------------- the clients

function policyFor(sleeps) {
  const p = new rc.RetryPolicy({ maxAttempts: ATTEMPTS, initial: 1, maxDelay: 2 });
  p._clock = { now: () => performance.now(), wallNow: () => Date.now(), sleep: (ms) => (sleeps.push(ms), Promise.resolve()) };
  return p;
}

const body = (method) => (method === 'POST' ? '{"sku": "a-1"}' : undefined);
const ms = (s) => Math.round(s * 1000);

function agentFor(c) {
  return new undici.Agent({ connect: { timeout: ms(c.connect), rejectUnauthorized: false }, headersTimeout: ms(c.read), bodyTimeout: ms(c.read), pipelining: 0 });
}
function fetchFor(c) {
  const dispatcher = agentFor(c);
  return (input, init) => fetch(input, { ...init, dispatcher });
}
const headersOf = (method) => (method === 'POST' ? { 'content-type': 'application/json' } : {});
const integration = { idempotencyHeader: KEY_HEADER };

/**
 * node:http: the connect and the answer timed apart (`timeout` is the socket's idle time,
 * from the connect on); the error is the caller's (`event: 'connect'` while still
 * connecting: docs/js.md, "HTTP clients").
 */
function nodeHttp(c, method) {
  return new Promise((resolve, reject) => {
    const lib = c.url.startsWith('https') ? https : http;
    const req = lib.request(c.url, { method, rejectUnauthorized: false, agent: false });
    const timedOut = (event) => req.destroy(Object.assign(new Error(`timed out (${event ?? 'read'})`), { code: 'ETIMEDOUT', event }));
    req.on('socket', (socket) => {
      const connecting = setTimeout(() => timedOut(socket.connecting ? 'connect' : undefined), ms(c.connect));
      socket.once('connect', () => {
        clearTimeout(connecting);
        req.setTimeout(ms(c.read), () => timedOut(undefined));
      });
      socket.once('close', () => clearTimeout(connecting));
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.on('data', () => {});
      res.on('error', reject);
      res.on('end', () => resolve(res));
    });
    req.end(body(method));
  });
}

/** Each (client, way): a function of (case, method, policy) that makes the request and answers its status. */
const CLIENTS = {
  'fetch/integration': async (c, method, policy) => {
    const f = wrapFetch(fetchFor(c), policy, integration);
    const r = await f(c.url, { method, body: body(method), headers: headersOf(method) });
    await r.text();
    return r.status;
  },
  'fetch/execute': async (c, method, policy) => {
    const f = fetchFor(c);
    const r = await policy.execute(async () => {
      const r = await f(c.url, { method, body: body(method) });
      if (r.ok) await r.arrayBuffer(); // inside the attempt: a body cut short is its failure
      return r;
    }, { method });
    return r.status;
  },
  'undici/integration': async (c, method, policy) => {
    const dispatcher = agentFor(c).compose(interceptor(policy, integration));
    const r = await undici.request(c.url, { method, body: body(method), dispatcher });
    await r.body.text();
    return r.statusCode;
  },
  'undici/execute': async (c, method, policy) => {
    const dispatcher = agentFor(c);
    const r = await policy.execute(async () => {
      const r = await undici.request(c.url, { method, body: body(method), dispatcher });
      if (r.statusCode < 300) await r.body.text();
      else r.body.dump();
      return r;
    }, { method });
    return r.statusCode;
  },
  'axios/integration': async (c, method, policy) => {
    const client = axios.create({ adapter: axiosAdapter(axios, policy, integration), timeout: ms(Math.min(c.connect, c.read)), httpsAgent: new https.Agent({ rejectUnauthorized: false }) });
    return (await client.request({ url: c.url, method, data: body(method) })).status;
  },
  'axios/execute': async (c, method, policy) => {
    const httpsAgent = new https.Agent({ rejectUnauthorized: false });
    // The method is read from the error (`config.method`): none is declared.
    const r = await policy.execute(() => axios.request({ url: c.url, method, data: body(method), timeout: ms(Math.min(c.connect, c.read)), httpsAgent }));
    return r.status;
  },
  'got/integration': async (c, method, policy) => {
    const client = gotExtend(got, policy, integration);
    const r = await client(c.url, { method, body: body(method), timeout: { connect: ms(c.connect), response: ms(c.read) }, https: { rejectUnauthorized: false } });
    return r.statusCode;
  },
  'got/execute': async (c, method, policy) => {
    const r = await policy.execute(() => got(c.url, { method, body: body(method), retry: { limit: 0 }, timeout: { connect: ms(c.connect), response: ms(c.read) }, https: { rejectUnauthorized: false } }));
    return r.statusCode;
  },
  'ky/integration': async (c, method, policy) => {
    const client = kyExtend(ky, policy, { ...integration, fetch: fetchFor(c) });
    const r = await client(c.url, { method, body: body(method), timeout: false });
    await r.text();
    return r.status;
  },
  'ky/execute': async (c, method, policy) => {
    const f = fetchFor(c);
    const r = await policy.execute(async () => {
      const r = await ky(c.url, { method, body: body(method), retry: 0, timeout: false, fetch: f });
      await r.arrayBuffer();
      return r;
    }, { method });
    return r.status;
  },
  'node:http/execute': async (c, method, policy) => (await policy.execute(() => nodeHttp(c, method), { method })).statusCode,
};

async function outcome(c, way, method) {
  const sleeps = [];
  const policy = policyFor(sleeps);
  try {
    const status = await CLIENTS[way](c, method, policy);
    const category = status >= 200 && status < 300 ? null : rc.classify(status, { method }).category;
    return { kind: 'returned', category, attempts: sleeps.length + 1, sleeps, status };
  } catch (e) {
    if (e instanceof rc.RetryError) return { kind: 'retry_error', category: e.category, attempts: e.attempts, sleeps, reason: e.reason, error: e };
    return { kind: 'raised', category: rc.classify(e, { method }).category, attempts: sleeps.length + 1, sleeps, error: e };
  }
}

// ---------------------------------------------------------------- the matrix

const CASES = [];
for (const way of Object.keys(CLIENTS)) for (const fault of FAULTS) for (const method of ['GET', 'POST']) CASES.push({ way, fault, method });
const results = new Map();
let seconds = 0;
let dropVerified = false;

before(async () => {
  const answer = await ask({ faults: CASES.map((k) => k.fault) });
  dropVerified = answer.drop_connect_verified;
  const t = performance.now();
  await Promise.all(
    CASES.map(async (k, i) => {
      const port = answer.ports[i];
      const scheme = k.fault === 'plain_to_tls' ? 'https' : 'http';
      const c = { url: `${scheme}://127.0.0.1:${port}/case`, port, connect: k.fault === 'drop_connect' ? answer.timeout : answer.patient, read: k.fault === 'hang' ? answer.timeout : answer.patient };
      results.set(k, { c, o: await outcome(c, k.way, k.method) });
    }),
  );
  seconds = (performance.now() - t) / 1000;
  const { seen } = await ask({ collect: true });
  for (const r of results.values()) [r.calls, r.requests] = seen[String(r.c.port)];
});

after(async () => {
  bridge.stdin.end(JSON.stringify({ close: true }) + '\n');
  console.log(`matrix: ${CASES.length} cases in ${seconds.toFixed(1)} s`);
});

test('the full accept queue drops a connect (drop_connect is a connect timeout)', () => {
  assert.equal(dropVerified, true);
});

for (const k of CASES) {
  test(`${k.way} ${k.fault} ${k.method}`, () => {
    const { o, calls, requests } = results.get(k);
    const shown = `${o.kind} ${o.category} attempts=${o.attempts} calls=${calls} sleeps=${o.sleeps} error=${o.error?.stack ?? o.error}`;
    const allowed = (k.way.startsWith('axios/') && AXIOS_TIMEOUTS[k.fault]) || CATEGORY[k.fault];
    assert.ok(allowed.includes(o.category), shown);
    assert.notEqual(o.category, 'unknown', shown);
    const rule = RULE[o.category];
    let retried = rule === 'always' || (rule === 'if_idempotent' && k.method === 'GET');
    if (k.fault === 'truncated' && BODY_AFTER.has(k.way)) retried = false;
    assert.equal(calls, (retried ? ATTEMPTS : 1) * (UNSEEN.has(k.fault) ? 0 : 1), shown);
    if (retried) {
      assert.deepEqual([o.kind, o.attempts, o.reason], ['retry_error', ATTEMPTS, 'attempts_exhausted'], shown);
      assert.equal(o.sleeps.length, ATTEMPTS - 1, shown);
      for (const s of o.sleeps) assert.ok(s >= (SERVER_DELAY[k.fault] ?? 0), shown);
    } else {
      assert.equal(o.attempts, 1, shown);
      assert.notEqual(o.kind, 'retry_error', shown);
    }
    // The error is the one the vectors hold (a retried one is the RetryError's cause).
    const names = vectorNames(k.way, k.fault);
    if (names !== undefined) {
      const cause = o.kind === 'retry_error' ? o.error.cause : o.error;
      assert.deepEqual(rc.errorNames(cause), names, shown);
    }
    if (k.way.endsWith('/integration')) {
      // One key on every attempt the server read.
      const keys = requests.map((r) => /^idempotency-key: *(.*?)\r$/im.exec(r)?.[1]);
      assert.ok(keys.every((x) => x !== undefined && x === keys[0]), `${shown} keys=${keys}`);
    }
  });
}
