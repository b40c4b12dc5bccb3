// Each entry's types against what it exports at run time: TypeScript's compiler (from
// tests/edge's node_modules) lists the values each entry's types export, by name and on the
// default export, resolved as a project resolves the package (bundler resolution, with the
// `workerd` condition for Workers; NodeNext for CommonJS); Node imports the same entry and lists
// its exports. A name in the types must exist at run time, the named exports must be the same
// set, and the default module's entries must not name PublicIds, checkPublicId or fromUuid
// (there they would throw UNSUPPORTED): shardid-wasm/public's must. No entry names
// shardFromOrdinal, lease or LeasedGenerator (UNSUPPORTED in both). Member by member too:
// every property the types give an exported value, a class's statics and its instances (each
// class's instance made below, in `samples`), exists at run time, and every method and
// function the types name, called with no arguments, does not answer UNSUPPORTED (what a
// module cannot do throws that before looking at its arguments: the default module's
// Layout#toUuid, Generator#stats in both). Prints a line per entry.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import ts from 'typescript'

const here = dirname(fileURLToPath(import.meta.url))
const PUBLIC = ['PublicIds', 'checkPublicId', 'fromUuid']
// UNSUPPORTED in both modules (a pod's hostname, leases' lock files: the modules have no host
// and no file system): in no entry's types. lease() checks its options before it says so, which
// the member check's call with no arguments would not reach.
const NOWHERE = ['shardFromOrdinal', 'lease', 'LeasedGenerator']

const bundler = { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }
const workerd = { ...bundler, customConditions: ['workerd'] }
const nodeNext = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }
const entries = [
  // [specifier, compiler options, the file Node runs (null: not in Node), its module's public IDs]
  ['shardid-wasm', bundler, 'inline/shardid.js', false],
  ['shardid-wasm/public', bundler, 'inline/public.js', true],
  ['shardid-wasm', workerd, null, false],
  ['shardid-wasm/public', workerd, null, true],
  ['shardid-wasm/web', bundler, 'web/shardid.js', false],
  ['shardid-wasm/web/public', bundler, 'web/public.js', true],
  ['shardid-wasm', nodeNext, 'node/shardid.js', false],
  ['shardid-wasm/public', nodeNext, 'node/public.js', true],
]

// The three programs below share parsed files (lib.dom.d.ts above all): half the time.
const parsed = new Map()
function host(options) {
  const h = ts.createCompilerHost(options)
  const read = h.getSourceFile
  h.getSourceFile = (file, language, ...rest) => {
    const key = `${file}:${typeof language === 'object' ? language.impliedNodeFormat ?? '' : ''}`
    if (!parsed.has(key)) parsed.set(key, read.call(h, file, language, ...rest))
    return parsed.get(key)
  }
  return h
}

/**
 * The values each entry's types export, `[named, properties of the default export (the web
 * entries: of what init() resolves with)]`, by entry, from one program per set of compiler
 * options (tsc --strict over the package's .d.ts files too: skipLibCheck off).
 */
