// Compensation runs and dead-letter replays (declared in lib/api.d.ts;
// docs/compensation.md, docs/dead-letters.md). The core plans and decides
// (NativeCompensationRun, NativeDeadLetterReplay); this layer only calls what
// it is told to call and reports each outcome back. Values cross as the core's
// JSON (snake_case keys, the same in every runtime).
// RetryPolicy comes from lib/retrycore.ts (which re-exports this module): it is
// read only when a run starts, never while the modules evaluate.

import type { BackendCompensationRun, BackendDeadLetterReplay } from './surface';
import { host } from './generated.js';
import { abortSignal, bag, coded, read } from './limiters.js';
import * as rc from './retrycore.js';

type Json = Record<string, unknown>;

/** A value for the core: JSON text as it is, anything else stringified. */
function text(v: unknown, field: string): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    // Unserialisable (a cycle, a BigInt): the checks' invalid_type error naming `field`.
    return host().str(undefined, field);
  }
}

function fnArg<F>(v: unknown, field: string): F {
  if (typeof v !== 'function') throw coded(null, field);
  return v as F;
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

export class CompensationRun {
  #n: BackendCompensationRun;

  constructor(saga: object | string) {
    this.#n = new (host().n.NativeCompensationRun)(text(saga, 'saga'));
  }

  next(): Json | null {
    return this.#n.next();
  }

  record(outcome: object | string): Json | null {
    return this.#n.record(text(outcome, 'outcome'));
  }

  result(): Json {
    return this.#n.result();
  }
}

export class DeadLetterReplay {
  #n: BackendDeadLetterReplay;

  constructor(letters: unknown[] | string, options: object | string, wallNowMs?: number) {
    this.#n = new (host().n.NativeDeadLetterReplay)(text(letters, 'letters'), text(options, 'options'), host().wall(wallNowMs, 'wallNowMs'));
  }

  groups(): Json[] {
    return this.#n.groups();
  }

  nextBatch(): string[] {
    return this.#n.nextBatch();
  }

  record(msgId: string, ok: boolean, wallNowMs?: number): void {
    this.#n.record(host().str(msgId, 'msgId'), ok === true, host().wall(wallNowMs, 'wallNowMs'));
  }

  letters(): Json[] {
    return this.#n.letters();
  }

  audit(): Json {
    return this.#n.audit();
  }
}

/** A thrown value's class name, for a dead letter's `error_class`. */
function className(e: unknown): string {
  const c = e instanceof rc.RetryError && e.cause !== undefined ? e.cause : e;
  if (c !== null && typeof c === 'object') {
    const code = (c as { code?: unknown }).code;
    const name = (c as { name?: unknown }).name;
    if (typeof name === 'string' && name !== 'Error') return name;
    if (typeof code === 'string') return code;
    if (typeof name === 'string') return name;
  }
  return 'unknown';
}

function messageOf(e: unknown): string {
  const c = e instanceof rc.RetryError && e.cause !== undefined ? e.cause : e;
  return c instanceof Error ? c.message : String(c);
}

export async function runCompensations(
  saga: object | string,
  compensations: Record<string, (ctx: { attempt: number; signal: AbortSignal | undefined }) => unknown>,
  options?: { signal?: AbortSignal; wallClock?: () => number },
): Promise<Json> {
  const o = bag<{ signal?: AbortSignal; wallClock?: () => number }>(options, 'options');
  const signal = abortSignal(o.signal);
  const wall = o.wallClock === undefined ? Date.now : fnArg<() => number>(o.wallClock, 'wallClock');
  const fns = bag<Record<string, unknown>>(compensations, 'compensations');
  const run = new CompensationRun(saga);
  for (let p = run.next(); p !== null; p = run.next()) {
    if (signal?.aborted) throw aborted(signal);
    // A compensation the saga names but `compensations` lacks: `invalid_type` naming it.
    const fn = fnArg<(ctx: { attempt: number; signal: AbortSignal | undefined }) => unknown>(fns[p.compensate as string], `compensations.${String(p.compensate)}`);
    let attempts = 0;
    let first: number | undefined;
    let last = 0;
    try {
      await rc.RetryPolicy.fromJSON(p.policy as object).execute(
        async (ctx) => {
          attempts = ctx.attempt;
          try {
            return await fn({ attempt: ctx.attempt, signal: ctx.signal });
          } catch (e) {
            last = wall();
            first ??= last;
            throw e;
          }
        },
        { signal, idempotent: true },
      );
      run.record({ outcome: 'compensated', attempts });
    } catch (e) {
      // An abort ends the run where it is; any other failure is the policy giving up.
      if (signal?.aborted) throw e;
      run.record({
        outcome: 'exhausted',
        attempts: Math.max(attempts, 1),
        error_class: className(e),
        error_message: messageOf(e),
        first_failure_ms: first ?? last,
        last_failure_ms: last,
      });
    }
  }
  return run.result();
}

/** Marks each replayed letter as the core now has it: a `DeadLetter` through its methods, a plain object in place. */
function mark(letters: unknown[], replay: DeadLetterReplay): void {
  replay.letters().forEach((now, i) => {
    const given = letters[i];
    if (now.status !== 'replayed') return;
    if (given instanceof rc.DeadLetter) {
      if (given.status !== 'replayed') given.markReplayable().markReplayed();
    } else if (given !== null && typeof given === 'object') {
      Object.assign(given, { status: 'replayed', replayable: true });
    }
  });
}

export async function replayDeadLetters(
  letters: unknown[],
  replay: (letter: unknown, ctx: { signal: AbortSignal | undefined }) => unknown,
  options: { operator: string; signal?: AbortSignal; wallClock?: () => number; [key: string]: unknown },
): Promise<Json> {
  const { signal: s, wallClock, ...rest } = bag<{ operator: string; signal?: AbortSignal; wallClock?: () => number }>(options, 'options');
  const signal = abortSignal(s);
  const wall = wallClock === undefined ? Date.now : fnArg<() => number>(wallClock, 'wallClock');
  const call = fnArg<(letter: unknown, ctx: { signal: AbortSignal | undefined }) => unknown>(replay, 'replay');
  if (!read('letters', () => Array.isArray(letters))) throw coded(null, 'letters');
  const docs = read('letters', () => letters.map((l) => (l instanceof rc.DeadLetter ? l.toJSON() : l) as Json));
  const plan = new DeadLetterReplay(docs, rest, wall());
  const byId = new Map(docs.map((d, i) => [d.msg_id as string, letters[i]]));
  try {
    for (let batch = plan.nextBatch(); batch.length > 0; batch = plan.nextBatch()) {
      if (signal?.aborted) throw aborted(signal);
      // A batch's letters are replayed concurrently; the core decides on the batch as a whole.
      const oks = await Promise.all(
        batch.map(async (id) => {
          try {
            await call(byId.get(id), { signal });
            return true;
          } catch {
            return false;
          }
        }),
      );
      batch.forEach((id, i) => plan.record(id, oks[i], wall()));
      if (signal?.aborted) throw aborted(signal);
    }
  } finally {
    // An aborted replay still marks what it replayed before the abort.
    mark(letters, plan);
  }
  return plan.audit();
}
