import { RetryPolicy } from 'retrycore';
import client from 'prom-client';
import assert from 'node:assert/strict';

const policy = new RetryPolicy({ name: 'payments', maxAttempts: 3 });
// --- README.md
import { instrument, PrometheusExporter } from 'retrycore/metrics';
instrument(policy, new PrometheusExporter()); // prom-client's register; { names: 'resilience4j' | 'polly' } keeps those dashboards
// --- end
await policy.execute(() => 'ok');
assert.match(await client.register.metrics(), /retry_attempts_total\{attempt="1",operation="payments"\} 1/);
