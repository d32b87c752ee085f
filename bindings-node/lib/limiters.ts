// Limiters' public JS API (declared in lib/api.d.ts, docs/limiters.md): the
// core decides proceed / delay / queue / reject; this layer only waits — a
// timer for a reserved delay, a promise a `release` resolves for a queued
// slot — and an AbortSignal ends either wait, giving the permit back.
// It imports no value from lib/retrycore.ts (which re-exports it), so the
// ES module build has no cycle to evaluate.

import type { LimiterAsk, LimiterCancel, LimiterDecision, LimiterEnd, LimiterOptions } from './api';
import type { BackendLimiter } from './surface';
import { host } from './generated.js';

const toSnake = (k: string): string => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const toCamel = (k: string): string => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The core's JSON (snake_case keys) with the public camelCase keys. */
function camel<T>(v: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [toCamel(k), x])) as T;
}

function opt(v: unknown, field: string): number | undefined {
  return v === undefined || v === null ? undefined : host().num(v, field);
}

function optStr(v: unknown, field: string): string | undefined {
  return v === undefined || v === null ? undefined : host().str(v, field);
}

const kBrand = Symbol.for('retrycore.error');

/** A thrown value as a retrycore error: one of ours passes; anything else becomes `invalid_type` naming `field`. */
export function coded(e: unknown, field: string): unknown {
  try {
    if (e != null && typeof e === 'object' && (e as { [kBrand]?: unknown })[kBrand] === true) return e;
  } catch {
    // A revoked proxy is not one of ours.
  }
  const t = new TypeError(`${field} could not be read`);
  for (const [k, v] of [['code', 'invalid_type'], ['field', field]]) {
    Object.defineProperty(t, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  Object.defineProperty(t, kBrand, { value: true });
  return t;
}

/** Runs `f`, raising what it throws as a retrycore error about `field`. */
export function read<T>(field: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw coded(e, field);
  }
}

/** Reads an options bag: undefined is empty; anything else must be a plain object. */
export function bag<T extends object>(v: unknown, field: string): Partial<T> {
  if (v === undefined) return {};
  if (v === null || typeof v !== 'object' || read(field, () => Array.isArray(v))) throw coded(null, field);
  return read(field, () => ({ ...(v as T) }));
}

export function abortSignal(v: unknown): AbortSignal | undefined {
  if (v === undefined) return undefined;
  if (typeof AbortSignal !== 'undefined' && read('signal', () => v instanceof AbortSignal)) return v as AbortSignal;
  throw coded(null, 'signal');
}

export class LimiterRejectedError extends Error {
  code = 'limiter_rejected';
  field = '';
  limiter: string;
  reason: string;
  retryAfter: number | null;
  constructor(message: string, limiter: string, reason: string, retryAfter: number | null = null) {
    super(message);
    this.limiter = limiter;
    this.reason = reason;
    this.retryAfter = retryAfter;
  }
}
Object.defineProperty(LimiterRejectedError.prototype, 'name', { value: 'LimiterRejectedError', writable: true, configurable: true });
// `isRetrycoreError` recognises it, as every error of the package.
Object.defineProperty(LimiterRejectedError.prototype, kBrand, { value: true });

type Rejected = { limiter: string; reason: string; retryAfter: number | null };

function rejected(r: Rejected): LimiterRejectedError {
  const after = r.retryAfter === null ? '' : `; retry after ${r.retryAfter} ms`;
  return new LimiterRejectedError(`limiter ${JSON.stringify(r.limiter)} rejected the call: ${r.reason}${after}`, r.limiter, r.reason, r.retryAfter);
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

const kWrap = Symbol('retrycore.limiter');

export class Limiter {
  #n: BackendLimiter;
  /** The queued waiters' wake-ups, by ticket. */
  #waiters = new Map<number, () => void>();

  constructor(options: LimiterOptions, now?: number) {
    if (options !== null && typeof options === 'object' && read('options', () => kWrap in options)) {
      this.#n = (options as unknown as { [kWrap]: BackendLimiter })[kWrap];
      return;
    }
    const o = bag<LimiterOptions>(options, 'options');
    const text = read('options', () => JSON.stringify(Object.fromEntries(Object.entries(o).map(([k, v]) => [toSnake(k), v]))));
    this.#n = new (host().n.NativeLimiter)(text, true, host().time(now));
  }

  static fromJSON(doc: object | string, now?: number): Limiter {
    const text = typeof doc === 'string' ? doc : read('doc', () => JSON.stringify(bag<object>(doc, 'doc')));
    const native = new (host().n.NativeLimiter)(text, false, host().time(now));
    return new Limiter({ [kWrap]: native } as unknown as LimiterOptions);
  }

  get name(): string {
    return this.#n.name;
  }

  get kind(): string {
    return this.#n.kind;
  }

  get inFlight(): number {
    return this.#n.inFlight;
  }

  acquire(ask?: LimiterAsk): LimiterDecision {
    const a = bag<LimiterAsk>(ask, 'ask');
    const d = this.#n.acquire(host().time(a.now), optStr(a.attempt, 'attempt'), opt(a.within, 'within'));
    return camel<LimiterDecision>(d);
  }

  release(end?: LimiterEnd): void {
    const e = bag<LimiterEnd>(end, 'end');
    const t = this.#n.release(host().time(e.now), opt(e.rtt, 'rtt'), optStr(e.signal, 'signal'), optStr(e.category, 'category'));
    if (t !== null) {
      const wake = this.#waiters.get(t);
      this.#waiters.delete(t);
      wake?.();
    }
  }

  cancel(ticket: number, now?: number): LimiterCancel {
    return camel<LimiterCancel>(this.#n.cancel(host().num(ticket, 'ticket'), host().time(now)));
  }

  state(now?: number): Record<string, unknown> {
    return camel<Record<string, unknown>>(this.#n.state(host().time(now)));
  }

  async wait(ask?: Omit<LimiterAsk, 'now'> & { signal?: AbortSignal }): Promise<void> {
    const a = bag<Omit<LimiterAsk, 'now'> & { signal?: AbortSignal }>(ask, 'ask');
    const signal = abortSignal(a.signal);
    if (signal?.aborted) throw aborted(signal);
    const d = this.acquire({ attempt: a.attempt, within: a.within });
    switch (d.decision) {
      case 'proceed':
        return;
      case 'reject':
        throw rejected(d);
      case 'delay':
        return this.#sleep(d.wait, d.ticket, signal);
      case 'queued':
        return this.#queue(d.ticket, d.maxWait, signal);
    }
  }

  /** Sleeps a reserved delay; an abort returns the permit. */
  #sleep(ms: number, ticket: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        this.cancel(ticket);
        reject(aborted(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Waits for a `release` to hand this ticket a slot, at most `maxWait` ms. */
  #queue(ticket: number, maxWait: number | null, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      // A wait that ends without the slot leaves the queue; when `release`
      // handed the slot over first (`not_waiting`), it is ours: given back on
      // an abort, taken on a timeout.
      const give = (reason: () => unknown): void => {
        done();
        this.#waiters.delete(ticket);
        const c = this.cancel(ticket);
        if (c.cancelled === 'removed') return reject(reason === timeout ? rejected(c) : reason());
        if (reason === timeout) return resolve();
        this.release({ signal: 'ignore' });
        reject(reason());
      };
      const timeout = (): unknown => undefined;
      const onAbort = (): void => give(() => aborted(signal!));
      this.#waiters.set(ticket, () => {
        done();
        resolve();
      });
      if (maxWait !== null) timer = setTimeout(() => give(timeout), maxWait);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async run<T>(fn: () => T | Promise<T>, ask?: Omit<LimiterAsk, 'now'> & { signal?: AbortSignal }): Promise<T> {
    if (typeof fn !== 'function') throw coded(null, 'fn');
    await this.wait(ask);
    const start = performance.now();
    try {
      const out = await fn();
      this.release({ rtt: performance.now() - start, signal: 'success' });
      return out;
    } catch (e) {
      const rtt = performance.now() - start;
      const category = (e as { category?: unknown } | null)?.category;
      try {
        this.release({ rtt, ...(typeof category === 'string' ? { category } : { signal: 'ignore' }) });
      } catch {
        // Not one of the core's categories: the failure says nothing about load.
        this.release({ rtt, signal: 'ignore' });
      }
      throw e;
    }
  }
}
