'use strict';
// retrycore/metrics against the real libraries (issue 20): a scripted run through an
// instrumented policy, then prom-client's exposition text and an OpenTelemetry in-memory
// metric exporter, asserting names, labels and values. The samples themselves are the core's,
// pinned in every runtime by tests/vectors/metrics; this checks how the exporters record them.
// The module ships in the Node package only (RETRYCORE_IMPL=node).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { createRequire } = require('node:module');
const rc = require('./impl.cjs');

const root = path.join(__dirname, '..', '..');
const pkgRequire = createRequire(path.join(root, 'bindings-node', 'package.json'));
const skip = rc.IMPL !== 'node' ? 'retrycore/metrics ships in the Node package' : false;

/** Three operations of policy `payments`: a first-try success, a success after one retry, a give-up after 3 attempts. */
async function scripted(policy) {
  for (const failures of [0, 1, 3]) {
    let n = 0;
    await policy
      .execute(() => {
        if (n++ < failures) throw new TypeError('fetch failed');
        return 'ok';
      }, { method: 'GET' })
      .catch((e) => assert.ok(e instanceof rc.RetryError, String(e)));
  }
}

function policy() {
  return new rc.RetryPolicy({ name: 'payments', jitter: 'none', initial: 0, maxAttempts: 3 });
}

test('prom-client: the exposition text of a scripted run (default names)', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const registry = new client.Registry();
  await scripted(instrument(policy(), new PrometheusExporter({ registry })));
  const text = await registry.metrics();
  const line = (s) => assert.ok(text.split('\n').includes(s), `${s}\nnot in:\n${text}`);
  line('# TYPE retry_attempts_total counter');
  line('retry_attempts_total{attempt="1",operation="payments"} 3');
  line('retry_attempts_total{attempt="2",operation="payments"} 2');
  line('retry_attempts_total{attempt="3",operation="payments"} 1');
  line('retry_exhausted_total{operation="payments",reason="attempts_exhausted"} 1');
  line('retry_success_after_retry_total{operation="payments"} 1');
  line('# TYPE operation_duration_seconds histogram');
  line('operation_duration_seconds_count{operation="payments",retried="false"} 1');
  line('operation_duration_seconds_count{operation="payments",retried="true"} 2');
  line('operation_duration_seconds_bucket{le="60",operation="payments",retried="true"} 2');
});

test('prom-client: the resilience4j map keeps resilience4j-micrometer dashboards working', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const registry = new client.Registry();
  await scripted(instrument(policy(), new PrometheusExporter({ registry, names: 'resilience4j' })));
  const text = await registry.metrics();
  for (const [kind, n] of [['successful_without_retry', 1], ['successful_with_retry', 1], ['failed_with_retry', 1]]) {
    assert.ok(text.includes(`resilience4j_retry_calls{kind="${kind}",name="payments"} ${n}`), `${kind}\n${text}`);
  }
  assert.ok(!text.includes('retry_attempts_total'), 'only the map\'s names');
  assert.throws(() => new PrometheusExporter({ registry, names: 'micrometer' }), (e) => e.code === 'invalid_value' && e.field === 'names');
});

test('OpenTelemetry: an in-memory metric exporter reads the same run', { skip }, async () => {
  const sdk = pkgRequire('@opentelemetry/sdk-metrics');
  const { OpenTelemetryExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const memory = new sdk.InMemoryMetricExporter(sdk.AggregationTemporality.CUMULATIVE);
  const reader = new sdk.PeriodicExportingMetricReader({ exporter: memory, exportIntervalMillis: 3_600_000 });
  const provider = new sdk.MeterProvider({ readers: [reader] });
  await scripted(instrument(policy(), new OpenTelemetryExporter({ meter: provider.getMeter('retrycore') })));
  await reader.forceFlush();
  const metrics = memory.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  const byName = (n) => metrics.find((m) => m.descriptor.name === n);
  const points = (n) => byName(n).dataPoints.map((p) => [p.attributes, p.value]);
  assert.deepEqual(
    points('retry_attempts_total').sort((a, b) => a[0].attempt.localeCompare(b[0].attempt)),
    [[{ operation: 'payments', attempt: '1' }, 3], [{ operation: 'payments', attempt: '2' }, 2], [{ operation: 'payments', attempt: '3' }, 1]],
  );
  assert.deepEqual(points('retry_exhausted_total'), [[{ operation: 'payments', reason: 'attempts_exhausted' }, 1]]);
  const d = byName('operation_duration_seconds');
  assert.equal(d.descriptor.unit, 's');
  const retried = d.dataPoints.find((p) => p.attributes.retried === 'true');
  assert.equal(retried.value.count, 2);
  assert.deepEqual(retried.value.buckets.boundaries, rc.hostTables().metrics.maps.default.find((i) => i.name === 'operation_duration_seconds').buckets);
  await provider.shutdown();
});

test("README.md's two lines are examples/observability/metrics.mjs's, and it runs", { skip }, async () => {
  const fs = require('node:fs');
  const text = fs.readFileSync(path.join(root, 'examples', 'observability', 'metrics.mjs'), 'utf8');
  const marked = text.split('// --- README.md\n')[1].split('// --- end\n')[0];
  assert.ok(fs.readFileSync(path.join(root, 'README.md'), 'utf8').includes('```js\n' + marked + '```'), 'README.md quotes it');
  const metrics = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const body = text
    .replace(/^import \{([^}]*)\} from 'retrycore';$/m, (_, names) => `const {${names}} = rc;`)
    .replace(/^import \{([^}]*)\} from 'retrycore\/metrics';$/m, (_, names) => `const {${names}} = metrics;`)
    .replace(/^import client from 'prom-client';$/m, 'const client = pkgRequire("prom-client");')
    .replace(/^import assert from 'node:assert\/strict';$/m, '');
  await new Function('rc', 'metrics', 'pkgRequire', 'assert', `return (async () => {\n${body}\n})();`)(rc, metrics, pkgRequire, assert);
});

