// Node-side checks of what a runtime reported (suite.mjs's runAll result).
import assert from 'node:assert/strict';
import { vectorList } from './server.mjs';

/** Asserts that every vector file ran and passed; returns a one-line summary. */
export function checkVectors(label, v) {
  assert.ok(v && typeof v === 'object', `${label}: no vector results`);
  const files = vectorList().length;
  assert.deepEqual(v.failures, [], `${label}: ${v.failed} of ${v.tests} vector tests failed:\n${(v.failures || []).map((f) => `${f.name}: ${f.message}`).join('\n')}`);
  // One test per file, plus "there are vector files".
  assert.equal(v.tests, files + 1, `${label}: ran ${v.tests} tests for ${files} files`);
  assert.equal(v.passed, v.tests);
  assert.ok(v.cases > 500, `${label}: only ${v.cases} cases`);
  return `${label}: ${v.passed}/${v.tests} vector tests (${files} files, ${v.cases} cases) passed`;
}

/** Asserts the flaky execute: two 503 + Retry-After: 1, then 200, one idempotency key throughout. */
export function checkExecute(label, e, server) {
  assert.ok(e && !e.error, `${label}: execute failed: ${e && e.error}`);
  assert.equal(e.status, 200, `${label}: status`);
  assert.deepEqual(e.attempts, [1, 2, 3], `${label}: attempts`);
  assert.equal(e.server.attempts, 3, `${label}: the server saw ${e.server.attempts} requests`);
  const keys = e.server.keys;
  assert.ok(keys.every((k) => k === keys[0]) && /^"[0-9a-f-]{36}"$/.test(keys[0]), `${label}: one Idempotency-Key on every attempt: ${keys}`);
  assert.equal(e.retries.length, 2, `${label}: onRetry calls`);
  for (const r of e.retries) {
    assert.equal(r.category, 'overloaded', `${label}: 503 + Retry-After is overloaded`);
    assert.equal(r.delay, 1000, `${label}: the server's Retry-After: 1 decides the delay`);
  }
  assert.ok(e.elapsedMs >= 1900, `${label}: slept ${e.elapsedMs} ms for two Retry-After: 1`);
  assert.ok(server, `${label}: the server saw no /flaky request for this id`);
  assert.equal(server.attempts, 3, `${label}: the server's own count`);
  return `${label}: execute with fetch: 503, 503, 200 in ${e.elapsedMs} ms, one key`;
}