function typed() {
  const dir = mkdtempSync(join(here, 'node_modules/.names-'))
  const found = new Map()
  try {
    for (const options of [bundler, workerd, nodeNext]) {
      const files = []
      entries.forEach(([specifier, o], i) => {
        if (o !== options) return
        const file = join(dir, options === nodeNext ? `probe${i}.cts` : `probe${i}.ts`)
        writeFileSync(file, specifier.includes('/web')
          ? `import init from '${specifier}'\nexport type A = Awaited<ReturnType<typeof init>>\nimport * as m from '${specifier}'\nexport { m }\n`
          : `import * as m from '${specifier}'\nexport { m }\n`)
        files.push([file, i])
      })
      if (options === workerd) {
        // wasm.md's recipe for Workers, typed: the .wasm's default import is a compiled module.
        const file = join(dir, 'recipe.ts')
        writeFileSync(file, `import init from 'shardid-wasm/web'
import wasm from 'shardid-wasm/web/shardid_wasm_bg.wasm'
const compiled: WebAssembly.Module = wasm
const { Layout } = await init({ module_or_path: compiled })
const shard: number = Layout.DISCORD.decode('175928847299117063').shard
// @ts-expect-error: the default module has no public IDs
;(await init()).PublicIds
export { shard }
`)
        files.push([file, -1])
      }
      if (options === bundler) {
        // The two modules' types together, as a page that imports both writes them: a Layout of
        // either is taken by both, and tsc refuses what only throws UNSUPPORTED at run time.
        const file = join(dir, 'across.ts')
        writeFileSync(file, `import { Generator, Layout as Plain } from 'shardid-wasm'
import { Generator as PublicGenerator, Layout as Bridged, PublicIds, fromUuid } from 'shardid-wasm/public'
// @ts-expect-error: the default module's Layout has no UUIDv7 bridge
Plain.INSTAGRAM.toUuid(1n)
const uuid: string = Bridged.INSTAGRAM.toUuid(1n)
const id: bigint = fromUuid(uuid, Plain.INSTAGRAM)
const ids = new PublicIds({ key: new Uint8Array(16), prefix: 'note', layout: Plain.INSTAGRAM })
const bridged: string = ids.layout.toUuid(id)
const made = new PublicGenerator({ layout: Plain.INSTAGRAM, shard: 1 })
// @ts-expect-error: a Generator's layout may be the default module's (the realm's first module makes every Generator)
made.layout.toUuid(1n)
// @ts-expect-error: no stats() in either module (the Node addon's)
new Generator({ layout: Bridged.INSTAGRAM, shard: 1 }).stats()
export { bridged, made }
`)
        files.push([file, -1])
      }
      const compilerOptions = {
        strict: true, noEmit: true, types: [], skipDefaultLibCheck: true, target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], ...options,
      }
      const program = ts.createProgram(files.map(([f]) => f), compilerOptions, host(compilerOptions))
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
      const checker = program.getTypeChecker()
      // The names usable as values: `export type { X }` and `export type * from` name a class
      // as a type only, which getExportsOfModule does not say.
      const typeOnly = (d) => (ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) || (ts.isExportDeclaration(d) && d.isTypeOnly)
      const isValue = (s) => ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value) !== 0
      const values = (module) => {
        const own = [...(module.exports?.values() ?? [])]
        const star = own.find((s) => s.escapedName === '__export')
        const names = own.filter((s) => s !== star && !(s.declarations ?? []).some(typeOnly) && isValue(s)).map((s) => s.name)
        if (star && !star.declarations.every(typeOnly)) {
          const mine = new Set(own.map((s) => s.name))
          names.push(...checker.getExportsOfModule(module).filter((s) => !mine.has(s.name) && isValue(s)).map((s) => s.name))
        }
        return names
      }
      // What the types say of a value: a class (its statics and its instances' members), a
      // function, or another value (its properties); symbol-named members left out.
      const own = (type) => type.getProperties().map((p) => p.name).filter((n) => n !== 'prototype' && !n.startsWith('__@'))
      const describe = (type) => {
        const construct = type.getConstructSignatures()
        return {
          kind: construct.length ? 'class' : type.getCallSignatures().length ? 'function' : 'value',
          statics: type.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection) ? own(type) : [],
          instance: construct.length ? own(checker.getReturnTypeOfSignature(construct[0])) : [],
        }
      }
      for (const [file, i] of files) {
        if (i < 0) continue
        const source = program.getSourceFile(file)
        const star = source.statements.find((s) => ts.isImportDeclaration(s) && s.importClause?.namedBindings)
        const module = checker.getSymbolAtLocation(star.moduleSpecifier)
        const exported = checker.getExportsOfModule(module)
        const named = values(module).filter((n) => n !== 'default' && n !== 'export=')
        const alias = source.statements.find((s) => ts.isTypeAliasDeclaration(s))
        const def = exported.find((s) => s.name === 'default') ?? module.exports?.get('export=')
        const api = alias ? checker.getTypeAtLocation(alias.name) : def ? checker.getTypeOfSymbolAtLocation(def, source) : null
        const symbols = new Map(exported.map((s) => [s.name, s]))
        const typeOf = (s) => checker.getTypeOfSymbolAtLocation(s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s, source)
        const namedMembers = Object.fromEntries(named.map((n) => [n, describe(typeOf(symbols.get(n)))]))
        const propMembers = api ? Object.fromEntries(api.getProperties().map((p) => [p.name, describe(checker.getTypeOfSymbolAtLocation(p, source))])) : {}
        found.set(i, { problems, named: named.sort(), props: api ? api.getProperties().map((p) => p.name).sort() : [], namedMembers, propMembers })
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return found
}

/** An instance of each class an entry's types export, made with that entry's own classes. */
const samples = (api) => ({
  Layout: () => api.Layout.INSTAGRAM,
  Parts: () => api.Layout.INSTAGRAM.decode('175928847299117063'),
  Generator: () => new api.Generator({ layout: api.Layout.INSTAGRAM, shard: 1 }),
  PublicIds: () => new api.PublicIds({ key: new Uint8Array(16), prefix: 'note' }),
})

