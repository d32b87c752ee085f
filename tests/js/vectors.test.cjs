'use strict';
// Runs every file in tests/vectors/ through the public JS API (the same
// semantics as core/tests/vectors/, the Rust runner). Durations in vectors
// are integer nanoseconds; the API speaks milliseconds, so a result `ms` is
// compared with an expected `ns` as `ms === ns / 1e6` (tests/vectors/README.md).
// A kind this runner does not know fails.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rc = require('./impl.cjs');

// RETRYCORE_VECTORS points the runner at another directory (make parity).
const ROOT = process.env.RETRYCORE_VECTORS || path.join(__dirname, '..', 'vectors');

function vectorFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...vectorFiles(p));
    else if (e.name.endsWith('.json')) out.push(p);
  }
  return out;
}

// ------------------------------------------------------------ helpers

/** An expected integer (a JSON number, or a decimal string past 2^53) as milliseconds. */
function nsToMs(v) {
  if (v === null || v === undefined) return v;
  return Number(BigInt(v)) / 1e6;
}

/** Keys whose values are durations or monotonic times (ns in vectors, ms in the API). */
const DURATION_KEYS = new Set(['timeout', 'retry_after', 'delay', 'backoff', 'server_delay', 'at', 'wait', 'low', 'mid', 'high', 'cumulative_high', 'worst_case']);

/** Compares only the keys the expectation gives; `null` means absent. */
function subset(what, got, want, key) {
  if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
    for (const k of Object.keys(want)) subset(`${what}.${k}`, got == null ? undefined : got[k], want[k], k);
    return;
  }
  if (DURATION_KEYS.has(key) && want !== null) {
    assert.equal(got, nsToMs(want), `${what}: got ${got} ms, want ${want} ns`);
    return;
  }
  if (want === null) {
    assert.ok(got === null || got === undefined, `${what}: got ${JSON.stringify(got)}, want null`);
    return;
  }
  if (typeof want === 'string' && typeof got === 'number' && /^[0-9]+$/.test(want)) {
    assert.equal(BigInt(got), BigInt(want), `${what}`);
    return;
  }
  assert.deepEqual(got, want, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

const toSnake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const toCamel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

function snakeKeys(v) {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [toSnake(k), snakeKeys(x)]));
  return v;
}

/** Expects `f()` to throw an Error with the case's code (and field, when the case gives one). */
function expectError(c, f) {
  let got;
  try {
    got = f();
  } catch (e) {
    assert.ok(e instanceof Error, `threw a non-Error: ${e}`);
    assert.equal(e.code, c.error, `error code (message: ${e.message})`);
    if (c.error_field !== undefined) assert.equal(e.field, c.error_field, 'error field');
    assert.ok(rc.isRetrycoreError(e), 'isRetrycoreError');
    return;
  }
  assert.fail(`expected error ${c.error}, got ${JSON.stringify(got)}`);
}

/** Runs `f`; with an `error` case expects that error, else returns the value. */
function outcome(c, f, check) {
  if (c.error !== undefined) return expectError(c, f);
  check(f());
}

function errorOf(f) {
  try {
    return { value: f() };
  } catch (e) {
    assert.ok(e instanceof Error, `threw a non-Error: ${e}`);
    return { error: e.code };
  }
}

/** A vector failure object (snake_case, ns) as an API Failure (camelCase, ms). */
function failureOf(v = {}) {
  const f = {};
  if (v.status !== undefined) f.status = v.status;
  if (v.grpc_code !== undefined && v.grpc_code !== null) f.grpcCode = v.grpc_code;
  if (v.error_names !== undefined) f.errorNames = v.error_names;
  if (v.method !== undefined) f.method = v.method;
  if (v.idempotent !== undefined) f.idempotent = v.idempotent;
  if (v.idempotency_key_sent !== undefined) f.idempotencyKeySent = v.idempotency_key_sent;
  if (v.headers !== undefined) f.headers = v.headers;
  if (v.elapsed !== undefined) f.elapsed = nsToMs(v.elapsed);
  if (v.message !== undefined) f.message = v.message;
  if (v.retryable !== undefined) f.retryable = v.retryable;
  if (v.should_retry !== undefined) f.shouldRetry = v.should_retry;
  if (v.verdict !== undefined) f.verdict = v.verdict;
  f.wallNowMs = v.wall_now_ms === undefined ? null : Number(v.wall_now_ms);
  return f;
}

const policyOf = (doc) => rc.RetryPolicy.fromJSON(doc ?? {});
const ms = (ns) => (ns === undefined || ns === null ? 0 : nsToMs(ns));

// ------------------------------------------------------------ retry kinds

