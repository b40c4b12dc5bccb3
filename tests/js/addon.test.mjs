// The Node package without its native addon (a tarball of `npm pack` from a checkout, or a
// platform whose package was left out): MISSING_NATIVE_ADDON says what works in each case.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { shardid, modulePath } from './load.mjs'

const skip = !shardid.threadsShareState && 'the WebAssembly module has no native addon'

test('without its addon, shardid says what to do from a release, the registry and a checkout', { skip }, () => {
  const pkg = dirname(modulePath)
  const project = mkdtempSync(join(tmpdir(), 'shardid-no-addon-'))
  try {
    // What `npm pack` puts in the tarball: the package's `files`, no .node file.
    const into = join(project, 'node_modules', 'shardid')
    mkdirSync(into, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'))
    for (const file of [...manifest.files, 'package.json']) {
      try {
        cpSync(join(pkg, file), join(into, file))
      } catch (err) {
        if (!(err.code === 'ENOENT' && /^(README|LICENSE)/.test(file))) throw err
      }
    }
    writeFileSync(join(project, 'package.json'), '{ "private": true }\n')
    const script = "try { require('shardid'); console.log('{}') } catch (err) { console.log(JSON.stringify({ code: err.code, message: err.message })) }"
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' }))
    assert.equal(out.code, 'MISSING_NATIVE_ADDON')
    const { version } = manifest
    const platform = out.message.match(/the package (shardid-[a-z0-9-]+) /)?.[1]
    assert.ok(platform, out.message)
    for (const said of [
      `From a release's files: install the platform's tarball beside shardid's (npm install shardid-${version}.tgz ${platform}-${version}.tgz)`,
      'From the npm registry: npm install shardid, without --omit=optional',
      'From a checkout: build the addon in the package folder (cd bindings-node && npm install && npm run build)',
      'install that folder (npm install path/to/bindings-node); a tarball made by npm pack holds no addon',
      'shardid-wasm',
    ]) {
      assert.ok(out.message.includes(said), `${said}\n  not in: ${out.message}`)
    }
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})
