'use strict'
// The `shardid` package (CommonJS): the classes of api.js over the native addon, whose loader
// napi-rs generates (native.generated.js).
module.exports = require('./api.js').makeApi(require('./native.generated.js'))
