// retrycore for undici (docs/js.md, "HTTP clients"): an interceptor for `Dispatcher.compose`,
//
//   const dispatcher = new Agent().compose(interceptor(policy));
//
// Each dispatch is one retrycore session. An attempt's response is held (what arrives of
// it kept in order) until the core has answered: a response it retries is aborted and the
// request dispatched again after the delay; the one it keeps is handed on, with what arrived
// of its body. An error the core does not retry reaches the caller unchanged; a session that
// ran out ends in a `RetryError`. A body that cannot be sent twice (a stream, an iterable)
// is dispatched once, outside any session. undici's own retry (`interceptors.retry`,
// `RetryAgent`) cannot be seen through `compose`: a request's `retryOptions` warns.

import type { RetryPolicy } from '../api';
import { type IntegrationOptions, merged, run, warnStacking } from './common.js';

/** undici's dispatch options, as far as read here. */
interface DispatchOptions {
  method: string;
  headers?: unknown;
  body?: unknown;
  retrycore?: unknown;
  retryOptions?: unknown;
  signal?: AbortSignal | null;
  [key: string]: unknown;
}

/** undici's controller of one dispatch (pause, resume, abort). */
interface Controller {
  abort(reason: unknown): void;
  pause(): void;
  resume(): void;
  readonly aborted?: boolean;
  readonly paused?: boolean;
  readonly reason?: unknown;
}

/** undici 7's handler API (interceptors always receive this form: `compose` wraps legacy handlers). */
interface Handler {
  onRequestStart?(controller: Controller, context: unknown): void;
  onRequestUpgrade?(controller: Controller, statusCode: number, headers: unknown, socket: unknown): void;
  onResponseStart?(controller: Controller, statusCode: number, headers: Record<string, string | string[]>, statusMessage?: string): void;
  onResponseData?(controller: Controller, chunk: Uint8Array): void;
  onResponseEnd?(controller: Controller, trailers: unknown): void;
  onResponseError?(controller: Controller, err: unknown): void;
}

type Dispatch = (opts: DispatchOptions, handler: Handler) => boolean;

/** What an attempt answers `execute`: undici's `request()` shape (`statusCode`, `headers`, `body`), which the core reads. */
interface Held {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: null;
  controller: Controller;
  context: unknown;
  statusMessage: string | undefined;
  /** What arrived before the core answered, handed on in order. */
  events: Array<[keyof Handler, unknown[]]>;
  /** Where further events go once the core kept this response. */
  target: Handler | null;
  /** Settles when the response ended or failed. */
  done: Promise<void>;
  end: () => void;
}

function replayable(body: unknown): boolean {
  return body == null || typeof body === 'string' || body instanceof Uint8Array;
}

/** undici's request headers as pairs (it takes an object, a flat `[name, value, …]` list or an iterable of pairs). */
function headerPairs(headers: unknown): Array<[string, unknown]> {
  const pairs: Array<[string, unknown]> = [];
  if (headers == null) return pairs;
  if (Array.isArray(headers) && !Array.isArray(headers[0])) {
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), headers[i + 1]]);
  } else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of headers as Iterable<[string, unknown]>) pairs.push([k, v]);
  } else {
    pairs.push(...Object.entries(headers as Record<string, unknown>));
  }
  return pairs;
}

/** `headers` as an object with `name: value` set. */
function withHeader(headers: unknown, name: string, value: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of headerPairs(headers)) if (k.toLowerCase() !== name.toLowerCase()) out[k] = v;
  out[name] = value;
  return out;
}

/** An interceptor for `Dispatcher.compose`: each dispatch runs in a retrycore session (`opts.retrycore` overrides per request). */
export function interceptor(policy: RetryPolicy, options: IntegrationOptions = {}): (dispatch: Dispatch) => Dispatch {
  merged(policy, options, undefined);
  return (dispatch) =>
    function retrycoreDispatch(opts, handler) {
      const { retrycore, ...rest } = opts;
      const o = merged(policy, options, retrycore);
      if (rest.retryOptions !== undefined) warnStacking('undici', 'retryOptions');
      if (!replayable(rest.body)) return dispatch(rest as DispatchOptions, handler);
      let held: Held | null = null;
      const name = o.idempotencyHeader;
      const current = name === undefined ? undefined : headerPairs(rest.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
      run(o, rest.method, typeof current === 'string' ? current : undefined, rest.signal, async (ctx, header) => {
        const retried = held as Held | null;
        held = null;
        if (retried !== null) {
          // The response the core retried goes first: its connection is free for this attempt.
          retried.controller.abort(new Error('retrycore: the response is retried'));
          await retried.done;
        }
        return new Promise<Held>((resolve, reject) => {
          let controller: Controller | null = null;
          let context: unknown;
          let mine: Held | null = null;
          const onAbort = () => controller?.abort(ctx.signal!.reason);
          ctx.signal?.addEventListener('abort', onAbort, { once: true });
          const settle = () => ctx.signal?.removeEventListener('abort', onAbort);
          const forward = (event: keyof Handler, args: unknown[]) => {
            if (mine === null) return;
            if (mine.target === null) mine.events.push([event, args]);
            else (mine.target[event] as ((...a: unknown[]) => void) | undefined)?.call(mine.target, mine.controller, ...args);
          };
          const attemptOpts = header === undefined ? rest : { ...rest, headers: withHeader(rest.headers, name!, header) };
          dispatch(attemptOpts as DispatchOptions, {
            onRequestStart(c, cx) {
              controller = c;
              context = cx;
              if (ctx.signal?.aborted) c.abort(ctx.signal.reason);
            },
            onRequestUpgrade(c, statusCode, headers, socket) {
              settle();
              handler.onRequestStart?.(c, context);
              handler.onRequestUpgrade?.(c, statusCode, headers, socket);
            },
            onResponseStart(c, statusCode, headers, statusMessage) {
              settle();
              // Not paused: a paused response on a connection the server closes makes undici
              // open another; what arrives before the core answers is kept in order.
              let end = () => {};
              const done = new Promise<void>((r) => (end = r));
              mine = { statusCode, headers, body: null, controller: c, context, statusMessage, events: [], target: null, done, end };
              held = mine;
              resolve(mine);
            },
            onResponseData(_c, chunk) {
              forward('onResponseData', [chunk]);
            },
            onResponseEnd(_c, trailers) {
              forward('onResponseEnd', [trailers]);
              (mine as Held | null)?.end();
            },
            onResponseError(_c, err) {
              settle();
              if (mine === null) reject(err);
              else {
                forward('onResponseError', [err]);
                (mine as Held).end();
              }
            },
          });
        });
      }).then(
        (kept) => {
          // The core kept this response: hand it on, then what arrived of it, then the rest.
          handler.onRequestStart?.(kept.controller, kept.context);
          handler.onResponseStart?.(kept.controller, kept.statusCode, kept.headers, kept.statusMessage);
          kept.target = handler;
          for (const [event, args] of kept.events) (handler[event] as ((...a: unknown[]) => void) | undefined)?.call(handler, kept.controller, ...args);
          kept.events = [];
        },
        (err) => {
          // An error the core does not retry, or the session's end: the last held response goes.
          const h = held as Held | null;
          h?.controller.abort(err);
          const c: Controller = h?.controller ?? { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null };
          handler.onRequestStart?.(c, h?.context);
          handler.onResponseError?.(c, err);
        },
      );
      return true;
    };
}
