// What tests/postgres/segments_node.mjs and tests/mysql/node_mysql.mjs check alike: the entry
// points that create what a database keeps — createTag(url, tag), createSerial(url, tag,
// format, { zone }) and new Dictionary(url, topic).create() — on the server at `url`, whatever
// its database: created (and usable: the tag's first ID is 1, the topic's first string 0),
// idempotent (a second create is no error), a bad tag or topic INVALID_ARGUMENT, a schema
// without the DDL DATABASE naming the DDL to run, a server that is down DATABASE_UNREACHABLE.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { createTag, createSerial, denseIds, serials } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const { ShardIdError } = require('./index.js')

const code = (run) => Promise.resolve().then(run).then(() => 'no error', (err) => (err instanceof ShardIdError ? err.code : `${err.code}: ${err.message}`))
// The code of a failure; DATABASE with whether its message names the command that prints `ddl`.
const named = (run, schema, ddl) => Promise.resolve().then(run).then(() => 'no error', (err) => {
  if (err.code !== 'DATABASE') return String(err.code)
  return err.message.includes(`npx shardid sql --schema ${schema} ${ddl}`) ? 'DATABASE naming the DDL' : `DATABASE: ${err.message}`
})

/** The entry points on `url` (schemas `seg` and `dict` holding the DDL); one object of results. */
export async function entryPoints(url, { seg, dict }) {
  const down = new URL(url)
  down.port = '1' // nothing listens there
  const none = 'shardid_none' // a schema (database) without the DDL
  const tag = {
    created: await code(() => createTag(url, 'e_tag', { schema: seg })),
    again: await code(() => createTag(url, 'e_tag', { schema: seg })),
    first: await code(async () => {
      const ids = await denseIds({ connectionString: url, tag: 'e_tag', schema: seg })
      try {
        if (ids.nextId() !== 1n) throw new Error('the first ID is not 1')
      } finally {
        await ids.close()
      }
    }),
    empty: await code(() => createTag(url, '', { schema: seg })),
    long: await code(() => createTag(url, 'x'.repeat(201), { schema: seg })),
    notText: await code(() => createTag(url, 7, { schema: seg })),
    missing: await named(() => createTag(url, 'e_tag', { schema: none }), none, '--segments'),
    down: await code(() => createTag(down.href, 'e_tag', { schema: seg })),
  }
  const serial = (t, schema = seg, at = url) => createSerial(at, t, 'E{seq:6}', { zone: 'UTC', schema })
  const serialsOf = {
    created: await code(() => serial('e_serial')),
    again: await code(() => serial('e_serial')),
    first: await code(async () => {
      const s = await serials({ connectionString: url, tag: 'e_serial', format: 'E{seq:6}', zone: 'UTC', schema: seg })
      try {
        const first = await s.nextSerialAsync()
        if (first !== 'E000001') throw new Error(`the first serial is ${first}`)
      } finally {
        await s.close()
      }
    }),
    empty: await code(() => serial('')),
    missing: await named(() => serial('e_serial', none), none, '--segments'),
    down: await code(() => serial('e_serial', seg, down.href)),
  }
  // A topic created by a new Dictionary (closed after); `then` runs on it before.
  const topic = async (t, schema = dict, at = url, then = async () => {}) => {
    const d = new Dictionary(at, t, { schema })
    try {
      await d.create()
      await then(d)
    } finally {
      await d.close()
    }
  }
  const dictionary = {
    created: await code(() => topic('e_topic')),
    again: await code(() => topic('e_topic', dict, url, async (d) => {
      if ((await d.id('a')) !== 0n) throw new Error('the first string is not 0')
    })),
    empty: await code(() => topic('')),
    missing: await named(() => topic('e_topic', none), none, '--dictionary'),
    down: await code(() => topic('e_topic', dict, down.href)),
  }
  return { tag, serials: serialsOf, dictionary }
}
