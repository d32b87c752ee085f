'use strict';
// Values that break naive bindings, shared by tests/js/hostile.test.cjs (the
// public API of either implementation) and tests/wasm/backend-hostile.test.mjs
// (the raw wasm exports under the public layer).

const HUGE = 'x'.repeat(10 * 1024 * 1024);
const cyclic = () => {
  const o = { a: 1 };
  o.self = o;
  return o;
};
const deep = (n) => {
  let v = [];
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const deepObj = (n) => {
  let v = {};
  for (let i = 0; i < n; i++) v = { v };
  return v;
};
const trap = () => {
  throw new Error('trap');
};
const throwing = new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap });
const revoked = (() => {
  const r = Proxy.revocable([], {});
  r.revoke();
  return r.proxy;
})();
const getterArray = ['a', 'b'];
Object.defineProperty(getterArray, 1, { get() { throw new Error('getter'); } });
const arrayProxy = new Proxy(['a'], { get(t, k) { if (k === 'length') return 3; return Reflect.get(t, k); } });

// A sparse array of length 2^32 - 1 with one element: walking it index by index hangs.
const sparse = () => {
  const a = [];
  a.length = 2 ** 32 - 1;
  a[7] = 'x';
  return a;
};

module.exports = { HUGE, cyclic, deep, deepObj, throwing, revoked, getterArray, arrayProxy, sparse };
