'use strict';
// The one adapter through which every test loads the implementation under
// test, selected by RETRYCORE_IMPL (lightningcss's TEST_WASM switch):
//   node (default)  the napi package in bindings-node/
//   wasm            the wasm package in bindings-wasm/ (its Node build)
//   <path>          any directory or file that require() accepts (an installed tarball)
const path = require('node:path');

const which = process.env.RETRYCORE_IMPL || 'node';
const root = path.join(__dirname, '..', '..');
const targets = {
  node: path.join(root, 'bindings-node', 'index.cjs'),
  wasm: path.join(root, 'bindings-wasm', 'index.cjs'),
};

let api;
try {
  api = require(targets[which] || path.resolve(which));
} catch (e) {
  throw new Error(`RETRYCORE_IMPL=${which}: cannot load ${targets[which] || which}: ${e.message}`, { cause: e });
}

module.exports = api;
module.exports.IMPL = which;
