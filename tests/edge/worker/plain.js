// A Cloudflare Worker that imports shardid-wasm by name, as wrangler bundles it: the package's
// `workerd` condition gives entries that import the .wasm, handed to the Worker compiled.
// workerd compiles no WebAssembly from bytes while it handles a request ("Wasm code generation
// disallowed by embedder"), which the default `import` entry does when it is first imported:
// shardid-wasm/public is imported lazily here, on the request that needs it, as a Worker loads
// its larger module only on the routes that use it.
import * as shardid from 'shardid-wasm'

import { run } from '../app/checks.js'

export default {
  async fetch() {
    const pub = await import('shardid-wasm/public')
    return Response.json(run(shardid, pub))
  },
}
