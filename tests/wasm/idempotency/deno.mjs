// Runs in Deno (tests/wasm/idempotency-deno.test.mjs): loads the wasm package and its
// stores and middleware one way (argv[1]), runs the idempotency scenario of
// harness/idempotency.mjs (URL in argv[0]) against withIdempotency + MemoryStore, and
// prints the answers as JSON.
//
//   files     dist/deno.mjs, dist/stores.mjs, dist/middleware.mjs
//   package   the bare specifiers retrycore-wasm, retrycore-wasm/stores and
//             retrycore-wasm/middleware, resolved through node_modules and the exports map
const [harness, mode] = Deno.args;
let specs;
if (mode === 'files') {
  const dist = new URL('../../../bindings-wasm/dist/', import.meta.url);
  specs = ['deno.mjs', 'stores.mjs', 'middleware.mjs'].map((f) => new URL(f, dist).href);
} else if (mode === 'package') {
  specs = ['retrycore-wasm', 'retrycore-wasm/stores', 'retrycore-wasm/middleware'];
} else {
  throw new Error(`unknown mode ${mode}`);
}
const [rc, stores, middleware] = await Promise.all(specs.map((s) => import(s)));
const { makeApp, scenario } = await import(harness);
const app = makeApp(rc, stores.default, middleware.default);
const out = await scenario(app, 'http://deno.test', `${mode}-`);
console.log(JSON.stringify({ resolved: specs.map((s) => import.meta.resolve(s)), out }));