test('prom-client: a breaker\'s state at attach and its transitions (default and polly names)', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const registry = new client.Registry();
  const polly = new client.Registry();
  const changes = [];
  const p = new rc.RetryPolicy({ name: 'payments', maxAttempts: 1, breaker: { kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 } });
  p.onStateChange = (t) => changes.push(`${t.from}->${t.to}`);
  instrument(p, [new PrometheusExporter({ registry }), new PrometheusExporter({ registry: polly, names: 'polly' })]);
  const before = await registry.metrics();
  assert.ok(before.split('\n').includes('circuit_breaker_state{breaker="payments",state="closed"} 1'), before);
  for (let i = 0; i < 2; i++) await assert.rejects(p.execute(() => { throw new TypeError('fetch failed'); }, { method: 'GET' }));
  assert.deepEqual(changes, ['closed->open'], 'the caller\'s hook still runs');
  const text = await registry.metrics();
  const line = (s, t = text) => assert.ok(t.split('\n').includes(s), `${s}\nnot in:\n${t}`);
  line('circuit_breaker_transitions_total{breaker="payments",from="closed",to="open"} 1');
  line('circuit_breaker_state{breaker="payments",state="open"} 1');
  line('circuit_breaker_state{breaker="payments",state="closed"} 0');
  line('resilience_polly_strategy_events_total{event_name="OnCircuitOpened",event_severity="Error",pipeline_name="payments",strategy_name="CircuitBreaker"} 1', await polly.metrics());
  assert.throws(() => instrument(p, [{}]), (e) => e.code === 'invalid_type' && e.field === 'exporters[0]');
});

test('prom-client: the idempotency middleware counts each keyed request by outcome', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const { withIdempotency } = require(path.join(root, 'bindings-node', 'lib', 'middleware', 'index.cjs'));
  const { MemoryStore } = require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs'));
  const registry = new client.Registry();
  const handler = withIdempotency(async () => new Response('charged', { status: 201 }), { store: new MemoryStore(), metrics: new PrometheusExporter({ registry }), operation: 'orders' });
  const post = (key, body) => handler(new Request('http://x/charges', { method: 'POST', headers: { 'idempotency-key': `"${key}"`, 'content-type': 'application/json' }, body }));
  assert.equal((await post('k1', '{"a":1}')).status, 201);
  assert.equal((await post('k1', '{"a":1}')).status, 201);
  assert.equal((await post('k1', '{"a":2}')).status, 422);
  await post('k2', '{"a":1}');
  const text = await registry.metrics();
  const line = (s) => assert.ok(text.split('\n').includes(s), `${s}\nnot in:\n${text}`);
  line('idempotency_requests_total{operation="orders",outcome="executed"} 2');
  line('idempotency_requests_total{operation="orders",outcome="replayed"} 1');
  line('idempotency_requests_total{operation="orders",outcome="mismatch"} 1');
  assert.throws(() => withIdempotency(() => new Response(''), { store: new MemoryStore(), metrics: [{}] }), (e) => e.code === 'invalid_type' && e.field === 'metrics[0]');
});

