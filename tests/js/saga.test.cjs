'use strict';
// runCompensations and replayDeadLetters (docs/compensation.md, docs/dead-letters.md):
// the core plans and decides; these check that the JS runners call what it says,
// in its order, report back, and stop on an abort.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rc = require('./impl.cjs');

const ROOT = path.join(__dirname, '..', '..');
const POLICY = { purpose: 'compensation', max_attempts: 3, initial: '0s' };

function saga(...names) {
  const steps = names.map((n) => ({ name: n, completed: true, compensate: `undo_${n}`, policy: POLICY }));
  return { saga: 's-1', steps: [...steps, { name: 'last', completed: false }] };
}

function letter(msgId, errorClass = '503', idempotent = true) {
  return {
    msg_id: msgId, message: { id: msgId }, reason: 'attempts_exhausted', error_class: errorClass, error_message: 'boom', attempts: 3,
    first_failure_at: '2026-12-02T08:00:00.000Z', last_failure_at: '2026-12-02T08:00:01.000Z', target_idempotent: idempotent,
  };
}

const refused = () => Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });

test('compensations run newest first; a failing one becomes a dead letter and the rest still run', async () => {
  const calls = [];
  const ok = (n) => () => calls.push(n);
  const down = () => {
    calls.push('b');
    throw refused();
  };
  const result = await rc.runCompensations(saga('a', 'b', 'c'), { undo_a: ok('a'), undo_b: down, undo_c: ok('c') }, { wallClock: () => 1000 });
  assert.deepEqual(calls, ['c', 'b', 'b', 'b', 'a']);
  assert.deepEqual(result.steps.map((s) => [s.name, s.outcome, s.attempts ?? null]), [
    ['a', 'compensated', 1], ['b', 'dead_lettered', 3], ['c', 'compensated', 1], ['last', 'not_completed', null]]);
  assert.equal(result.compensated, false);
  const [dl] = result.dead_letters;
  assert.deepEqual([dl.msg_id, dl.error_message, dl.attempts, dl.reason, dl.target_idempotent], ['s-1:b:compensation', 'refused', 3, 'compensation_exhausted', true]);
  assert.equal(dl.first_failure_at, '1970-01-01T00:00:01.000Z');
});

test('a retried compensation counts its attempts; a policy without purpose: compensation is refused before anything runs', async () => {
  let n = 0;
  const result = await rc.runCompensations(saga('a'), { undo_a: () => { if (++n === 1) throw refused(); } });
  assert.deepEqual(result.steps[0], { name: 'a', outcome: 'compensated', compensate: 'undo_a', attempts: 2 });
  const bad = { saga: 's', steps: [{ name: 'a', completed: true, compensate: 'u', policy: { max_attempts: 2 } }] };
  await assert.rejects(rc.runCompensations(bad, { u: () => assert.fail('ran') }), { code: 'invalid_value', field: 'steps[0].policy.purpose' });
  await assert.rejects(rc.runCompensations(saga('a'), {}), { code: 'invalid_type', field: 'compensations.undo_a' });
});

test('an abort stops the compensation run: the older steps are not undone', async () => {
  const calls = [];
  const ac = new AbortController();
  const run = rc.runCompensations(saga('a', 'c'), {
    undo_a: () => calls.push('a'),
    undo_c: ({ signal }) => {
      calls.push('c');
      setImmediate(() => ac.abort(new Error('stop')));
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
  }, { signal: ac.signal });
  await assert.rejects(run, /stop/);
  assert.deepEqual(calls, ['c']);
});

test('a replay grows its batches, refuses with reasons and marks the replayed letters', async () => {
  const letters = [0, 1, 2, 3, 4].map((i) => letter(`m${i}`)).concat([letter('post', '503', false), letter('bad', '400')]);
  const obj = rc.DeadLetter.fromJSON(letter('obj'));
  const seen = [];
  const audit = await rc.replayDeadLetters([...letters, obj], (l) => { seen.push(l === obj ? 'obj' : l.msg_id); }, { operator: 'ops', wallClock: () => 1_700_000_000_000 });
  assert.deepEqual(seen, ['m0', 'm1', 'm2', 'm3', 'm4', 'obj']);
  assert.deepEqual(audit.batches.map((b) => b.size), [1, 2, 3]);
  assert.deepEqual(audit.skipped, [{ msg_id: 'post', reason: 'target_not_idempotent' }, { msg_id: 'bad', reason: 'data_error' }]);
  assert.equal(audit.started_at, '2023-11-14T22:13:20.000Z');
  assert.deepEqual(letters.map((l) => l.status ?? null), [...Array(5).fill('replayed'), null, null]);
  assert.equal(obj.status, 'replayed');
});

test('a replay stops growing when a batch fails, and a batch runs concurrently', async () => {
  const letters = Array.from({ length: 10 }, (_, i) => letter(`m${i}`));
  const seen = [];
  const audit = await rc.replayDeadLetters(letters, async (l) => {
    seen.push(l.msg_id);
    if (l.msg_id === 'm2') throw refused();
  }, { operator: 'ops' });
  assert.deepEqual(seen, ['m0', 'm1', 'm2']);
  assert.deepEqual(audit.failed, ['m2']);
  assert.equal(audit.not_attempted.length, 7);
  assert.match(audit.stopped, /^failure rate 0\.5 over 0\.1/);

  let running = 0;
  let peak = 0;
  const more = Array.from({ length: 7 }, (_, i) => letter(`n${i}`));
  const a2 = await rc.replayDeadLetters(more, async () => {
    peak = Math.max(peak, ++running);
    await new Promise((r) => setTimeout(r, 2));
    running--;
  }, { operator: 'ops', initial_batch: 3, max_batch: 4 });
  assert.deepEqual(a2.batches.map((b) => b.size), [3, 4]);
  assert.equal(peak, 4);
});

test('an aborted replay rejects with the reason and keeps the marks of what was replayed', async () => {
  const letters = Array.from({ length: 7 }, (_, i) => letter(`m${i}`));
  const ac = new AbortController();
  const run = rc.replayDeadLetters(letters, async (l) => {
    if (l.msg_id === 'm0') return;
    ac.abort(new Error('stop'));
  }, { operator: 'ops', signal: ac.signal });
  await assert.rejects(run, /stop/);
  assert.deepEqual(letters.slice(0, 4).map((l) => l.status ?? null), ['replayed', 'replayed', 'replayed', null]);
});

for (const [file, doc] of [['compensate.mjs', 'compensation.md'], ['replay.mjs', 'dead-letters.md']]) {
  test(`docs/${doc}'s JS snippet is examples/saga/${file}, and it runs`, async () => {
    const text = fs.readFileSync(path.join(ROOT, 'examples', 'saga', file), 'utf8');
    assert.ok(fs.readFileSync(path.join(ROOT, 'docs', doc), 'utf8').includes('```js\n' + text + '```'), `docs/${doc} quotes examples/saga/${file}`);
    // The snippet imports 'retrycore'; run it against the implementation under test.
    const body = text.replace(/^import \{([^}]*)\} from 'retrycore';$/m, (_, names) => `const {${names}} = rc;`);
    await new Function('rc', 'assert', `return (async () => {\n${body}\n})();`)(rc, assert);
  });
}
