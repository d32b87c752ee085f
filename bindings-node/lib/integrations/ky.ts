// retrycore for ky (docs/js.md, "HTTP clients"): `kyExtend(ky, policy)` is `ky.extend(...)`
// with ky's retry off (`retry: 0`) and `wrapFetch` as its fetch, so every ky call is one
// retrycore session. ky's `timeout` bounds the whole call (every attempt and delay); a
// request that turns ky's retry on again warns.

import type { RetryPolicy } from '../api';
import { type IntegrationOptions, warnStacking } from './common.js';
import { wrapFetch } from './fetch.js';

interface Ky {
  extend(options: unknown): Ky;
}

/** `ky.extend` with retrycore over `fetch` (default the global one). */
export function kyExtend(ky: Ky, policy: RetryPolicy, options: IntegrationOptions & { fetch?: typeof fetch } = {}): Ky {
  const { fetch: base, ...rest } = options;
  return ky.extend({
    retry: 0,
    fetch: wrapFetch(base ?? globalThis.fetch, policy, rest),
    hooks: {
      beforeRequest: [
        (_request: Request, opts: { retry: { limit: number } }) => {
          if (opts.retry.limit > 0) warnStacking('ky', 'retry');
        },
      ],
    },
  });
}