/**
 * Where the types of `described` (name -> what describe() said) and the values `of(name)` at
 * run time differ: a typed member missing, or a typed method or function answering UNSUPPORTED.
 */
async function memberProblems(described, of, api) {
  const problems = []
  const made = samples(api)
  const probe = async (path, fn, self) => {
    try {
      await fn.call(self)
    } catch (err) {
      if (err?.code === 'UNSUPPORTED') problems.push(`${path}(): typed, but UNSUPPORTED at run time (${err.message})`)
    }
  }
  for (const [name, { kind, statics, instance }] of Object.entries(described)) {
    const value = of(name)
    if (value === undefined) {
      problems.push(`${name}: typed, but not at run time`)
      continue
    }
    if (kind === 'function') await probe(name, value, undefined)
    for (const member of statics) {
      if (!(member in Object(value))) problems.push(`${name}.${member}: typed, but not at run time`)
      else if (typeof value[member] === 'function' && !isClass(value[member])) await probe(`${name}.${member}`, value[member], value)
    }
    if (kind !== 'class' || instance.length === 0) continue
    if (!made[name]) {
      problems.push(`${name}: a class with no instance to check its members on (add one to names.mjs's samples)`)
      continue
    }
    const sample = made[name]()
    for (const member of instance) {
      if (!(member in sample)) problems.push(`${name}#${member}: typed, but not at run time`)
      else if (typeof sample[member] === 'function') await probe(`${name}#${member}`, sample[member], sample)
    }
  }
  return problems
}
// A class at run time (its source text starts with `class`, or it is one of the modules'
// constructor proxies, which have a prototype of their own): never called without `new`.
const isClass = (fn) => /^class\b/.test(Function.prototype.toString.call(fn)) || Object.hasOwn(fn, 'prototype')

const types = typed()
let failed = 0
for (const [i, [specifier, options, runtime, hasPublic]] of entries.entries()) {
  const label = `${specifier} (${options === workerd ? 'workerd' : options === nodeNext ? 'NodeNext, CommonJS' : 'bundler'})`
  try {
    const { problems, named, props } = types.get(i)
    assert.deepEqual(problems, [], 'tsc --strict')
    for (const name of PUBLIC) {
      assert.equal([...named, ...props].includes(name), hasPublic, `${name} ${hasPublic ? 'missing from' : 'in'} the types`)
    }
    for (const name of NOWHERE) assert.ok(![...named, ...props].includes(name), `${name} in the types`)
    if (runtime) {
      const file = join(here, 'node_modules/shardid-wasm', runtime)
      const ns = await import(file)
      // The web entries' classes come from init(), given the module's bytes.
      const object = specifier.includes('/web')
        ? await ns.default({ module_or_path: readFileSync(file.replace(/(shardid|public)\.js$/, (_, n) => `shardid_wasm${n === 'public' ? '_public' : ''}_bg.wasm`)) })
        : ns.default
      const runtimeNamed = Object.keys(ns).filter((n) => n !== 'default' && n !== 'module.exports').sort()
      // CommonJS: the named exports are the object's properties, checked below.
      if (options !== nodeNext) assert.deepEqual(runtimeNamed, named, 'named exports: run time (actual) against the types (expected)')
      assert.deepEqual(props.filter((n) => !(n in object)), [], 'typed but not there at run time')
      // Member by member: the named exports against the module, the API object's against it.
      const { namedMembers, propMembers } = types.get(i)
      const members = [
        ...(options === nodeNext ? [] : await memberProblems(namedMembers, (n) => ns[n], object)),
        ...await memberProblems(propMembers, (n) => object[n], object),
      ]
      assert.deepEqual([...new Set(members)], [], 'typed members that the entry lacks or answers UNSUPPORTED to')
    }
    const checked = Object.values({ ...types.get(i).namedMembers, ...types.get(i).propMembers }).reduce((n, d) => n + d.statics.length + d.instance.length, 0)
    console.log(`test edge::types: ${label}: tsc --strict, the same names and members at run time ... ok (${named.length} named, ${props.length} on the API object, ${checked} members${runtime ? '' : '; run time: workerd.mjs'})`)
  } catch (err) {
    failed++
    console.log(`test edge::types: ${label}: tsc --strict, the same names and members at run time ... FAILED\n    ${String(err.message).replace(/\n/g, '\n    ')}`)
  }
}
process.exit(failed ? 1 : 0)
