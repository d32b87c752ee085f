// The idempotency middleware on an edge runtime (issue 19): `withIdempotency(handler,
// { store: new MemoryStore() })` bound to the wasm package's API with `use(api)`, as
// docs/idempotency.md tells Workers and Deno to do. Loaded by Deno
// (tests/wasm/idempotency/deno.mjs) and workerd (tests/wasm/idempotency/worker.mjs); the
// scenario's answers are checked in Node (idempotency-deno.test.mjs,
// idempotency-workerd.test.mjs).

/**
 * The app: POST /charges?ms=<n> runs the handler (n ms long) once per key; GET /runs (no
 * key needed: GET is not guarded) says how many times the handler ran.
 */
export function makeApp(rc, storesModule, middlewareModule) {
  const { MemoryStore } = storesModule.use(rc);
  const { withIdempotency } = middlewareModule.use(rc);
  let runs = 0;
  const handler = async (req) => {
    const url = new URL(req.url);
    if (req.method === 'GET') return new Response(JSON.stringify({ runs }), { headers: { 'content-type': 'application/json' } });
    const body = await req.json();
    runs++;
    const run = runs;
    await new Promise((r) => setTimeout(r, Number(url.searchParams.get('ms') ?? 0)));
    return new Response(JSON.stringify({ amount: body.amount, run }), { status: 201, headers: { 'content-type': 'application/json' } });
  };
  return withIdempotency(handler, { store: new MemoryStore() });
}

const seen = async (r) => ({
  status: r.status,
  replayed: r.headers.get('idempotent-replayed'),
  retryAfter: r.headers.get('retry-after'),
  type: r.headers.get('content-type'),
  body: await r.text(),
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Sends the scenario's requests through `send(Request) → Response`; returns what each answer was. */
export async function scenario(send, base, tag = '') {
  const post = (key, amount, ms) =>
    send(
      new Request(`${base}/charges?ms=${ms}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `"${tag}${key}"` },
        body: JSON.stringify({ amount }),
      }),
    );
  const runs = async () => JSON.parse(await (await send(new Request(`${base}/runs`))).text()).runs;
  const out = {};
  // Eight concurrent duplicates of one request, its handler 300 ms long.
  out.burst = await Promise.all(Array.from({ length: 8 }, () => post('burst', 5, 300).then(seen)));
  out.runsAfterBurst = await runs();
  // A duplicate while the handler runs, then after it.
  const slow = post('slow', 7, 600);
  await sleep(150);
  out.midHandler = await seen(await post('slow', 7, 600));
  out.slow = await seen(await slow);
  out.replay = await seen(await post('slow', 7, 600));
  out.mismatch = await seen(await post('slow', 8, 600));
  out.runs = await runs();
  return out;
}

/** Checks the scenario's answers with node:assert (`assert`); returns a one-line summary. */
export function checkScenario(assert, what, out) {
  const problem = (a, status, title) => {
    assert.equal(a.status, status, `${what}: ${a.body}`);
    assert.equal(a.type, 'application/problem+json', what);
    const doc = JSON.parse(a.body);
    assert.equal(doc.status, status, what);
    assert.equal(doc.title, title, what);
  };
  const IN_PROGRESS = 'A request is outstanding for this Idempotency-Key';
  const ran = out.burst.filter((a) => a.status === 201 && a.replayed === null);
  assert.equal(ran.length, 1, `${what}: one of the concurrent duplicates runs: ${JSON.stringify(out.burst)}`);
  assert.equal(out.runsAfterBurst, 1, `${what}: the handler ran once for eight concurrent duplicates`);
  for (const a of out.burst) {
    if (a === ran[0]) continue;
    if (a.status === 409) {
      problem(a, 409, IN_PROGRESS);
      assert.match(a.retryAfter, /^[1-9][0-9]*$/, what);
    } else {
      assert.deepEqual([a.status, a.replayed, a.body], [201, 'true', ran[0].body], `${what}: a duplicate is refused or replayed`);
    }
  }
  problem(out.midHandler, 409, IN_PROGRESS);
  assert.match(out.midHandler.retryAfter, /^[1-9][0-9]*$/, `${what}: 409 carries Retry-After`);
  assert.deepEqual([out.slow.status, out.slow.replayed, JSON.parse(out.slow.body).amount], [201, null, 7], what);
  assert.deepEqual([out.replay.status, out.replay.replayed, out.replay.body], [201, 'true', out.slow.body], `${what}: replayed`);
  problem(out.mismatch, 422, 'Idempotency-Key is already used');
  assert.equal(out.runs, 2, `${what}: each key ran once`);
  const refused = out.burst.filter((a) => a.status === 409).length;
  return `${what}: 8 concurrent duplicates ran once (${refused} x 409), 409 mid-handler with Retry-After ${out.midHandler.retryAfter}, replay, 422`;
}
