'use strict';
// The development entry tests/js/impl.cjs loads for RETRYCORE_IMPL=wasm: the
// built package in dist/ (`make -C bindings-wasm build`).
module.exports = require('./dist/index.cjs');
