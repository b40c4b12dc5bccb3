// The SQLite driver the package picked (better-sqlite3, or Node's own node:sqlite where
// better-sqlite3 is not installed: tests/js/run.sh runs the SQLite tests both ways), for the
// tests' own reads and writes of a file: the same driver, so a run without better-sqlite3
// needs none.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

/** The driver's name, as the package reports it: 'better-sqlite3' or 'node:sqlite'. */
export const driverName = () => require('./dialects/sqlite.js').driver('the tests').name

/** `file` opened with that driver (read-only with `readonly`): its own handle. */
export function database(file, { readonly = false } = {}) {
  if (driverName() === 'better-sqlite3') {
    const Database = require('better-sqlite3')
    return new Database(file, { readonly })
  }
  const { DatabaseSync } = require('node:sqlite')
  return new DatabaseSync(file, { readOnly: readonly })
}

/** The rows of `sql` on `file` (opened read-only), as objects, integers as bigints. */
export function query(file, sql) {
  const db = database(file, { readonly: true })
  try {
    const statement = db.prepare(sql)
    if (typeof statement.safeIntegers === 'function') statement.safeIntegers(true)
    else statement.setReadBigInts(true)
    return statement.all()
  } finally {
    db.close()
  }
}
