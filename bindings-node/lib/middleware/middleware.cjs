'use strict';
// Idempotency middleware (docs/idempotency.md, "Middleware"): a fetch-style handler wrapper
// (`(Request) => Promise<Response>`: Hono's `app.fetch`, Workers, Deno, Node) and Express
// middleware, with the Python ASGI/WSGI middleware's behaviour. Every rule is the core's:
// the header syntax (`parseIdempotencyHeader`), the fingerprint (`fingerprint`,
// `fingerprintText`), the status codes (`decideRecord`'s `http`), the failure category of
// a 5xx (`classify`); the middleware only moves bytes.

// No Node module is required here (but by the Express middleware): `index.cjs` binds this
// to the Node package's API with `use(api)`; Workers and Deno can bind it to the wasm
// package's API and pass a store.
const stores = require('../stores/stores.cjs');

let rc = null;
let PROTOCOL = null;

/** Binds the middleware (and the stores) to a retrycore API; returns this module's exports. */
function use(api) {
  rc = api;
  PROTOCOL = stores.use(api).PROTOCOL;
  return module.exports;
}

const HEADER = 'idempotency-key';

function configError(code, field, why) {
  return new rc.RetrycoreError(`${field}: ${why}`, code, field);
}

/** An RFC 9457 problem document (the IETF draft's examples use them): [status, headers, body]. */
function problem(status, title, detail, retryAfterS, errorType) {
  // The Python middleware's body, key for key (tests/js/cross-runtime.test.cjs holds them equal).
  const doc = { type: 'about:blank', title, status };
  if (detail !== null && detail !== undefined) doc.detail = detail;
  if (errorType) doc.error_type = errorType;
  const headers = [['content-type', 'application/problem+json']];
  if (retryAfterS !== null && retryAfterS !== undefined) headers.push(['retry-after', String(retryAfterS)]);
  return [status, headers, new TextEncoder().encode(JSON.stringify(doc))];
}

