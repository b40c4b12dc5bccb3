// Node's business serials (shardid/segments' createSerial and serials) on MariaDB (mysql2),
// driven by test_node_serials.py against its throwaway server:
// `node serials_node.mjs <url> <mode> [args]`; prints one JSON line (`take` writes its serials
// to a file, one a line, as it hands them out).
import { createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { createSerial, serials } = require('./segments.js')
const { serialsDdl } = require('./mysql.js')
const { ShardIdError } = require('./index.js')

const [url, mode, ...args] = process.argv.slice(2)
const print = (value) => console.log(JSON.stringify(value))
// An error's code and message (a ShardIdError), or what else came.
const outcome = async (promise) => promise.then(
  () => ({ code: 'no error' }),
  (err) => (err instanceof ShardIdError ? { code: err.code, message: err.message } : { code: `not a ShardIdError: ${err.code}`, message: err.message }),
)

const FORMAT = 'NS-{yyyy}{MM}{dd}-{seq:6}'
const ZONE = 'Asia/Shanghai'
// The URL's database holds the DDL.
const SCHEMA = new URL(url).pathname.slice(1)
// 2025-11-25 23:59:59 in Shanghai, and the next day's first second: a scripted clock, so a run
// near the real midnight changes nothing.
const BEFORE_MIDNIGHT = 1_764_086_399_000
const AFTER_MIDNIGHT = BEFORE_MIDNIGHT + 1_000
const open = (more) => serials({ connectionString: url, tag: 'ns', format: FORMAT, zone: ZONE, schema: SCHEMA, ...more })

if (mode === 'ddl') {
  print({ ddl: serialsDdl(args[0]) })
} else if (mode === 'create') {
  const create = (tag, format, more) => outcome(createSerial(url, tag, format, { zone: ZONE, schema: SCHEMA, ...more }))
  print({
    first: await create('ns', FORMAT),
    again: await create('ns', FORMAT),
    otherZone: await create('ns', FORMAT, { zone: 'UTC' }),
    otherFormat: await create('ns', 'NS-{yyyy}{MM}-{seq:6}'),
    otherMaxGap: await create('ns', FORMAT, { maxGap: 3 }),
    sameFormatOtherTag: await create('ns2', FORMAT),
    badZone: await create('ns3', 'X-{seq:4}', { zone: 'Mars/Olympus_Mons' }),
  })
} else if (mode === 'take') {
  // `take FILE CALLERS EACH`: CALLERS concurrent callers, EACH serials apiece, written to FILE
  // one at a time (a process killed mid-run leaves what it handed out), in one period.
  const [file, callers, each] = [args[0], Number(args[1]), Number(args[2])]
  const orders = await open({ minSize: 10, maxSize: 200, targetMs: 50, waitMs: 30000 })
  const caller = async () => {
    for (let i = 0; i < each; i++) appendFileSync(file, `${await orders.nextSerialAtAsync(BEFORE_MIDNIGHT)}\n`)
  }
  await Promise.all(Array.from({ length: callers }, caller))
  // Past the midnight: the next period's tag, made at its first take, from 1.
  const after = [await orders.nextSerialAtAsync(AFTER_MIDNIGHT), orders.nextSerialAt(AFTER_MIDNIGHT)]
  for (const serial of after) appendFileSync(file, `${serial}\n`)
  await orders.close()
  print({ done: true, fetches: orders.fetches })
} else if (mode === 'errors') {
  const closed = await open({ minSize: 5, maxSize: 5 })
  await closed.nextSerialAtAsync(BEFORE_MIDNIGHT)
  await closed.close()
  // `errors NONE NOREG`: databases without the DDL, and with the segments' DDL alone.
  const [none, noreg] = args
  const at = (database) => Object.assign(new URL(url), { pathname: `/${database}` }).href
  const down = Object.assign(new URL(url), { port: '1' }).href // nothing listens there
  print({
    unknown: await outcome(open({ tag: 'never_made' })),
    otherZone: await outcome(open({ zone: 'UTC' })),
    otherFormat: await outcome(open({ format: 'NS-{yyyy}{MM}-{seq:6}' })),
    closed: await outcome(Promise.resolve().then(() => closed.nextSerial())),
    closedAsync: await outcome(closed.nextSerialAsync()),
    down: await outcome(open({ connectionString: down })),
    createDown: await outcome(createSerial(down, 'ns', FORMAT, { zone: ZONE, schema: SCHEMA })),
    noTables: await outcome(createSerial(at(none), 'ns', FORMAT, { zone: ZONE, schema: none })),
    noRegistrations: await outcome(createSerial(at(noreg), 'ns', FORMAT, { zone: ZONE, schema: noreg })),
    noRegistrationsServed: await outcome(serials({ connectionString: at(noreg), tag: 'ns', format: FORMAT, zone: ZONE, schema: noreg })),
  })
} else if (mode === 'vanished') {
  // A tag whose registration is gone before its period's first take: UNKNOWN_TAG naming
  // createSerial, no period tag made.
  await createSerial(url, 'gone', 'GN-{yyyy}{MM}{dd}-{seq:4}', { zone: ZONE, schema: SCHEMA })
  const orders = await serials({ connectionString: url, tag: 'gone', format: 'GN-{yyyy}{MM}{dd}-{seq:4}', zone: ZONE, schema: SCHEMA, waitMs: 5000 })
  print({ opened: true })
  // The test deletes the registration, then says go (a line on stdin).
  await new Promise((resolve) => process.stdin.once('data', resolve))
  const taken = await outcome(orders.nextSerialAtAsync(BEFORE_MIDNIGHT))
  await orders.close()
  print({ taken })
  process.stdin.destroy()
} else {
  throw new Error(`unknown mode ${mode}`)
}
