// Compiled by `tsc --noEmit --strict` in tests/js/run.sh, with the project's tsconfig (whose
// `lib` lacks TypeScript's `esnext.disposable`, as many users' do) and with tsconfig.esnext.json
// (`lib: ESNext` and @types/node, whose declarations of the same symbols merge with shardid's):
// `using` and `await using` on everything shardid can close, as the README shows them.
import { lease, Layout, type LeasedGenerator } from 'shardid'
import { lease as leasePostgres } from 'shardid/postgres'
import { denseIds } from 'shardid/segments'
import { Dictionary } from 'shardid/dictionary'
import { lease as leaseRedis } from 'shardid/redis'

export function lockFiles(): bigint {
  using held = lease({ layout: Layout.TWITTER, directory: '/run/app/shards', shards: [0, 64] })
  const typed: LeasedGenerator = held
  const disposable: Disposable = held
  void disposable
  return typed.nextId()
}

export async function database(): Promise<bigint> {
  await using held = await leasePostgres({ layout: Layout.INSTAGRAM, connectionString: 'postgresql://app@db/app', shards: [0, 64] })
  await using orders = await denseIds({ connectionString: 'postgresql://app@db/app', tag: 'orders' })
  await using urls = new Dictionary({ connectionString: 'postgresql://app@db/app', topic: 'urls' })
  await using onRedis = await leaseRedis({ layout: Layout.INSTAGRAM, url: 'redis://cache:6379/0', shards: [0, 64] })
  const disposables: AsyncDisposable[] = [held, orders, urls, onRedis]
  void disposables
  return (await held.nextId()) + orders.nextId() + (await urls.id('https://example.com/')) + (await onRedis.nextId())
}

// `using` needs a synchronous dispose: the database objects are `await using` only.
export function wrongKind(): void {
  // @ts-expect-error: a PostgresLease is released asynchronously
  using held = null as unknown as Awaited<ReturnType<typeof leasePostgres>>
  void held
}
