// retrycore for fetch (docs/js.md, "HTTP clients"): `wrapFetch(fetch, policy)` is a fetch
// whose every call is one retrycore session. Each attempt sends a clone of the request (a
// stream body is buffered by `clone()`), with the attempt's signal; a response the core
// retries has its body cancelled. fetch has no retry of its own, but a dispatcher may (undici's
// RetryAgent): that warns.

import type { RetryPolicy } from '../api';
import { type IntegrationOptions, merged, run, warnStacking } from './common.js';

type Fetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** `fetch` with retrycore: `init.retrycore` overrides the options for one request. */
export function wrapFetch(fetch: Fetch, policy: RetryPolicy, options: IntegrationOptions = {}): Fetch {
  if (typeof fetch !== 'function') throw new TypeError('wrapFetch: fetch must be a function');
  merged(policy, options, undefined);
  // Async, as fetch: a bad option rejects the call.
  return async (input, init) => {
    const { retrycore, ...rest } = (init ?? {}) as RequestInit & { retrycore?: unknown; dispatcher?: { constructor?: { name?: string } } };
    const o = merged(policy, options, retrycore);
    if ((rest as { dispatcher?: { constructor?: { name?: string } } }).dispatcher?.constructor?.name === 'RetryAgent') warnStacking('undici RetryAgent', 'dispatcher');
    const base = new Request(input, rest);
    const name = o.idempotencyHeader;
    let last: Response | undefined;
    return run(o, base.method, name === undefined ? null : base.headers.get(name), rest.signal ?? (input instanceof Request ? input.signal : undefined), async (ctx, header) => {
      void last?.body?.cancel().catch(() => undefined); // the response the core retried
      const req = base.clone();
      if (header !== undefined) req.headers.set(name!, header);
      last = await fetch(req, ctx.signal ? { signal: ctx.signal } : undefined);
      return last;
    });
  };
}