const isJson = (contentType) => {
  const media = String(contentType || '').split(';', 1)[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
};

/** Standard base64 of bytes, and back, without Node's Buffer (Workers, Deno). */
function toBase64(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * The middleware's settings and steps. Options: `store` (default: `SqliteStore` on the
 * file `path`, one connection per process); `connect()` returns a connection for it per
 * request (required with a SQL store other than the default; none for Redis and memory)
 * and `close(conn)` gives it back; `methods` (default POST, PATCH); `required`: answer 400
 * to such a request without a key (else it runs unprotected); `maxBody` (bytes, default
 * 1 MiB): a larger body is refused with 413 before anything runs; `selected`: RFC 6901
 * pointers of the JSON body fields the fingerprint covers (default: the whole body);
 * `allowToken`: accept Stripe's bare token besides the IETF draft's sf-string (default
 * true); `heartbeatMs`: time between lease renewals while the handler runs (default a
 * third of the lease); `metrics`: an exporter of `retrycore/metrics` (or a list of them)
 * counting each keyed request by outcome under the name `operation` (default `default`).
 */
class Idempotency {
  constructor(options = {}) {
    let { store, connect, close } = options;
    if (!store) {
      const db = stores.SqliteStore.connect(options.path ?? 'idempotency.db');
      store = new stores.SqliteStore();
      for (const text of PROTOCOL.dialects.sqlite.schema) db.exec(text);
      connect = connect ?? (() => db);
      close = close ?? (() => undefined);
    }
    if (!connect && !(store instanceof stores.RedisStore) && store.dialect !== undefined) {
      throw configError('missing_field', 'connect', 'is required with a SQL store other than the default');
    }
    this.store = store;
    this.connect = connect ?? (() => null);
    this.close = close ?? ((c) => (c && typeof c.release === 'function' ? c.release() : c && c.end ? c.end() : undefined));
    this.methods = new Set((options.methods ?? ['POST', 'PATCH']).map((m) => m.toUpperCase()));
    this.required = options.required ?? false;
    this.maxBody = options.maxBody ?? 1 << 20;
    this.selected = options.selected;
    this.allowToken = options.allowToken ?? true;
    this.heartbeatMs = options.heartbeatMs ?? store.config.leaseMs / 3;
    const metrics = options.metrics ?? [];
    this.metrics = Array.isArray(metrics) ? metrics : [metrics];
    this.metrics.forEach((x, k) => {
      if (x === null || typeof x !== 'object' || typeof x.record !== 'function' || typeof x.names !== 'string') {
        throw configError('invalid_type', Array.isArray(metrics) ? `metrics[${k}]` : 'metrics', 'must be an exporter of retrycore/metrics or a list of them');
      }
    });
    this.operation = options.operation ?? 'default';
    if (typeof this.operation !== 'string') throw configError('invalid_type', 'operation', 'must be a string');
  }

  /** Counts a keyed request the store answered with `decision` (the core names its outcome: docs/observability.md, "Exporters"). */
  count(decision) {
    if (this.metrics.length === 0) return;
    const event = { event: 'idempotency', operation: this.operation, decision: decision.decision };
    for (const x of this.metrics) x.record(rc.metricSamples({ names: x.names, events: [event] }));
  }

  /** [key, refusal]: the key from the header's values, or the answer refusing it. */
  key(values) {
    if (values.length === 0) return [null, this.required ? this.missingKey() : null];
    if (values.length > 1) return [null, problem(400, 'Idempotency-Key is invalid', 'the request has more than one')];
    try {
      return [rc.parseIdempotencyHeader(values[0], { token: this.allowToken }), null];
    } catch (e) {
      return [null, problem(400, 'Idempotency-Key is invalid', e.message)];
    }
  }

  missingKey() {
    const http = rc.decideRecord(null, null, '', 0, this.store.config).http;
    return problem(http.status, http.title);
  }

  /** [fingerprint, refusal]: the request's fingerprint (method, path, body), or the answer refusing the body. */
  fingerprint(method, path, body, contentType, parsed) {
    const opts = { method, path };
    if (this.selected) opts.selected = this.selected;
    try {
      if (parsed !== undefined) return [rc.fingerprint(parsed, opts), null];
      if (!body || body.length === 0) return [rc.fingerprint(null, opts), null];
      if (isJson(contentType)) {
        const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
        return [rc.fingerprintText(text, opts), null];
      }
      return [rc.fingerprint({ base64: toBase64(body) }, { method, path }), null];
    } catch (e) {
      return ['', problem(400, 'The request body is not what its fingerprint needs', e.message)];
    }
  }

  /** The answer to a request that does not run: 409, 422 (400 Stripe-style) or the replay. */
  answer(decision) {
    if (decision.decision === 'replay') return replay(decision.response ?? decision.record?.response);
    const h = decision.http;
    return problem(h.status, h.title, null, h.retryAfterS, h.errorType);
  }

  tooLarge() {
    return problem(413, 'The request body is too large', `the limit is ${this.maxBody} bytes`);
  }

  /**
   * Claims the key and, when this request holds it, runs `run()` (→ [status, headers,
   * body]) with the lease renewed, and stores its outcome; returns [answer, ran].
   * `run` throwing stores a 500 failure and rethrows.
   */
  async execute(key, fp, run) {
    const conn = await this.connect();
    try {
      const claim = await this.store.claim(conn, key, fp);
      this.count(claim.decision);
      if (!claim.executes) return [this.answer(claim.decision), false];
      const beat = this.heartbeat(claim);
      let result;
      try {
        result = await run();
      } catch (e) {
        // Something may have run: the failure is stored and replayed (docs/idempotency.md, "Records").
        await this.complete(claim, { status: 500, headers: [], body: null }, 'server_error', beat);
        throw e;
      }
      const [status, headers, body] = result;
      await this.complete(claim, stored(status, headers, body), failureCategory(status), beat);
      return [result, true];
    } finally {
      await this.close(conn);
    }
  }

  async complete(claim, response, category, beat) {
    await beat.stop();
    try {
      await claim.transaction(async () => {
        await claim.complete(response, { failureCategory: category });
      });
    } catch (e) {
      // Another request took the key over; it stores its own outcome.
      if (!(e instanceof rc.IdempotencyError && e.code === 'stale_fence')) throw e;
    }
  }

  /** Renews the lease every `heartbeatMs` on a connection of its own until stopped. */
  heartbeat(claim) {
    let conn = null;
    let busy = Promise.resolve();
    let lost = false;
    const timer = setInterval(() => {
      busy = busy.then(async () => {
        if (lost) return;
        if (conn === null) conn = await this.connect();
        lost = !(await claim.renew(conn ?? undefined));
      }).catch(() => undefined); // a failed renewal: the next beat tries again
    }, this.heartbeatMs);
    if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
    return {
      stop: async () => {
        clearInterval(timer);
        await busy;
        if (conn !== null) await this.close(conn);
      },
    };
  }
}

/** The response to store: its status, the allow-listed headers, the body as text or base64. */
function stored(status, headers, body) {
  const keep = new Set(PROTOCOL.response.replayed_headers);
  const kept = headers.map(([k, v]) => [k.toLowerCase(), String(v)]).filter(([k]) => keep.has(k));
  let text = null;
  if (body && body.length) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      text = { base64: toBase64(body) };
    }
  }
  return { status, headers: kept, body: text };
}

/** A stored response as it is sent again, marked `Idempotent-Replayed: true` (Stripe's header). */
function replay(response) {
  const r = response ?? {};
  const b = r.body;
  const data = b === null || b === undefined ? new Uint8Array(0) : typeof b === 'string' ? new TextEncoder().encode(b) : fromBase64(b.base64);
  const headers = (r.headers ?? []).map(([k, v]) => [k, v]);
  headers.push(PROTOCOL.response.replay_header.slice());
  return [Number(r.status ?? 200), headers, data];
}

/** The category a 5xx is stored with (the core's classification); null for a success. */
function failureCategory(status) {
  return status < 500 ? null : rc.classify(status).category;
}

const toResponse = ([status, headers, body]) => new Response(body.length ? body : null, { status, headers });

