// Replay dead letters (docs/dead-letters.md): small batches first, growing while they succeed.
import { replayDeadLetters } from 'retrycore';

const letter = (msgId, idempotent = true) => ({
  msg_id: msgId, message: { order: msgId }, reason: 'attempts_exhausted',
  error_class: '503', error_message: 'upstream 503', attempts: 5,
  first_failure_at: '2026-12-02T08:00:00.000Z', last_failure_at: '2026-12-02T08:00:09.000Z',
  target_idempotent: idempotent,
});
const letters = [0, 1, 2, 3, 4, 5, 6].map((i) => letter(`m${i}`)).concat([letter('post', false)]);
const sent = [];
const audit = await replayDeadLetters(letters, async (l) => { sent.push(l.msg_id); }, { operator: 'ops@example.com' });
assert.deepEqual(audit.batches, [{ size: 1, failed: 0 }, { size: 2, failed: 0 }, { size: 4, failed: 0 }]);
assert.deepEqual(audit.skipped, [{ msg_id: 'post', reason: 'target_not_idempotent' }]);
assert.equal(letters[0].status, 'replayed');
