// README "Quick start: browsers and edge", the page/worker snippet, made to
// run: the package test runs it in Node against the installed tarball (in
// Node init() is a no-op; tests/wasm/chromium.test.mjs covers the browser's
// init()). A local server answers 503 + Retry-After twice, then 200.
import http from 'node:http';
import { init, RetryPolicy, RetryError, isRetrycoreError } from 'retrycore-wasm';

let calls = 0;
const server = http.createServer((req, res) => {
  calls += 1;
  if (calls <= 2) res.writeHead(503, { 'retry-after': '0' }).end('busy');
  else res.end(`created, key ${req.headers['idempotency-key']}`);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/api/orders`;

// ---- from the README
await init(); // browsers and workers: fetches the .wasm next to the module; a no-op where it is loaded

const policy = new RetryPolicy({ maxAttempts: 4, initial: 100, maxDelay: 2_000, deadline: 10_000 });
try {
  const res = await policy.execute(
    ({ key, signal }) => fetch(url, { method: 'POST', body: '{"sku":"a-1"}', headers: { 'Idempotency-Key': key }, signal }),
    { idempotencyKeySent: true }, // the server deduplicates on the key: a POST may be retried
  );
  console.log(res.status, await res.text());
} catch (e) {
  if (e instanceof RetryError) console.error(`gave up: ${e.reason} after ${e.attempts} attempts`);
  else if (isRetrycoreError(e)) console.error(e.code, e.message);
  throw e;
}
// ---- end of the README snippet
server.close();
if (calls !== 3) throw new Error(`expected 3 calls, got ${calls}`);
console.log('quickstart: ok');
