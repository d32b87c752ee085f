// The in-runtime half of the real-runtime tests: runs in a browser page, a
// Web Worker, Deno and workerd alike (no Node API, no eval).
//
// runVectors() runs tests/js/vectors.test.cjs itself — the very runner
// `node --test` uses — wrapped as an ES module function (harness/wrap.mjs)
// and given small stand-ins for the Node modules it requires (node:test,
// node:assert/strict, node:fs over an in-memory copy of tests/vectors/,
// node:path, Buffer, an empty process.env) and the package under test as
// './impl.cjs'. Every file
// and every kind runs; a kind the runner does not know fails as in Node.
//
// executeFlaky() is `policy.execute` with a real fetch to the test server's
// /flaky endpoint, which answers 503 + Retry-After: 1 twice, then 200.

/** Fetches tests/vectors/ from the test server: `{ relativePath: text }`. */
export async function loadVectorFiles(base) {
  const list = await (await fetch(new URL('/vectors/index.json', base))).json();
  const files = {};
  await Promise.all(
    list.map(async (rel) => {
      const r = await fetch(new URL(`/vectors/${rel}`, base));
      if (!r.ok) throw new Error(`GET /vectors/${rel}: ${r.status}`);
      files[rel] = await r.text();
    }),
  );
  return files;
}

// ------------------------------------------------------------ node:path (posix)

function normalize(p) {
  const abs = p.startsWith('/');
  const out = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(part);
  }
  return (abs ? '/' : '') + out.join('/');
}

const pathShim = {
  sep: '/',
  join: (...parts) => normalize(parts.filter((p) => p !== '').join('/')),
  resolve: (...parts) => normalize(parts.join('/')),
  relative(from, to) {
    const a = normalize(from).split('/').filter(Boolean);
    const b = normalize(to).split('/').filter(Boolean);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
  },
  basename: (p) => normalize(p).split('/').pop(),
  dirname: (p) => normalize(p).split('/').slice(0, -1).join('/') || '/',
};

// ------------------------------------------------------------ node:fs over a file map

const ROOT = '/tests/vectors';

