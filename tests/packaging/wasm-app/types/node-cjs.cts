// The package's types from a Node CommonJS module (module "nodenext"): the `require` entry.
import shardid = require('shardid-wasm')

const layout: shardid.Layout = shardid.Layout.INSTAGRAM
const ids: BigUint64Array = new shardid.Generator({ layout, shard: 1 }).nextIds(2)
export const same: boolean = shardid.default === shardid && ids.length === 2