const kinds = {
  rng(c) {
    const g = new rc.Rng(String(c.seed));
    (c.u64 || []).forEach((w, i) => assert.equal(g.nextU64(), BigInt(w), `u64[${i}]`));
    (c.f64 || []).forEach((w, i) => assert.ok(Object.is(g.nextFloat(), w), `f64[${i}]`));
  },
  duration(c) {
    outcome(c, () => rc.parseDuration(c.text), (v) => assert.equal(v, nsToMs(c.expect)));
  },
  policy(c) {
    const input = typeof c.text === 'string' ? c.text : c.document ?? {};
    outcome(c, () => rc.RetryPolicy.fromJSON(input), (p) => {
      const got = p.toJSON();
      if (c.expect !== undefined) assert.deepEqual(got, c.expect);
      assert.deepEqual(rc.RetryPolicy.fromJSON(got).toJSON(), got, 'round trip');
    });
  },
  backoff(c) {
    if (c.error !== undefined) {
      return expectError(c, () => policyOf(c.policy).delay(Number(c.retry), c.r, c.prev === undefined ? undefined : nsToMs(c.prev)));
    }
    const p = policyOf(c.policy);
    assert.equal(p.delay(Number(c.retry), c.r, c.prev === undefined ? undefined : nsToMs(c.prev)), nsToMs(c.expect));
  },
  delay_sequence(c) {
    const got = policyOf(c.policy).sampleDelays(String(c.seed), c.expect.length);
    assert.deepEqual(got, c.expect.map(nsToMs));
  },
  delay_replay(c) {
    outcome(c, () => policyOf(c.policy).replayDelays(c.draws), (got) => assert.deepEqual(got, c.expect.map(nsToMs)));
  },
  schedule(c) {
    const s = policyOf(c.policy).schedule();
    // `row_count`, when given, is the length of the listing and `rows` its first rows only.
    assert.equal(s.rows.length, c.expect.row_count ?? c.expect.rows.length, 'row count');
    c.expect.rows.forEach((want, i) => subset(`row ${i}`, snakeKeys(s.rows[i]), want));
    assert.equal(s.worstCase, nsToMs(c.expect.worst_case), 'worst_case');
  },
  classify(c) {
    const f = failureOf(c.failure);
    const v = c.policy ? policyOf(c.policy).classify(f) : rc.classify(f);
    subset('verdict', snakeKeys(v), c.expect);
    if (typeof c.failure.status === 'number' && Object.keys(c.failure).length === 1 && !c.policy) {
      // The status fast path agrees with the general path.
      const fast = rc.classify(c.failure.status);
      for (const k of ['category', 'retry', 'safe', 'retryable']) assert.equal(fast[k], v[k], `fast path ${k}`);
    }
  },
  retry_after(c) {
    const a = rc.readServerAdvice(c.headers || [], c.wall_now_ms === undefined ? null : Number(c.wall_now_ms));
    subset('advice', snakeKeys(a), c.expect);
  },
  http_date(c) {
    assert.equal(rc.parseHttpDate(c.value, Number(c.wall_now_ms)), c.expect);
  },
  session(c) {
    const doc = { ...(c.policy || {}) };
    // The Rust runner creates the policy with entropy 0: the same generator as seed 0.
    if (doc.seed === undefined) doc.seed = '0';
    const policy = rc.RetryPolicy.fromJSON(doc);
    const sessions = new Map();
    c.steps.forEach((step, i) => {
      const op = step.op;
      const sid = step.s || 'main';
      const now = ms(step.now);
      const at = `step ${i} (${op})`;
      if (op === 'start' || (!sessions.has(sid) && !['counters', 'breaker', 'budget'].includes(op))) {
        const o = op === 'start' ? step : c.session || {};
        const opts = { key: o.key ?? 'vector-key' };
        if (o.seed !== undefined) opts.seed = String(o.seed);
        if (o.idempotent !== undefined) opts.idempotent = o.idempotent;
        if (o.idempotency_key_sent !== undefined) opts.idempotencyKeySent = o.idempotency_key_sent;
        if (o.method !== undefined) opts.method = o.method;
        if (o.draws !== undefined) opts.draws = o.draws;
        sessions.set(sid, policy.session(opts));
        if (op === 'start') return;
      }
      const s = sessions.get(sid);
      let got;
      switch (op) {
        case 'before_attempt': {
          const r = errorOf(() => s.beforeAttempt(now));
          if (r.error) got = { error: r.error };
          else if (r.value.action === 'proceed') got = { proceed: snakeKeys(r.value) };
          else got = { reject: snakeKeys(r.value) };
          break;
        }
        case 'failure': {
          const r = errorOf(() => s.onFailure(failureOf(step.failure || {}), now));
          if (r.error) got = { error: r.error };
          else if (r.value.action === 'retry') got = { retry: snakeKeys(r.value) };
          else got = { give_up: snakeKeys(r.value) };
          break;
        }
        case 'success': {
          const r = errorOf(() => s.onSuccess(now, step.elapsed === undefined ? undefined : nsToMs(step.elapsed)));
          got = r.error ? { error: r.error } : { ok: true };
          break;
        }
        case 'cancel':
          s.cancel(now);
          got = { ok: true };
          break;
        case 'drop':
          s.release();
          sessions.delete(sid);
          got = { ok: true };
          break;
        case 'key':
          got = s.key;
          break;
        case 'counters':
          got = policy.counters();
          break;
        case 'breaker': {
          const m = policy.breaker.metrics();
          got = { state: m.state, calls: m.calls, failures: m.failures };
          break;
        }
        case 'budget':
          got = policy.budgets[step.index ?? 0].level(now);
          break;
        default:
          assert.fail(`${at}: unknown op ${op}`);
      }
      if (step.expect !== undefined) subset(at, got, step.expect);
    });
  },
  breaker(c) {
    if (c.error !== undefined) return expectError(c, () => rc.CircuitBreaker.fromJSON(c.config || {}));
    let b = rc.CircuitBreaker.fromJSON(c.config || {});
    let seen = [];
    const listen = (br) => {
      br.onStateChange = (t) => seen.push(t);
    };
    listen(b);
    // A core call reports at most one transition; `call` reports the outcome's, else the acquire's.
    const take = () => {
      const last = seen.length ? seen[seen.length - 1] : null;
      seen = [];
      return last;
    };
    const permits = [];
    const snaps = new Map();
    c.steps.forEach((step, i) => {
      const now = ms(step.now);
      const at = `step ${i} (${step.op})`;
      let got;
      switch (step.op) {
        case 'acquire': {
          const p = b.tryAcquire(now);
          if (p >= 0) {
            permits.push(p);
            got = { permitted: true, trial: rc.CircuitBreaker.isTrialPermit(p), permit: permits.length - 1 };
          } else {
            got = { permitted: false, state: b.refusedState, retry_after: b.retryAfter === Infinity ? null : b.retryAfter };
          }
          got.transition = take();
          break;
        }
        case 'result':
        case 'release': {
          const p = permits[step.permit];
          assert.ok(p !== undefined, `${at}: permit index`);
          if (step.op === 'result') b.record(p, step.outcome || 'success', ms(step.duration), now);
          else b.release(p, now);
          got = { transition: take() };
          break;
        }
        case 'call': {
          const p = b.tryAcquire(now);
          if (p >= 0) {
            b.record(p, step.outcome || 'success', ms(step.duration), now);
            got = { permitted: true, transition: take() };
          } else {
            got = { permitted: false, state: b.refusedState, transition: take() };
          }
          break;
        }
        case 'state': {
          const m = b.metrics();
          got = { state: m.state, calls: m.calls, failures: m.failures, slow: m.slow };
          break;
        }
        case 'transition_to': {
          const r = errorOf(() => b.transitionTo(step.to, now));
          seen = [];
          got = r.error ? { error: r.error } : { transition: r.value };
          break;
        }
        case 'reset':
          got = { transition: b.reset(now) };
          seen = [];
          break;
        case 'metrics':
          got = snakeKeys(b.stateMetrics(now));
          break;
        case 'record':
          b.recordWithoutPermit(step.outcome || 'success', ms(step.duration), now);
          got = { transition: take() };
          break;
        case 'transition_to_open_for':
        case 'transition_to_open_until': {
          const r = errorOf(() =>
            step.op === 'transition_to_open_for' ? b.transitionToOpenFor(ms(step.duration), now) : b.transitionToOpenUntil(ms(step.until), now),
          );
          seen = [];
          got = r.error ? { error: r.error } : { transition: r.value };
          break;
        }
        case 'break_arguments':
          got = snakeKeys(b.breakArguments(now));
          break;
        case 'set_break_duration': {
          const r = errorOf(() => b.setBreakDuration(ms(step.duration)));
          got = r.error ? { error: r.error } : {};
          break;
        }
        case 'snapshot':
          got = b.snapshot(now, Number(step.wall_now_ms ?? 0));
          snaps.set(step.save_as || 's', got);
          break;
        case 'restore': {
          // A saved name, an object, or raw text (`snapshot_text`, e.g. a corrupt one).
          const snap = step.snapshot_text !== undefined ? step.snapshot_text : typeof step.snapshot === 'string' ? snaps.get(step.snapshot) : step.snapshot;
          assert.ok(snap !== undefined, `${at}: snapshot`);
          const r = errorOf(() => {
            const nb = step.config ? rc.CircuitBreaker.fromJSON(step.config) : rc.CircuitBreaker.fromJSON(b.toJSON());
            nb.restore(snap, now, Number(step.wall_now_ms ?? 0));
            return nb;
          });
          if (r.error) got = { error: r.error };
          else {
            b = r.value;
            listen(b);
            permits.length = 0;
            got = { state: b.state };
          }
          break;
        }
        default:
          assert.fail(`${at}: unknown op ${step.op}`);
      }
      if (step.expect !== undefined) subset(at, got, step.expect);
    });
  },
  budget(c) {
    if (c.error !== undefined) return expectError(c, () => rc.Budget.fromJSON(c.config || {}));
    const b = rc.Budget.fromJSON(c.config || {});
    c.steps.forEach((step, i) => {
      const now = ms(step.now);
      const cat = step.category || 'server_error';
      const o = { refused: step.refused === true, holdsSlot: step.holds_slot === true };
      let got = null;
      for (let t = 0; t < (step.times ?? 1); t++) {
        switch (step.op) {
          case 'start':
            b.start(now);
            got = { ok: true };
            break;
          case 'end':
            b.end(o.holdsSlot);
            got = { ok: true };
            break;
          case 'check': {
            const r = b.check(cat, now, o);
            got = r === null ? { allowed: true } : { allowed: false, reason: r.reason, budget: r.budget };
            break;
          }
          case 'withdraw':
            got = b.withdraw(cat, now, o);
            break;
          case 'retry': {
            const r = b.check(cat, now, o);
            got = r === null ? { allowed: true, ...b.withdraw(cat, now, o) } : { allowed: false, reason: r.reason };
            break;
          }
          case 'failure':
            b.recordFailure(cat, now, {
              counts: step.counts ?? true,
              reachedBackend: step.reached_backend ?? true,
              declinedPushback: step.declined_pushback === true,
              refused: o.refused,
            });
            got = { ok: true };
            break;
          case 'success':
            b.recordSuccess(now, step.cost);
            got = { ok: true };
            break;
          case 'before_attempt': {
            const r = b.beforeAttempt(step.r, now);
            got = r === null ? { allowed: true } : { allowed: false, reason: r.reason };
            break;
          }
          case 'level':
            got = b.level(now);
            break;
          case 'deposit_retry': {
            // One operation starts, then its retry asks the budget (Finagle's test loop).
            b.start(now);
            const ok = b.check(cat, now, o) === null;
            if (ok) b.withdraw(cat, now, o);
            got = { allowed: ((got && got.allowed) || 0) + (ok ? 1 : 0) };
            break;
          }
          default:
            assert.fail(`step ${i}: unknown op ${step.op}`);
        }
      }
      if (step.expect !== undefined) subset(`step ${i} (${step.op})`, got, step.expect);
    });
  },
  metric_samples(c) {
    const doc = Object.fromEntries(['names', 'events'].filter((k) => c[k] !== undefined).map((k) => [k, c[k]]));
    outcome(c, () => rc.metricSamples(doc), (samples) => assert.deepEqual(samples, c.samples));
  },
  lint(c) {
    outcome(c, () => rc.lint(c.policy || {}, c.service), (findings) => {
      assert.deepEqual(findings.map((f) => f.code).sort(), [...c.expect].sort());
    });
  },

  // ---------------------------------------------------------- idempotency kinds

  key_validate(c) {
    outcome(c, () => rc.validateKey(c.key, c.max_len ?? 255), (v) => assert.equal(v, true));
  },
  key_derive(c) {
    outcome(c, () => rc.deriveKey(...c.parts), (v) => assert.equal(v, c.expect));
  },
  key_scoped(c) {
    outcome(c, () => rc.scopedKey(c.tenant, c.key), (v) => assert.equal(v, c.expect));
  },
  storage_key(c) {
    outcome(c, () => rc.storageKey(c.key, c.max_len), (v) => assert.equal(v, c.expect));
  },
  key_mint(c) {
    assert.equal(rc._mintKeyFrom(c.entropy_hex), c.expect);
  },
  header_parse(c) {
    const token = (c.form || 'sf_string') === 'sf_string_or_token';
    outcome(c, () => rc.parseIdempotencyHeader(c.value, { token }), (v) => assert.equal(v, c.expect));
  },
  header_format(c) {
    outcome(c, () => rc.formatIdempotencyHeader(c.key), (v) => assert.equal(v, c.expect));
  },
  jcs(c) {
    if (typeof c.text === 'string') return outcome(c, () => rc.canonicalJSONText(c.text), (v) => assert.equal(v, c.expect));
    outcome(c, () => rc.canonicalJSON(c.value), (v) => assert.equal(v, c.expect));
  },
  jcs_number(c) {
    const x = Buffer.from(c.bits, 'hex').readDoubleBE(0);
    outcome(c, () => rc._canonicalNumber(x), (v) => assert.equal(v, c.expect));
  },
  fingerprint(c) {
    // Exactly the options the case gives: which go together is the core's rule.
    const o = {};
    for (const k of ['operation', 'method', 'path']) if (c[k] !== undefined) o[k] = c[k];
    if (c.selected !== undefined) o.selected = c.selected;
    const run = () => (typeof c.body_text === 'string' ? rc.fingerprintText(c.body_text, o) : rc.fingerprint(c.body ?? null, o));
    outcome(c, run, (v) => {
      assert.equal(v, c.expect);
      if (c.canonical !== undefined) {
        const canon = typeof c.body_text === 'string' ? rc.fingerprintCanonical(null, { ...o, bodyText: c.body_text }) : rc.fingerprintCanonical(c.body ?? null, o);
        assert.equal(canon, c.canonical);
      }
    });
  },
  record_decide(c) {
    const cfg = recordConfig(c.config);
    const run = () => {
      const got = rc.decideRecord(c.record ?? null, c.key ?? null, c.fingerprint ?? '', c.now ?? 0, cfg);
      delete got.record;
      return got;
    };
    outcome(c, run, (got) => assert.deepEqual(got, camelDecision(c.expect)));
  },
  record_complete(c) {
    outcome(c, () => rc.completeRecord(c.record, c.fence, c.outcome, c.now, recordConfig(c.config)), (v) => assert.deepEqual(v, c.expect));
  },
  record_renew(c) {
    outcome(c, () => rc.renewLease(c.record, c.fence, c.now, recordConfig(c.config)), (v) => assert.deepEqual(v, c.expect));
  },
  dead_letter(c) {
    const run = () => {
      const l = rc.DeadLetter.fromJSON(c.letter);
      for (const op of c.ops || []) {
        if (op === 'mark_replayable') l.markReplayable();
        else if (op === 'mark_replayed') l.markReplayed();
        else if (op === 'discard') l.discard();
        else assert.fail(`unknown op ${op}`);
      }
      return l;
    };
    outcome(c, run, (l) => {
      assert.deepEqual(l.toJSON(), c.expect);
      assert.deepEqual(rc.DeadLetter.fromJSON(l.toJSON()).toJSON(), l.toJSON(), 'read back');
    });
  },
  rfc3339(c) {
    if (c.unix_ms !== undefined) return outcome(c, () => rc.formatRfc3339(Number(c.unix_ms)), (v) => assert.equal(v, c.expect));
    outcome(c, () => rc.parseRfc3339(c.text), (v) => assert.equal(v, c.expect));
  },
};

