'use strict'
// The `shardid` package (CommonJS): the classes of api.js over the native addon.
module.exports = require('./api.js').makeApi(require('./index.js'))
