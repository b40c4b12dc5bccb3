'use strict'
// Connections that keep the process alive only while a statement is in flight: a script that
// opened dense IDs, a dictionary or a lease and is done exits, as one with a pg.Pool made with
// `allowExitOnIdle` does, instead of waiting for an idle socket to be closed. What such an exit
// costs is what a crash costs (dense IDs: the unused rest of the segments; a lease: its shard
// stays taken until it expires), never an ID twice.

const busy = new WeakMap()

// The socket of a pg.Client (which has ref()/unref() of its own) or of a mysql2 connection
// (promise API: `.connection.stream`).
function setRef(conn, on) {
  if (conn == null) return
  if (typeof conn.ref === 'function' && typeof conn.unref === 'function') return on ? conn.ref() : conn.unref()
  const stream = conn.connection?.stream ?? conn.stream
  if (stream && typeof stream.ref === 'function') on ? stream.ref() : stream.unref()
}

/** Lets `conn` keep the process alive no longer: it is idle. */
function idle(conn) {
  if (!busy.get(conn)) setRef(conn, false)
}

/** Runs `fn()` with `conn` holding the event loop (the statement's answer is awaited), then
 *  lets go of it again once no statement is in flight on it. */
async function holdWhileBusy(conn, fn) {
  const n = busy.get(conn) ?? 0
  busy.set(conn, n + 1)
  if (n === 0) setRef(conn, true)
  try {
    return await fn()
  } finally {
    const left = busy.get(conn) - 1
    busy.set(conn, left)
    if (left === 0) setRef(conn, false)
  }
}

/** Runs `fn()` with the event loop held by a timer: closing a connection whose socket is
 *  unref'd waits for the server's goodbye, which nothing else would wait for (a top-level
 *  `await x.close()` would end the process with "unsettled top-level await"). */
async function holdingLoop(fn) {
  const timer = setInterval(() => {}, 60_000)
  try {
    return await fn()
  } finally {
    clearInterval(timer)
  }
}

module.exports = { holdWhileBusy, holdingLoop, idle }
