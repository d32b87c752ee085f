// retrycore for got 14 (docs/js.md, "HTTP clients"): `gotExtend(got, policy)` is
// `got.extend(...)` with got's retry off (`retry.limit` 0) and a handler that runs each
// request in a retrycore session. got sends a request once per `got()` call (a handler
// cannot send it again), so the handler makes each further attempt a new call of the
// instance with the same options. A request whose retry is on again (`retry.limit` above 0
// or its own `calculateDelay`, which got calls even at limit 0) warns. Streams are sent once.

import type { RetryPolicy } from '../api';
import { type IntegrationOptions, merged, run, warnStacking } from './common.js';

/** got's `Options`, as far as read here. */
interface GotOptions {
  method: string;
  isStream: boolean;
  signal?: AbortSignal;
  headers: Record<string, string | string[] | undefined>;
  context: Record<string, unknown>;
  retry: { limit: number; calculateDelay: (arg: { computedValue: number }) => number };
}

type Got = ((url: unknown, options?: unknown, defaults?: unknown) => Promise<unknown>) & {
  extend(...options: unknown[]): Got;
};

/** Marks the further attempts, which the handler passes straight through. */
const ATTEMPT = 'retrycoreAttempt';

/** got's `retry.calculateDelay` default (got/dist/source/core/options.js): anything else retries even at limit 0. */
function ownDelay(retry: GotOptions['retry']): boolean {
  try {
    return retry.calculateDelay({ computedValue: 0 }) !== 0;
  } catch {
    return true; // one that reads more than the default does is not the default
  }
}

/** `got.extend` with retrycore: `context: {retrycore: {...}}` overrides per request. */
export function gotExtend(got: Got, policy: RetryPolicy, options: IntegrationOptions = {}): Got {
  merged(policy, options, undefined);
  const instance: Got = got.extend({
    retry: { limit: 0 },
    handlers: [
      (opts: GotOptions, next: (o: GotOptions) => Promise<unknown>) => {
        if (opts.isStream || opts.context[ATTEMPT] === true) return next(opts);
        const o = merged(policy, options, opts.context.retrycore);
        if (opts.retry.limit > 0 || ownDelay(opts.retry)) warnStacking('got', 'retry.limit or retry.calculateDelay');
        const name = o.idempotencyHeader;
        const current = name === undefined ? undefined : opts.headers[name.toLowerCase()];
        return run(o, opts.method, typeof current === 'string' ? current : undefined, opts.signal, (ctx, header) => {
          if (header !== undefined) opts.headers[name!.toLowerCase()] = header;
          const more: Record<string, unknown> = { context: { ...opts.context, [ATTEMPT]: true } };
          if (ctx.signal) more.signal = ctx.signal;
          return ctx.attempt === 1 && !ctx.signal ? next(opts) : instance(undefined, more, opts);
        });
      },
    ],
  });
  return instance;
}
