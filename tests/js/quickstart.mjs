// README "Quick start: Node": runs as written (make -C bindings-node test runs it
// against the installed tarball). A local server answers 503 twice, then 200.
import http from 'node:http';
import { RetryPolicy, RetryError } from 'retrycore';

let calls = 0;
const server = http.createServer((req, res) => {
  calls += 1;
  if (calls <= 2) {
    res.writeHead(503, { 'retry-after-ms': '20' }).end('busy');
  } else {
    res.end(`ok, key ${req.headers['idempotency-key']}`);
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/orders/1001`;

const policy = new RetryPolicy({
  maxAttempts: 4,
  initial: 100, // ms, like setTimeout
  maxDelay: 2_000,
  jitter: 'full',
  deadline: 10_000,
  onRetry: ({ attempt, delay, category }) => console.log(`retry: attempt ${attempt} in ${delay.toFixed(1)} ms (${category})`),
});

try {
  // A 503 Response is retried (honouring Retry-After); the key is the same on every attempt.
  const res = await policy.execute(({ key, signal }) => fetch(url, { headers: { 'idempotency-key': key }, signal }), {
    method: 'GET',
  });
  console.log(res.status, await res.text());
} catch (e) {
  if (e instanceof RetryError) console.error(`gave up: ${e.reason} after ${e.attempts} attempts`);
  throw e;
} finally {
  server.close();
}
console.log(policy.counters().retry_attempts_total, 'attempts');
