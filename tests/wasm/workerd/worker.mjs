// A Cloudflare Worker module (run by workerd through miniflare) that imports
// the package by name — resolved, as wrangler would, through the package's
// exports map (the `workerd` condition) — and answers requests:
//
//   GET /decide?status=503&retryAfter=2   what a policy decides about an upstream
//                                         failure: the decision as JSON, and a
//                                         Retry-After header when it retries
//   GET /vectors                          every vector file through the shared runner
//   GET /execute?target=<url>             policy.execute with a real fetch to <url>
//
// The policy is built inside the handler: Workers forbid crypto.getRandomValues
// (a policy's entropy) at global scope.
import * as rc from 'retrycore-wasm';
import { runVectors, executeFlaky } from './harness/suite.mjs';
import runner from './gen/vectors.test.mjs';
import vectorsText from './gen/vectors.txt';

export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/decide') {
        const policy = new rc.RetryPolicy({ maxAttempts: 3, initial: 100, jitter: 'none' });
        const session = policy.session({ key: rc.deriveKey('order-1001', 'charge', 'v1') });
        const gate = session.beforeAttempt();
        const headers = url.searchParams.has('retryAfter') ? [['retry-after', url.searchParams.get('retryAfter')]] : [];
        const decision = session.onFailure({ status: Number(url.searchParams.get('status')), headers, method: 'POST' });
        const body = { gate, decision, key: session.key, verdict: rc.classify(Number(url.searchParams.get('status'))), core: rc.coreVersion() };
        const out = decision.action === 'retry' ? { 'retry-after': String(Math.ceil(decision.delay / 1000)) } : {};
        return Response.json(body, { status: decision.action === 'retry' ? 503 : 200, headers: out });
      }
      if (url.pathname === '/vectors') {
        return Response.json(await runVectors({ api: rc, files: JSON.parse(vectorsText), runner }));
      }
      if (url.pathname === '/execute') {
        return Response.json(await executeFlaky(rc, url.searchParams.get('target')));
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return Response.json({ error: String((e && e.stack) || e) }, { status: 500 });
    }
  },
};