test('prom-client: attempt durations (Polly\'s attempt.duration, resilience4j\'s breaker calls)', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const polly = new client.Registry();
  const r4j = new client.Registry();
  const p = new rc.RetryPolicy({ name: 'payments', jitter: 'none', initial: 0, maxAttempts: 3, breaker: { kind: 'consecutive', failureThreshold: 100 } });
  await scripted(instrument(p, [new PrometheusExporter({ registry: polly, names: 'polly' }), new PrometheusExporter({ registry: r4j, names: 'resilience4j' })]));
  const text = await polly.metrics();
  const line = (s, t = text) => assert.ok(t.split('\n').includes(s), `${s}\nnot in:\n${t}`);
  const h = 'resilience_polly_strategy_attempt_duration_milliseconds_count';
  const l = (name, sev, n, handled) => `{attempt_handled="${handled}",attempt_number="${n}",event_name="${name}",event_severity="${sev}",pipeline_name="payments",strategy_name="Retry"}`;
  // Six attempts: three first tries (two failed), two second ones (one failed), one third (failed, the end).
  line(`${h}${l('ExecutionAttempt', 'Information', 0, false)} 1`);
  line(`${h}${l('ExecutionAttempt', 'Warning', 0, true)} 2`);
  line(`${h}${l('ExecutionAttempt', 'Information', 1, false)} 1`);
  line(`${h}${l('ExecutionAttempt', 'Warning', 1, true)} 1`);
  line(`${h}${l('ExecutionAttempt', 'Warning', 2, true)} 1`);
  const t4 = await r4j.metrics();
  line('resilience4j_circuitbreaker_calls_seconds_count{kind="successful",name="payments"} 2', t4);
  // Each failed attempt: three retries and the give-up.
  line('resilience4j_circuitbreaker_calls_seconds_count{kind="failed",name="payments"} 4', t4);
});

test('OpenTelemetry: spans of resent requests carry http.request.resend_count (wrapFetch)', { skip }, async () => {
  const http = require('node:http');
  const api = pkgRequire('@opentelemetry/api');
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = pkgRequire('@opentelemetry/sdk-trace-base');
  const { AsyncLocalStorageContextManager } = pkgRequire('@opentelemetry/context-async-hooks');
  const { markResend, RESEND_COUNT } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const { wrapFetch } = require(path.join(root, 'bindings-node', 'dist', 'integrations', 'index.js'));
  assert.equal(RESEND_COUNT, 'http.request.resend_count');
  assert.equal(RESEND_COUNT, rc.hostTables().metrics.resend_count, "the core's name");
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('test');
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const statuses = [503, 503, 200];
  const server = http.createServer((req, res) => res.writeHead(statuses.shift()).end());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    tracer.startActiveSpan('first', (span) => { assert.equal(markResend(1), false); span.end(); });
    tracer.startActiveSpan('third', (span) => { assert.equal(markResend(3), true); span.end(); });
    assert.equal(markResend(2), false, 'no active span');
    const ended = memory.getFinishedSpans().find((s) => s.name === 'third');
    assert.equal(markResend(2, ended), false, 'ended: not recording');

    // wrapFetch marks the active span at each resent attempt: what each attempt sent under.
    const seen = [];
    const fetch = wrapFetch((req, init) => {
      seen.push(api.trace.getActiveSpan()?.attributes[RESEND_COUNT]);
      return globalThis.fetch(req, init);
    }, new rc.RetryPolicy({ jitter: 'none', initial: 0, maxAttempts: 3 }));
    const url = `http://127.0.0.1:${server.address().port}/price`;
    const status = await tracer.startActiveSpan('GET /price', async (span) => {
      try { return (await fetch(url)).status; } finally { span.end(); }
    });
    assert.equal(status, 200);
    assert.deepEqual(seen, [undefined, 1, 2]);
    const got = Object.fromEntries(memory.getFinishedSpans().map((s) => [s.name, { ...s.attributes }]));
    assert.deepEqual(got, { first: {}, third: { [RESEND_COUNT]: 2 }, 'GET /price': { [RESEND_COUNT]: 2 } });
  } finally {
    api.context.disable();
    server.close();
  }
});

test('prom-client: a first attempt refused before anything ran is counted (default and resilience4j names)', { skip }, async () => {
  const client = pkgRequire('prom-client');
  const { PrometheusExporter, instrument } = require(path.join(root, 'bindings-node', 'dist', 'metrics.js'));
  const registry = new client.Registry();
  const r4j = new client.Registry();
  const p = new rc.RetryPolicy({ name: 'payments', maxAttempts: 1, breaker: { name: 'db', kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 } });
  instrument(p, [new PrometheusExporter({ registry }), new PrometheusExporter({ registry: r4j, names: 'resilience4j' })]);
  for (let i = 0; i < 2; i++) await assert.rejects(p.execute(() => { throw new TypeError('fetch failed'); }, { method: 'GET' }));
  let ran = 0;
  await assert.rejects(p.execute(() => { ran++; }), (e) => e instanceof rc.CircuitOpenError);
  assert.equal(ran, 0);
  const text = await registry.metrics();
  const line = (s, t = text) => assert.ok(t.split('\n').includes(s), `${s}\nnot in:\n${t}`);
  line('retry_rejected_total{operation="payments",reason="breaker_open"} 1');
  line('retry_attempts_total{attempt="1",operation="payments"} 2');
  line('operation_duration_seconds_count{operation="payments",retried="false"} 3');
  const t4 = await r4j.metrics();
  line('resilience4j_retry_calls{kind="failed_without_retry",name="payments"} 3', t4);
  line('resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted",name="db"} 1', t4);
});