/** Reads a fetch Request's body up to `limit` bytes; null when it is larger. */
async function readBody(req, limit) {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) return null;
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const parts = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Wraps a fetch handler: `withIdempotency(app.fetch, { store })` runs a keyed request at most
 * once per key; extra arguments (Workers' `env`, `ctx`) pass through. See `Idempotency`.
 */
function withIdempotency(handler, options = {}) {
  const idem = options instanceof Idempotency ? options : new Idempotency(options);
  const wrapped = async (req, ...rest) => {
    if (!idem.methods.has(req.method.toUpperCase())) return handler(req, ...rest);
    const values = req.headers.has(HEADER) ? [req.headers.get(HEADER)] : [];
    const [key, refusal] = idem.key(values);
    if (refusal) return toResponse(refusal);
    if (key === null) return handler(req, ...rest);
    const body = await readBody(req, idem.maxBody);
    if (body === null) return toResponse(idem.tooLarge());
    const path = new URL(req.url).pathname;
    const [fp, bad] = idem.fingerprint(req.method.toUpperCase(), path, body, req.headers.get('content-type'));
    if (bad) return toResponse(bad);
    const [answer] = await idem.execute(key, fp, async () => {
      const again = new Request(req.url, { method: req.method, headers: req.headers, body: body.length ? body : null, signal: req.signal });
      const res = await handler(again, ...rest);
      return [res.status, [...res.headers], new Uint8Array(await res.arrayBuffer())];
    });
    return toResponse(answer);
  };
  wrapped.idempotency = idem;
  return wrapped;
}

/**
 * Express middleware: `app.use(idempotency())`. Mount it before body parsers: it reads the
 * body itself (up to `maxBody`) and sets `req.body` (parsed JSON for a JSON body, else a
 * Buffer); a `req.body` Buffer from `express.raw()` mounted earlier is used as it is.
 * The outcome is stored before the response's last byte is sent.
 */
function idempotency(options = {}) {
  const idem = options instanceof Idempotency ? options : new Idempotency(options);
  const send = (res, [status, headers, body]) => {
    res.status(status);
    for (const [k, v] of headers) res.setHeader(k, v);
    res.setHeader('content-length', String(body.length));
    res.end(Buffer.from(body));
  };
  const middleware = async (req, res, next) => {
    try {
      if (!idem.methods.has(req.method.toUpperCase())) return next();
      const values = req.headersDistinct?.[HEADER] ?? (req.headers[HEADER] === undefined ? [] : [req.headers[HEADER]]);
      const [key, refusal] = idem.key(values);
      if (refusal) return send(res, refusal);
      if (key === null) return next();
      let body;
      let parsed;
      let read = false;
      if (Buffer.isBuffer(req.body)) body = req.body;
      else if (req.body !== undefined && req.readableEnded) parsed = req.body; // a parser ran before: its JSON
      else {
        body = await readStream(req, idem.maxBody);
        read = true;
      }
      if (body === null) return send(res, idem.tooLarge());
      const contentType = req.headers['content-type'];
      const [fp, bad] = idem.fingerprint(req.method.toUpperCase(), req.path ?? new URL(req.originalUrl ?? req.url, 'http://x').pathname, body, contentType, parsed);
      if (bad) return send(res, bad);
      if (read) req.body = body.length && isJson(contentType) ? JSON.parse(body.toString('utf8')) : body;
      const [answer, ran] = await idem.execute(key, fp, () => capture(req, res, next));
      if (!ran) send(res, answer);
      else answer.release();
    } catch (e) {
      next(e);
    }
  };
  middleware.idempotency = idem;
  return middleware;
}

// Runs the rest of the Express chain with `res.write`/`res.end` captured; resolves with
// [status, headers, body] when the response ends, keeping its last write until `release()`
// (called once the outcome is stored), so a retry after the response finds the record.
function capture(req, res, next) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const write = res.write;
    const end = res.end;
    const bytes = (chunk, encoding) => (chunk === undefined || chunk === null || typeof chunk === 'function' ? null : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8'));
    res.write = function (chunk, encoding, cb) {
      const b = bytes(chunk, encoding);
      if (b) chunks.push(b);
      return write.call(res, chunk, encoding, cb);
    };
    res.end = function (chunk, encoding, cb) {
      const b = bytes(chunk, encoding);
      if (b) chunks.push(b);
      res.write = write;
      res.end = end;
      const headers = Object.entries(res.getHeaders()).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]));
      const result = [res.statusCode, headers, Buffer.concat(chunks)];
      result.release = () => end.call(res, chunk, encoding, cb);
      resolve(result);
      return res;
    };
    res.on('close', () => {
      if (!res.writableFinished) reject(new Error('the client closed the connection before the response ended'));
    });
    try {
      next();
    } catch (e) {
      reject(e);
    }
  });
}

/** Reads a Node request stream up to `limit` bytes; null when it is larger (the rest is drained). */
function readStream(req, limit) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return resolve(null);
    }
    const parts = [];
    let size = 0;
    let over = false;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) over = true;
      else parts.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(parts)));
    req.on('error', reject);
  });
}

module.exports = { use, Idempotency, withIdempotency, idempotency, stored, replay };
