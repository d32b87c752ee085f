// `retrycore/middleware`: idempotency for HTTP servers (docs/idempotency.md, "Middleware").
import type { Store } from '../stores/index';

/** An exporter of `retrycore/metrics` (Node): what records the core's samples under a name map. */
export interface MetricsExporter {
  readonly names: string;
  record(samples: { name: string; op: string; labels: Record<string, string>; value: number }[]): void;
}

/** Options of the middleware. */
export interface IdempotencyOptions<Conn = unknown> {
  /** The store (default: SQLite in the file `path`, with better-sqlite3 12.x). */
  store?: Store<Conn>;
  /** The default store's file (default `idempotency.db`). */
  path?: string;
  /** A connection per request (required with a SQL store other than the default). */
  connect?: () => Conn | Promise<Conn>;
  /** Gives a connection back (default: `conn.release()`). */
  close?: (conn: Conn) => unknown;
  /** The methods that take a key (default POST, PATCH). */
  methods?: string[];
  /** Answer 400 to such a request without a key (default false: it runs unprotected). */
  required?: boolean;
  /** The largest request body in bytes (default 1 MiB): larger gets 413. */
  maxBody?: number;
  /** RFC 6901 pointers of the JSON body fields the fingerprint covers (default: the whole body). */
  selected?: string[];
  /** Accept Stripe's bare token besides the sf-string (default true). */
  allowToken?: boolean;
  /** Time between lease renewals while the handler runs (default: a third of the lease). */
  heartbeatMs?: number;
  /** Exporters of `retrycore/metrics` counting each keyed request by outcome (executed, replayed, in_progress, mismatch). */
  metrics?: MetricsExporter | MetricsExporter[];
  /** The `operation` label the requests are counted under (default `default`). */
  operation?: string;
}

/** The middleware's settings and steps (shared by both forms). */
export declare class Idempotency<Conn = unknown> {
  constructor(options?: IdempotencyOptions<Conn>);
  readonly store: Store<Conn>;
}

/** Wraps a fetch handler so a keyed request runs at most once per key; extra arguments pass through. */
export declare function withIdempotency<A extends unknown[]>(
  handler: (req: Request, ...rest: A) => Response | Promise<Response>,
  options?: IdempotencyOptions | Idempotency,
): ((req: Request, ...rest: A) => Promise<Response>) & { idempotency: Idempotency };

/** Express middleware (mount it before body parsers). */
export declare function idempotency(options?: IdempotencyOptions | Idempotency): ((req: any, res: any, next: (err?: unknown) => void) => Promise<void>) & { idempotency: Idempotency };

/** Binds the middleware and the stores to a retrycore API (the wasm package's, on Workers and Deno). */
export declare function use(api: unknown): typeof import('./index');
