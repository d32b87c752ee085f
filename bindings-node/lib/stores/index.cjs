'use strict';
// `retrycore/stores`: the idempotency stores (stores.cjs) on the Node package's API.
module.exports = require('./stores.cjs').use(require('../../index.cjs'));
