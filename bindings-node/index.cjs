'use strict';
// The CommonJS entry point: the public API of lib/retrycore.ts over the napi addon.
require('./dist/retrycore.js').setBackend(require('./native.cjs'));
module.exports = require('./dist/retrycore.js');