// ------------------------------------------------------------ store protocol

/** The core's store protocol document (`hostTables().store_protocol`). */
const storeProtocol = () => rc.hostTables().store_protocol;
/** Hex digest with WebCrypto (`SHA-256`, `SHA-1`): the same in Node, browsers, Deno and workerd. */
async function sha(alg, text) {
  const d = await globalThis.crypto.subtle.digest(alg, new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The row codec, by the document's column table (record + storage key → column → value). */
function toRow(record, storageKey) {
  const row = {};
  for (const col of storeProtocol().columns) {
    let v = col.field === null ? storageKey : record[col.field];
    if (col.type === 'json' && v !== null && v !== undefined) v = rc.canonicalJSON(v);
    row[col.name] = v ?? null;
  }
  return row;
}

function fromRow(row) {
  const record = {};
  let storageKey = '';
  for (const col of storeProtocol().columns) {
    let v = row[col.name] ?? null;
    if (v !== null && col.type === 'integer') v = Number(v);
    else if (v !== null && col.type === 'json') v = JSON.parse(v);
    if (col.field === null) storageKey = v;
    else record[col.field] = v;
  }
  return [record, storageKey];
}

Object.assign(kinds, {
  async store_protocol(c) {
    const doc = storeProtocol();
    const w = c.expect;
    if (c.target === 'document') {
      assert.equal(doc.version, w.version);
      assert.equal(await sha('SHA-256', rc.canonicalJSON(doc)), w.sha256, 'document sha256');
    } else if (c.target === 'schema') {
      assert.deepEqual(await Promise.all(doc.dialects[c.dialect].schema.map((t) => sha('SHA-256', t))), w.sha256);
    } else if (c.target === 'statement') {
      const form = doc.dialects[c.dialect].statements[c.op][c.style];
      assert.deepEqual(form.params, w.params);
      assert.equal(await sha('SHA-256', form.text), w.sha256);
    } else if (c.target === 'script') {
      const s = doc.redis.scripts[c.script];
      assert.deepEqual(s.args, w.args);
      assert.equal(await sha('SHA-1', s.lua), w.sha1);
    } else assert.fail(`unknown target ${c.target}`);
  },
  store_claim(c) {
    // Node 20 has no SQLite: the statements run in the Python and store suites; here decide() agrees.
    const d = rc.decideRecord(c.record ?? null, c.key, c.fingerprint, c.now, recordConfig(c.config));
    const claimed = d.decision === 'execute';
    assert.deepEqual({ claimed, fence: claimed ? d.fence : null, created_ms: claimed ? d.createdMs : null }, c.expect);
  },
  store_row(c) {
    assert.equal(rc.storageKey(c.record.key, storeProtocol().key_max_len), c.storage_key);
    assert.deepEqual(toRow(c.record, c.storage_key), c.expect);
    assert.deepEqual(fromRow(c.expect), [c.record, c.storage_key]);
    const strings = Object.fromEntries(Object.entries(c.expect).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
    assert.deepEqual(fromRow(strings), [c.record, c.storage_key], 'read back from strings');
  },
});

function recordConfig(cfg = {}) {
  const out = {};
  for (const [k, v] of Object.entries(cfg)) out[toCamel(k)] = v;
  return out;
}

/** The API's decision: top-level and `http` keys in camelCase, documents inside untouched. */
function camelDecision(d) {
  const out = {};
  for (const [k, v] of Object.entries(d)) {
    out[toCamel(k)] = k === 'http' && v ? Object.fromEntries(Object.entries(v).map(([a, b]) => [toCamel(a), b])) : v;
  }
  return out;
}


// ------------------------------------------------------------ execute (whole calls)

/** A thrown error as the vector describes it: classes of exactly these names, code, status, response headers, cause. */
function errorOfSpec(t) {
  if (t.retrycore === 'retry_exhausted') {
    return new rc.RetryError('an inner layer gave up', { reason: 'attempts_exhausted', attempts: 1, category: 'server_error', exhausted: true, key: '' });
  }
  if (t.retrycore === 'breaker_open') return new rc.CircuitOpenError('an inner breaker is open', 0, 'open');
  let C = Error;
  for (const name of [...(t.names || [])].reverse()) {
    const Base = C;
    C = { [name]: class extends Base {} }[name];
    Object.defineProperty(C.prototype, 'name', { value: name, writable: true, configurable: true });
  }
  const e = new C('scripted failure');
  if (t.code !== undefined) e.code = t.code;
  if (t.grpc_code !== undefined) {
    e.code = t.grpc_code;
    e.details = '';
  }
  if (t.status !== undefined) e.status = t.status;
  if (t.headers !== undefined) e.response = { status: t.status, headers: t.headers };
  if (t.cause !== undefined) e.cause = errorOfSpec(t.cause);
  if ('verdict' in t) e.verdict = t.verdict; // what retryIfError answers
  return e;
}

/** A fetch `Response` stand-in: status, ok, headers with get and forEach. */
function responseOf(r) {
  const pairs = r.headers || [];
  return {
    status: r.status,
    ok: r.status >= 200 && r.status <= 299,
    headers: {
      get: (n) => (pairs.find(([k]) => k.toLowerCase() === String(n).toLowerCase()) || [])[1] ?? null,
      forEach: (cb) => pairs.forEach(([k, v]) => cb(v, k)),
    },
  };
}

const RAISE_CLASSES = { retry_error: rc.RetryError, budget_exhausted: rc.BudgetExhaustedError, circuit_open: rc.CircuitOpenError, limiter_rejected: rc.LimiterRejectedError };

/** Runs an execute case; with `log` (the retry_log kind) the policy logs each call's records (its `correlation_id` the caller's). */
async function executeCase(c, log = false) {
  const policy = policyOf(c.policy);
  const start = c.clock.start_ms;
  const clock = { now: start };
  let active = null;
  policy._clock = {
    now: () => clock.now,
    wallNow: () => (c.clock.wall_start_ms === undefined ? null : c.clock.wall_start_ms + Math.floor(clock.now - start)),
    sleep: (ms) => {
      const st = active;
      st.sleeps.push(ms);
      if (st.spec.suspend_at_sleep === st.sleeps.length) {
        st.wake = clock.now + ms;
        return new Promise((resume) => {
          st.resume = resume;
          st.pause();
        });
      }
      clock.now += ms;
      return Promise.resolve();
    },
  };
  policy.onRetry = (i) => active.events.push({ hook: 'on_retry', attempt: i.attempt, retry: i.retry, delay: i.delay, category: i.category });
  policy.onGiveUp = (i) => active.events.push({ hook: 'on_give_up', attempts: i.attempt, reason: i.reason });
  policy.onStateChange = (t) => active.events.push({ hook: 'on_state_change', from: t.from, to: t.to, reason: t.reason });
  if (log) {
    policy.logger = (r) => active.records.push(r);
    policy.correlationId = () => active.spec.correlation_id;
  }

  /** Runs (or resumes) `st` until its call settles or suspends. */
  const drive = (st, go) =>
    new Promise((done) => {
      active = st;
      st.pause = done;
      if (st.settled) return done();
      st.onSettle = done;
      go();
    });
  const states = [];
  for (const spec of c.calls) {
    clock.now += spec.advance_ms ?? 0;
    const st = { spec, events: [], records: [], sleeps: [], calls: 0, controller: new AbortController(), last: undefined, settled: false };
    states.push(st);
    const o = spec.options || {};
    const options = { signal: st.controller.signal };
    if (o.method !== undefined) options.method = o.method;
    if (o.idempotent !== undefined) options.idempotent = o.idempotent;
    if (o.idempotency_key_sent !== undefined) options.idempotencyKeySent = o.idempotency_key_sent;
    if (o.key !== undefined) options.key = o.key;
    if (o.retry_if_result !== undefined) options.retryIfResult = (v) => (typeof v === 'string' ? o.retry_if_result[v] : undefined);
    if (o.retry_if_error) options.retryIfError = (e) => e.verdict;
    if ('fallback' in o) {
      options.fallback = (i) => {
        st.events.push({ hook: 'fallback', attempts: i.attempt, reason: i.reason });
        st.fellBack = true;
        return o.fallback;
      };
    }
    if (o.before_after) {
      options.before = (i) => st.events.push({ hook: 'before', attempt: i.attempt });
      options.after = (i) => st.events.push({ hook: 'after', attempt: i.attempt, category: i.category });
    }
    const fn = () => {
      const out = spec.script[st.calls];
      st.calls++;
      if (out === undefined) throw new Error(`attempt ${st.calls} made, the script has ${spec.script.length}`);
      clock.now += out.ms;
      if ('return' in out) return (st.last = out.return); // a value retryIfResult failed is RetryError.cause
      if (out.respond !== undefined) return (st.last = responseOf(out.respond));
      if (out.timeout !== undefined) throw (st.last = new DOMException('the attempt timed out', 'TimeoutError'));
      if (out.cancel !== undefined) {
        st.controller.abort();
        throw st.controller.signal.reason;
      }
      throw (st.last = errorOfSpec(out.throw));
    };
    await drive(st, () => {
      policy.execute(fn, options).then(
        (v) => Object.assign(st, { settled: true, value: v }).onSettle(),
        (e) => Object.assign(st, { settled: true, error: e, failed: true }).onSettle(),
      );
    });
  }
  for (const st of states.filter((x) => x.resume !== undefined)) {
    if (st.settled) continue;
    clock.now = Math.max(clock.now, st.wake);
    await drive(st, () => st.resume());
  }
  states.forEach((st, i) => {
    const want = st.spec.expect;
    const what = `call ${i}`;
    assert.ok(st.settled, `${what}: still suspended`);
    assert.equal(st.calls, want.calls, `${what}: calls`);
    assert.deepEqual(st.sleeps, want.sleeps, `${what}: sleeps`);
    assert.deepEqual(st.events, want.events, `${what}: events`);
    if (want.ending !== 'fallback') assert.ok(!st.fellBack, `${what}: the fallback answered, want ${want.ending}`);
    if (log) assert.deepEqual(st.records, want.records, `${what}: records`);
    switch (want.ending) {
      case 'fallback':
        assert.ok(!st.failed && st.fellBack, `${what}: want the fallback's value`);
        assert.deepEqual(st.value, want.value, `${what}: value`);
        break;
      case 'return':
        assert.ok(!st.failed, `${what}: rejected with ${st.error && (st.error.code || st.error.message)}, want a return`);
        if (st.last !== undefined && st.value === st.last) break;
        assert.deepEqual(st.value, st.spec.script[st.calls - 1].return, `${what}: value`);
        break;
      case 'propagate':
        assert.ok(st.failed && st.error === st.last, `${what}: want the last error itself, got ${st.failed ? st.error && (st.error.code || st.error.name) : 'a return'}`);
        break;
      case 'cancelled':
        assert.ok(st.failed && (st.error === st.controller.signal.reason || st.error === st.last), `${what}: want the cancellation, got ${st.error && st.error.name}`);
        break;
      case 'raise': {
        const e = st.error;
        assert.ok(st.failed, `${what}: returned, want ${want.class}`);
        assert.ok(e instanceof RAISE_CLASSES[want.class], `${what}: ${e && e.constructor && e.constructor.name} (${e && e.code}), want ${want.class}`);
        if (want.class === 'retry_error') assert.ok(!(e instanceof rc.BudgetExhaustedError), `${what}: a BudgetExhaustedError`);
        assert.equal(e.code, want.code, `${what}: code`);
        if (want.class === 'limiter_rejected') {
          // A refused first attempt: no attempt was made; the error names the limiter and its reason.
          assert.equal(e.reason, want.reason, `${what}: reason`);
          assert.equal(e.limiter, want.limiter, `${what}: limiter`);
          assert.equal(want.attempts, 0, `${what}: attempts`);
        } else if (want.class !== 'circuit_open') {
          assert.equal(e.reason, want.reason, `${what}: reason`);
          assert.equal(e.attempts, want.attempts, `${what}: attempts`);
        }
        assert.equal(rc.errorNames(e).includes('retrycore:retry_exhausted'), want.marked, `${what}: marked`);
        assert.equal(e.cause !== undefined && e.cause === st.last, want.cause, `${what}: cause`);
        if (want.category !== undefined) assert.equal(e.category, want.category, `${what}: category`);
        if (want.budget !== undefined) assert.equal(e.budget, want.budget, `${what}: budget`);
        if (want.retry_after !== undefined) assert.equal(e.retryAfter, want.retry_after, `${what}: retry_after`);
        break;
      }
      default:
        assert.fail(`${what}: unknown ending ${want.ending}`);
    }
  });
}

kinds.execute = (c) => executeCase(c);
kinds.retry_log = (c) => executeCase(c, true);

// ------------------------------------------------------------ alerts

kinds.alerts = (c) => {
  const d = c.document;
  let got;
  try {
    got = rc.alerts(d.before, d.after, rc.parseDuration(d.interval), d.thresholds);
  } catch (e) {
    if (c.error === undefined) throw e;
    assert.equal(e.code, c.error, `error: got ${e.code} (${e.message})`);
    if (c.error_field !== undefined) assert.equal(e.field, c.error_field, 'error_field');
    return;
  }
  assert.equal(c.error, undefined, `expected error ${c.error}, got ${JSON.stringify(got)}`);
  assert.deepEqual(got, c.expect);
};

// ------------------------------------------------------------ limiter

const LIMITER_DURATIONS = new Set(['wait', 'max_wait', 'retry_after']);

/** `want` ⊆ `got`: snake_case keys against camelCase, durations ns against ms, floats within `tol` relative. */
function limiterSubset(what, got, want, tol) {
  for (const [k, w0] of Object.entries(want)) {
    const g = got[toCamel(k)];
    const w = LIMITER_DURATIONS.has(k) && w0 !== null ? nsToMs(w0) : w0;
    if (typeof w === 'number' && typeof g === 'number' && !Number.isInteger(w0)) {
      assert.ok(g === w || Math.abs(g - w) <= tol * Math.max(Math.abs(g), Math.abs(w)), `${what}.${k}: got ${g}, want ${w}`);
    } else if (w === null) {
      assert.ok(g === null || g === undefined, `${what}.${k}: got ${JSON.stringify(g)}, want null`);
    } else {
      assert.deepEqual(g, w, `${what}.${k}: got ${JSON.stringify(g)}, want ${JSON.stringify(w)}`);
    }
  }
}

kinds.limiter = (c) => {
  let lim;
  try {
    lim = rc.Limiter.fromJSON(c.config ?? {}, nsToMs(c.created ?? 0));
  } catch (e) {
    if (c.error === undefined) throw e;
    assert.equal(e.code, c.error, `error: got ${e.code} (${e.message})`);
    if (c.error_field !== undefined) assert.equal(e.field, c.error_field, 'error_field');
    return;
  }
  assert.equal(c.error, undefined, `expected error ${c.error}`);
  const tol = c.tolerance ?? 0;
  for (const [i, step] of c.steps.entries()) {
    const now = nsToMs(step.now ?? 0);
    let got;
    for (let n = 0; n < (step.times ?? 1); n++) {
      switch (step.op) {
        case 'acquire':
          got = lim.acquire({ now, attempt: step.attempt, within: step.within === undefined ? undefined : nsToMs(step.within) });
          break;
        case 'release': {
          const before = lim.state(now);
          lim.release({ now, rtt: step.rtt === undefined ? undefined : nsToMs(step.rtt), signal: step.signal });
          // The public release wakes the waiter itself; the granted ticket shows as one fewer queued.
          const after = lim.state(now);
          got = { granted: before.queued > after.queued ? 'granted' : null };
          break;
        }
        case 'cancel':
          got = lim.cancel(step.ticket, now);
          break;
        case 'state':
          got = lim.state(now);
          break;
        default:
          throw new Error(`step ${i}: unknown op ${step.op}`);
      }
    }
    if (step.expect === undefined) continue;
    const want = step.op === 'release' && step.expect.granted !== null ? { ...step.expect, granted: 'granted' } : step.expect;
    limiterSubset(`step ${i} (${step.op})`, got, want, tol);
  }
};

// ------------------------------------------------------------ compensation, dead_letter_replay

/** `want` ⊆ `got`: an object's keys given, a list's every item (and its length). */
function sagaSubset(what, got, want) {
  if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
    assert.ok(got !== null && typeof got === 'object' && !Array.isArray(got), `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    for (const [k, w] of Object.entries(want)) sagaSubset(`${what}.${k}`, got[k] ?? null, w);
  } else if (Array.isArray(want)) {
    assert.ok(Array.isArray(got) && got.length === want.length, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    want.forEach((w, i) => sagaSubset(`${what}[${i}]`, got[i], w));
  } else {
    assert.deepEqual(got, want, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

/** Runs `f` against a spec's `error` (and `error_field`) or, when it has one, its `expect`; false when it failed as expected. */
function sagaCheck(what, spec, f) {
  let got;
  try {
    got = f();
  } catch (e) {
    if (spec.error === undefined) throw e;
    assert.equal(e.code, spec.error, `${what}: error: got ${e.code} (${e.message})`);
    if (spec.error_field !== undefined) assert.equal(e.field, spec.error_field, `${what}: error_field`);
    return false;
  }
  assert.equal(spec.error, undefined, `${what}: expected error ${spec.error}`);
  if ('expect' in spec) sagaSubset(what, got, spec.expect);
  return got;
}

function sagaSteps(c, make, ops) {
  const run = sagaCheck('case', c, make);
  if (run === false) return;
  for (const [i, step] of c.steps.entries()) {
    const op = ops[step.op];
    if (op === undefined) throw new Error(`step ${i}: unknown op ${step.op}`);
    sagaCheck(`step ${i} (${step.op})`, step, () => op(run, step));
  }
}

kinds.compensation = (c) =>
  sagaSteps(c, () => new rc.CompensationRun(c.saga ?? null), {
    next: (r) => r.next(),
    record: (r, step) => r.record(step.outcome),
    result: (r) => r.result(),
  });

kinds.dead_letter_replay = (c) =>
  sagaSteps(c, () => new rc.DeadLetterReplay(c.letters ?? null, c.options ?? null, c.wall_now_ms ?? 0), {
    groups: (r) => r.groups(),
    next_batch: (r) => r.nextBatch(),
    record: (r, step) => r.record(step.msg_id, step.ok, step.wall_now_ms),
    letters: (r) => r.letters(),
    audit: (r) => r.audit(),
  });

// ------------------------------------------------------------ the files

const files = vectorFiles(ROOT);
test('there are vector files', () => assert.ok(files.length > (process.env.RETRYCORE_VECTORS ? 0 : 10)));

for (const file of files) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const rel = path.relative(ROOT, file);
  test(`${rel} [${doc.kind}]`, async (t) => {
    assert.ok(doc._comment, 'every vector file has a _comment');
    const run = kinds[doc.kind];
    assert.ok(run, `kind ${JSON.stringify(doc.kind)} has no runner`);
    const failures = [];
    for (const [i, raw] of doc.cases.entries()) {
      const c = { ...(doc.defaults || {}), ...raw };
      for (const k of Object.keys(doc.defaults || {})) if (raw[k] === undefined) c[k] = doc.defaults[k];
      try {
        // The execute and store_protocol kinds are asynchronous (a whole call; WebCrypto); the others answer at once.
        const r = run(c);
        if (r && typeof r.then === 'function') await r;
      } catch (e) {
        failures.push(`${raw.name ?? `#${i}`}: ${e.message}`);
      }
    }
    t.diagnostic(`${doc.cases.length} cases`);
    assert.deepEqual(failures, [], `${failures.length} of ${doc.cases.length} cases failed:\n${failures.join('\n')}`);
  });
}
