'use strict';
// `retrycore/middleware`: the fetch-handler wrapper and the Express middleware
// (middleware.cjs) on the Node package's API.
module.exports = require('./middleware.cjs').use(require('../../index.cjs'));
