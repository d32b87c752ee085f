// `retrycore/stores`: idempotency stores running the core's store protocol with the host's
// drivers (docs/idempotency.md, "Stores").
import type { IdempotencyRecord, RecordConfig, RecordDecision } from '../../index';

/** The core's store protocol document (`hostTables().store_protocol`). */
export declare const PROTOCOL: Record<string, any>;

/** A response to store: `{status, headers: [[name, value]], body}`. */
export interface StoredResponse {
  status?: number;
  headers?: Array<[string, string]>;
  body?: unknown;
}

/** What `claim()` got: the core's decision and, for an executing request, the fenced claim. */
export declare class Claim<Conn = unknown> {
  readonly key: string;
  readonly storageKey: string;
  /** The core's decision (`decideRecord`'s result). */
  decision: RecordDecision;
  /** The stored record: the claim while executing, the found record otherwise. */
  record: IdempotencyRecord | null;
  completed: boolean;
  /** Whether this request holds the key and runs. */
  get executes(): boolean;
  /** The HTTP answer of a request that does not run (409, 422/400), else null. */
  get http(): RecordDecision['http'];
  /** The fencing token of the claim. */
  get fence(): number;
  /** The business transaction: `fn(tx)` must call `complete()`; commits after it, rolls back when it throws. */
  transaction<T>(fn: (tx: Conn) => Promise<T> | T): Promise<T>;
  /** Stores the outcome with the fencing check; throws `IdempotencyError` (`stale_fence`) when the claim was lost. */
  complete(response?: StoredResponse | null, options?: { failureCategory?: string | null; nowMs?: number }): Promise<IdempotencyRecord>;
  /** Extends the lease (a heartbeat, on another connection); false when the claim was lost. */
  renew(conn?: Conn, nowMs?: number): Promise<boolean>;
  /** Ends the lease without an outcome: the next request takes over with fence + 1. */
  release(conn?: Conn, nowMs?: number): Promise<boolean>;
}

/** The record settings of a store (the core's `RecordConfig`; defaults: the protocol's). */
export type StoreOptions = RecordConfig;

/** What every store has. */
export declare abstract class Store<Conn = unknown> {
  readonly config: Required<Pick<RecordConfig, 'leaseMs' | 'retentionMs' | 'stripe' | 'failureHandling' | 'releaseCategories'>>;
  constructor(options?: StoreOptions);
  /** Claims `key` for a request with `fingerprint`, committing at once. */
  claim(conn: Conn, key: string, fingerprint: string, nowMs?: number): Promise<Claim<Conn>>;
}

/** A store on a SQL database. */
export declare abstract class SqlStore<Conn> extends Store<Conn> {
  /** Creates the table and its index when absent. */
  createSchema(conn: Conn): Promise<void>;
  /** Deletes expired records (`expires_at_ms <= now`) in batches; returns how many. */
  cleanup(conn: Conn, nowMs?: number, batch?: number): Promise<number>;
}

/** SQLite through better-sqlite3 12.x (an optional peer dependency): the default store. */
export declare class SqliteStore extends SqlStore<any> {
  /** A better-sqlite3 Database in WAL mode, waiting up to `timeoutMs` for the file lock. */
  static connect(path: string, timeoutMs?: number): any;
}

/** PostgreSQL through `pg` (a `Client` or a `PoolClient`). */
export declare class PostgresStore extends SqlStore<any> {}

/** MariaDB or MySQL through `mysql2/promise` (a `Connection` or a `PoolConnection`). */
export declare class MariaDBStore extends SqlStore<any> {}

/** Redis 7 through ioredis; the connection argument of `claim()` is ignored. */
export declare class RedisStore extends Store<any> {
  constructor(client: any, options?: StoreOptions & { prefix?: string });
  /** Throws when the server's `maxmemory-policy` may evict records. */
  checkServer(): Promise<void>;
}

/** Records in this process's memory (tests; Workers and Deno without a driver). */
export declare class MemoryStore extends Store<null> {
  cleanup(conn?: null, nowMs?: number): Promise<number>;
}

/** A record as a row (column → value), and back. */
export declare function toRow(record: IdempotencyRecord, storageKey: string): Record<string, unknown>;
export declare function fromRow(row: Record<string, unknown>): IdempotencyRecord;

/** Binds the stores to a retrycore API (the wasm package's, on Workers and Deno). */
export declare function use(api: unknown): typeof import('./index');