function fsShim(files) {
  const full = new Map(Object.entries(files).map(([rel, text]) => [`${ROOT}/${rel}`, text]));
  return {
    readdirSync(dir, opts) {
      const d = normalize(dir);
      const names = new Map();
      for (const p of full.keys()) {
        if (!p.startsWith(d + '/')) continue;
        const rest = p.slice(d.length + 1);
        const name = rest.split('/')[0];
        names.set(name, rest.includes('/'));
      }
      if (names.size === 0) throw Object.assign(new Error(`ENOENT: no such directory ${dir}`), { code: 'ENOENT' });
      const entries = [...names].map(([name, isDir]) => ({ name, isDirectory: () => isDir, isFile: () => !isDir }));
      return opts && opts.withFileTypes ? entries : entries.map((e) => e.name);
    },
    readFileSync(p) {
      const text = full.get(normalize(p));
      if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file ${p}`), { code: 'ENOENT' });
      return text;
    },
    existsSync: (p) => full.has(normalize(p)),
  };
}

// ------------------------------------------------------------ node:assert/strict

class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
  }
}

function show(v) {
  try {
    return typeof v === 'bigint' ? `${v}n` : Object.is(v, -0) ? '-0' : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** node:assert's deepStrictEqual: Object.is for primitives, same prototypes, same own enumerable keys. */
function deepStrict(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && a.length !== b.length) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepStrict(a[k], b[k])) return false;
  }
  return true;
}

const fail = (message) => {
  throw message instanceof Error ? message : new AssertionError(message ?? 'Failed');
};

export const assertShim = {
  AssertionError,
  ok: (v, message) => v || fail(message ?? `expected a truthy value, got ${show(v)}`),
  equal: (a, b, message) => Object.is(a, b) || fail(`${message ? message + ': ' : ''}${show(a)} !== ${show(b)}`),
  strictEqual: (a, b, message) => Object.is(a, b) || fail(`${message ? message + ': ' : ''}${show(a)} !== ${show(b)}`),
  notEqual: (a, b, message) => !Object.is(a, b) || fail(`${message ? message + ': ' : ''}${show(a)} === ${show(b)}`),
  deepEqual: (a, b, message) => deepStrict(a, b) || fail(`${message ? message + ': ' : ''}${show(a)} is not deep-equal to ${show(b)}`),
  deepStrictEqual: (a, b, message) => deepStrict(a, b) || fail(`${message ? message + ': ' : ''}${show(a)} is not deep-equal to ${show(b)}`),
  match: (s, re, message) => re.test(s) || fail(message ?? `${show(s)} does not match ${re}`),
  fail,
  throws(f, _expected, message) {
    try {
      f();
    } catch {
      return;
    }
    fail(message ?? 'Missing expected exception');
  },
};

// ------------------------------------------------------------ Buffer (the one use: hex → double)

const bufferShim = {
  from(hex, enc) {
    if (enc !== 'hex') throw new Error(`Buffer shim: only hex, got ${enc}`);
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    const view = new DataView(bytes.buffer);
    return { length: bytes.length, readDoubleBE: (o = 0) => view.getFloat64(o, false) };
  },
};

// ------------------------------------------------------------ running the runner

/**
 * Runs the wrapped vectors.test.cjs (`runner`) against `api` over `files`:
 * `{ tests, passed, failed, cases, failures: [{ name, message }] }`.
 */
export async function runVectors({ api, files, runner }) {
  const tests = [];
  const testShim = (name, fn) => {
    tests.push({ name, fn });
  };
  testShim.test = testShim;
  const modules = {
    'node:test': testShim,
    'node:assert/strict': assertShim,
    'node:assert': assertShim,
    'node:fs': fsShim(files),
    'node:path': pathShim,
    './impl.cjs': api,
  };
  const require = (name) => {
    if (!(name in modules)) throw new Error(`vectors runner: no stand-in for require(${JSON.stringify(name)})`);
    return modules[name];
  };
  const module = { exports: {} };
  runner(require, module, module.exports, '/tests/js', '/tests/js/vectors.test.cjs', bufferShim, { env: {} });

  const result = { tests: 0, passed: 0, failed: 0, cases: 0, failures: [] };
  for (const { name, fn } of tests) {
    result.tests++;
    const t = {
      name,
      diagnostic(msg) {
        const m = /^(\d+) cases$/.exec(String(msg));
        if (m) result.cases += Number(m[1]);
      },
    };
    try {
      await fn(t);
      result.passed++;
    } catch (e) {
      result.failed++;
      result.failures.push({ name, message: String((e && e.message) || e).slice(0, 4000) });
    }
  }
  return result;
}

// ------------------------------------------------------------ execute with a real fetch

/**
 * `policy.execute` of a POST to `url` that the server answers 503 +
 * Retry-After: 1 twice, then 200; the idempotency key rides on every attempt.
 */
export async function executeFlaky(rc, url) {
  const policy = new rc.RetryPolicy({ maxAttempts: 4, initial: 10 });
  const retries = [];
  policy.onRetry = (i) => retries.push({ attempt: i.attempt, retry: i.retry, delay: i.delay, category: i.category });
  const t0 = Date.now();
  const attempts = [];
  const res = await policy.execute(
    ({ attempt, key, signal }) => {
      attempts.push(attempt);
      return fetch(url, { method: 'POST', headers: { 'Idempotency-Key': rc.formatIdempotencyHeader(key), 'content-type': 'application/json' }, body: '{"order":1}', signal });
    },
    { idempotencyKeySent: true },
  );
  const server = await res.json();
  return { status: res.status, elapsedMs: Date.now() - t0, attempts, retries, server, counters: policy.counters() };
}

/** Everything one runtime runs: the vectors and the flaky execute. */
export async function runAll({ rc, files, runner, flakyUrl }) {
  const vectors = await runVectors({ api: rc, files, runner });
  let exec;
  try {
    exec = await executeFlaky(rc, flakyUrl);
  } catch (e) {
    exec = { error: String((e && e.stack) || e) };
  }
  return { vectors, exec };
}
