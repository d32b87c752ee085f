// Reading the HTTP clients' own shapes (docs/js.md, "HTTP clients"): where each keeps the
// request's method, a response's status and headers, and the phase a timeout fired in. The
// paths are the core's table (`host_tables().reads.node`, core/src/classify.rs `NODE_READS`),
// sent at init; this module only follows them and decides nothing.

/** One response shape of the table: the attributes holding its status, headers and method, and the one that tells it apart. */
interface ResponseShape {
  clients: string;
  status: string;
  headers: string;
  method: string;
  guard: string;
}

interface NodeReads {
  error_method: string[];
  responses: ResponseShape[];
  connect_phase: Array<{ attribute: string; values: string[] }>;
}

let READS: NodeReads = { error_method: [], responses: [], connect_phase: [] };
let CONNECTING = '';

/** A response shape with its paths split once (the failure path reads them on every error). */
interface Shape {
  status: string[];
  headers: string[];
  method: string[] | null;
  guard: string;
}
let SHAPES: Shape[] = [];
let ERROR_METHOD: string[][] = [];

/** Takes the table and the `retrycore:connecting` marker from the core's `host_tables()` (called by `setBackend`). */
export function setReads(tables: { [key: string]: unknown }): void {
  READS = (tables.reads as { node: NodeReads }).node;
  CONNECTING = (tables.error_markers as { connecting: string }).connecting;
  SHAPES = READS.responses.map((s) => ({ status: s.status.split('.'), headers: s.headers.split('.'), method: s.method === '' ? null : s.method.split('.'), guard: s.guard }));
  ERROR_METHOD = READS.error_method.map((p) => p.split('.'));
}

/** Follows a path split at its dots ("config.method"): undefined when a step is missing or not an object. */
function at(o: unknown, path: string[]): unknown {
  let v = o;
  for (let i = 0; i < path.length; i++) {
    if (v == null || (typeof v !== 'object' && typeof v !== 'function')) return undefined;
    v = (v as Record<string, unknown>)[path[i]];
  }
  return v;
}

/** A response read through the table: its status, its headers as the client keeps them, and whether it succeeded. */
export interface ResponseRead {
  status: number;
  headers: unknown;
  method: string | undefined;
  ok: boolean;
}

/**
 * Reads `v` as a response of one of the table's shapes (a fetch `Response`, an axios
 * response, undici's `request()` result, node:http's `IncomingMessage`); null when it is none
 * of them. `ok` is the `Response`'s own when it has one, else a 2xx status.
 */
export function readResponse(v: unknown): ResponseRead | null {
  if (v == null || typeof v !== 'object') return null;
  try {
    for (const s of SHAPES) {
      if (s.guard !== '' && !(s.guard in v)) continue;
      const status = at(v, s.status);
      const headers = at(v, s.headers);
      if (typeof status !== 'number' || headers == null || typeof headers !== 'object') continue;
      const m = s.method === null ? undefined : at(v, s.method);
      const ok = (v as { ok?: unknown }).ok;
      return { status, headers, method: typeof m === 'string' ? m : undefined, ok: typeof ok === 'boolean' ? ok : status >= 200 && status <= 299 };
    }
  } catch {
    // A hostile getter or proxy: not a response.
  }
  return null;
}

/** Whether `v` is a response that did not succeed (what `execute` hands the core when `fn` returns it). */
export function failedResponse(v: unknown): boolean {
  const r = readResponse(v);
  return r !== null && !r.ok;
}

/** The request's method a client keeps on its error (axios `config.method`, got `options.method`, ky `request.method`, …); a response's is its `ResponseRead.method`. */
export function errorMethod(x: unknown): string | undefined {
  if (x == null || typeof x !== 'object') return undefined;
  try {
    for (const p of ERROR_METHOD) {
      const m = at(x, p);
      if (typeof m === 'string' && m.length > 0) return m;
    }
  } catch {
    // A hostile getter: the caller's method (if any) decides.
  }
  return undefined;
}

/** The `retrycore:connecting` marker when the error says the request was never sent (got's `event: 'connect'`), else undefined. */
export function connectingName(e: { [key: string]: unknown }): string | undefined {
  for (const { attribute, values } of READS.connect_phase) {
    const v = e[attribute];
    if (typeof v === 'string' && values.includes(v)) return CONNECTING;
  }
  return undefined;
}
