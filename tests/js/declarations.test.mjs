// The Node package's types are complete: every module the package exports (package.json's
// "exports") declares, in its .d.ts, every name the module exports at run time and nothing it
// lacks, and every class declares every public method (and accessor, and Symbol.asyncDispose)
// its objects have, and has every method it declares. tsc --strict (tests/js/run.sh) checks the
// declarations compile; this checks they say all there is. Read with the TypeScript compiler's
// API, as an editor reads them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '../../bindings-node')
const requirePkg = createRequire(join(pkgDir, 'package.json'))
// The Node package's own files: the WebAssembly module (SHARDID_JS_MODULE) has its own types.
const skip = process.env.SHARDID_JS_MODULE !== undefined && 'the Node package\'s declarations, not the WebAssembly module\'s'
const ts = skip ? null : requirePkg('typescript')

/** [subpath, .d.ts file, .js file] of every module the package exports, as `require` finds
 *  them, and as `import` does where it finds others (the ES module of `shardid`). */
function modules({ esm = false } = {}) {
  const { exports } = requirePkg('./package.json')
  return Object.entries(exports)
    .filter(([, entry]) => typeof entry === 'object' && (!esm || entry.import))
    .map(([subpath, entry]) => {
      const files = esm ? entry.import : entry.require ?? entry
      return [subpath, join(pkgDir, files.types ?? entry.types), join(pkgDir, files.default ?? entry.require)]
    })
}

// One program over every module's declarations (as tsc reads them).
let program = null

/** The values a .d.ts exports, by name: their symbols (aliases followed). */
function declared(file) {
  program ??= ts.createProgram([...modules(), ...modules({ esm: true })].map(([, dts]) => dts), {
    noEmit: true, strict: true, types: [], target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  })
  const checker = program.getTypeChecker()
  const values = new Map()
  for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)))) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    if (symbol.flags & ts.SymbolFlags.Value) values.set(exported.name, symbol)
  }
  return { checker, values }
}

const WELL_KNOWN = ['asyncDispose', 'dispose', 'iterator', 'asyncIterator', 'toPrimitive', 'toStringTag', 'hasInstance']

/** The public members a class's objects have at run time: methods and accessors of its
 *  prototypes (not `_private` ones), and `Symbol.asyncDispose` as `[Symbol.asyncDispose]`. */
function runtimeMembers(Class) {
  const names = new Set()
  for (let proto = Class.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Reflect.ownKeys(proto)) {
      if (key === 'constructor' || (typeof key === 'string' && key.startsWith('_'))) continue
      names.add(typeof key === 'symbol' ? `[Symbol.${WELL_KNOWN.find((k) => Symbol[k] === key) ?? key.description}]` : key)
    }
  }
  return names
}

/** The members a declared class's instances have: name -> whether it is a method. */
function declaredMembers(checker, symbol) {
  const members = new Map()
  for (const property of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
    const name = property.name.startsWith('__@') ? `[Symbol.${property.name.slice(3).split('@')[0]}]` : property.name
    members.set(name, Boolean(property.flags & ts.SymbolFlags.Method))
  }
  return members
}

test('every module of the package declares exactly the names it exports', { skip }, async () => {
  const loaded = [
    ...modules().map(([subpath, dts, js]) => [subpath, dts, requirePkg(js)]),
    ...await Promise.all(modules({ esm: true }).map(async ([subpath, dts, js]) => [`${subpath} (import)`, dts, await import(js)])),
  ]
  for (const [subpath, dts, module] of loaded) {
    const { values } = declared(dts)
    const runtime = Object.keys(module)
    // CommonJS: `default` is the ES module's (index.mjs), which has the same names besides.
    const names = [...values.keys()].filter((name) => name !== 'default' || runtime.includes('default'))
    assert.deepEqual(runtime.filter((name) => !values.has(name)), [], `${subpath}: exported but not declared in ${dts}`)
    assert.deepEqual(names.filter((name) => !runtime.includes(name)), [], `${subpath}: declared in ${dts} but not exported`)
  }
})

test('every class the package exports declares the methods its objects have, and has those it declares', { skip }, () => {
  let classes = 0
  const wrong = []
  for (const [subpath, dts, js] of modules()) {
    const { checker, values } = declared(dts)
    const module = requirePkg(js)
    for (const [name, symbol] of values) {
      if (!(symbol.flags & ts.SymbolFlags.Class) || typeof module[name] !== 'function') continue
      classes += 1
      const members = declaredMembers(checker, symbol)
      const runtime = runtimeMembers(module[name])
      for (const m of runtime) if (!members.has(m)) wrong.push(`${subpath} ${name}.${m}: not declared`)
      for (const [m, method] of members) if (method && !runtime.has(m)) wrong.push(`${subpath} ${name}.${m}: declared, missing`)
    }
  }
  assert.deepEqual(wrong, [])
  assert.ok(classes >= 10, `${classes} classes checked`)
})
