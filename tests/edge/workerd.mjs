// Cloudflare Workers, offline: workerd from npm (tests/edge/package.json) runs two Workers
// bundled as wrangler bundles them (esbuild with the conditions workerd, worker, browser; each
// imported .wasm a module of its own, handed to the Worker compiled): worker/plain.js imports
// shardid-wasm and shardid-wasm/public by name, worker/recipe.js is the book's recipe with
// shardid-wasm/web. Each answers one request with what it computed, checked against
// app/checks.js's EXPECTED. Prints a line per check, as tests/check.sh's `check` does.
// `node workerd.mjs [--conditions=import]`: the plain Worker bundled without the `workerd`
// condition (what wrangler did before the package had it), to see it refused.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import * as esbuild from 'esbuild'

import { EXPECTED } from './app/checks.js'

const here = dirname(fileURLToPath(import.meta.url))
const conditions = (process.argv.find((a) => a.startsWith('--conditions='))?.slice(13) ?? 'workerd,worker,browser').split(',')
const work = mkdtempSync(join(tmpdir(), 'shardid-workerd-'))

/** Bundles `src` into `dir`/worker.js; returns the .wasm modules it imports (copied into `dir`). */
async function bundle(src, dir) {
  const wasm = []
  mkdirSync(dir, { recursive: true })
  await esbuild.build({
    entryPoints: [join(here, src)],
    bundle: true,
    format: 'esm',
    outfile: join(dir, 'worker.js'),
    conditions,
    logLevel: 'error',
    plugins: [{
      name: 'wasm-modules',
      setup(build) {
        build.onResolve({ filter: /\.wasm$/ }, (args) => {
          const file = args.path.startsWith('.')
            ? resolve(args.resolveDir, args.path)
            : createRequire(join(args.resolveDir, 'x.js')).resolve(args.path)
          copyFileSync(file, join(dir, basename(file)))
          if (!wasm.includes(basename(file))) wasm.push(basename(file))
          return { path: `./${basename(file)}`, external: true }
        })
      },
    }],
  })
  return wasm
}

const freePort = () => new Promise((ok) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address()
    s.close(() => ok(port))
  })
})

const workers = { plain: 'worker/plain.js', recipe: 'worker/recipe.js' }
const ports = {}
let config = 'using Workerd = import "/workerd/workerd.capnp";\n'
const services = []
const sockets = []
for (const [name, src] of Object.entries(workers)) {
  const dir = join(work, name)
  const wasm = await bundle(src, dir)
  ports[name] = await freePort()
  const modules = [`(name = "worker.js", esModule = embed "${name}/worker.js")`,
    ...wasm.map((w) => `(name = "${w}", wasm = embed "${name}/${w}")`)]
  config += `const ${name} :Workerd.Worker = (modules = [${modules.join(', ')}], compatibilityDate = "2026-11-01");\n`
  services.push(`(name = "${name}", worker = .${name})`)
  sockets.push(`(name = "${name}", address = "127.0.0.1:${ports[name]}", http = (), service = "${name}")`)
}
config += `const config :Workerd.Config = (services = [${services.join(', ')}], sockets = [${sockets.join(', ')}]);\n`
writeFileSync(join(work, 'config.capnp'), config)

const workerd = spawn(join(here, 'node_modules/.bin/workerd'), ['serve', join(work, 'config.capnp')], {
  cwd: work, stdio: ['ignore', 'pipe', 'pipe'],
})
let log = ''
workerd.stdout.on('data', (d) => (log += d))
workerd.stderr.on('data', (d) => (log += d))
const exited = new Promise((ok) => workerd.on('exit', (code) => ok(code)))

/** The Worker's answer; workerd listens within a second or two (retried for 30 s at most). */
async function ask(name) {
  const until = Date.now() + 30_000
  for (;;) {
    let res
    try {
      res = await fetch(`http://127.0.0.1:${ports[name]}/`, { signal: AbortSignal.timeout(5_000) })
    } catch (err) {
      // Not listening yet.
      if (Date.now() > until || workerd.exitCode !== null) throw err
      await new Promise((ok) => setTimeout(ok, 100))
      continue
    }
    const text = await res.text()
    assert.equal(res.status, 200, text)
    return JSON.parse(text)
  }
}

let failed = 0
const check = async (name, body) => {
  try {
    await body()
    console.log(`test edge::${name} ... ok`)
  } catch (err) {
    failed++
    await new Promise((ok) => setTimeout(ok, 300)) // workerd's own words on it
    console.log(`test edge::${name} ... FAILED\n    ${String(err.message ?? err).replace(/\n/g, '\n    ')}`)
    if (log) console.log(`    workerd said:\n      ${log.trim().replace(/\n/g, '\n      ')}`)
  }
}
const started = Date.now()
try {
  await check(`workerd: a Worker importing shardid-wasm and shardid-wasm/public by name (conditions ${conditions})`, async () => {
    assert.deepEqual(await ask('plain'), EXPECTED)
  })
  await check('workerd: the recipe, shardid-wasm/web with its .wasm imported, init({ module_or_path })', async () => {
    assert.deepEqual(await ask('recipe'), { web: '32', shards: [3], again: true })
    assert.doesNotMatch(log, /deprecated/)
  })
} finally {
  workerd.kill('SIGTERM')
  await Promise.race([exited, new Promise((ok) => setTimeout(ok, 3_000))])
  rmSync(work, { recursive: true, force: true })
}
console.log(`    (workerd: ${Date.now() - started} ms from its start to both answers)`)
process.exit(failed ? 1 : 0)
