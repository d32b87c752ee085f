// Undo a saga's completed steps (docs/compensation.md): refund, then release.
import { runCompensations } from 'retrycore';

const policy = { purpose: 'compensation', max_attempts: 5, initial: '0s', deadline: '1h' };
const saga = {
  saga: 'order-7',
  steps: [
    { name: 'reserve', completed: true, compensate: 'release', policy },
    { name: 'charge', completed: true, compensate: 'refund', policy },
    { name: 'ship', completed: false, compensate: 'cancel', policy },
  ],
};
const done = [];
const result = await runCompensations(saga, {
  // Retried 5 times, then a dead letter; `signal` ends with the run's.
  refund: ({ signal }) => Promise.reject(Object.assign(new Error('payments is down'), { code: 'ECONNREFUSED' })),
  release: () => done.push('release'), // still runs after the refund gave up
});
assert.deepEqual(result.steps.map((s) => s.outcome), ['compensated', 'dead_lettered', 'not_completed']);
assert.equal(result.dead_letters[0].msg_id, 'order-7:charge:compensation');
assert.deepEqual(done, ['release']);
