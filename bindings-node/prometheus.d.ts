// shardid/prometheus: shardid's counters in a prom-client registry (needs the `prom-client`
// package).
import type { Registry } from 'prom-client'

/** A value of a shardid metric family, as prom-client's registry reads it. */
export interface ShardIdMetricValue {
  /** `<name>_bucket`, `<name>_sum` or `<name>_count` for a histogram; else the family's name. */
  metricName?: string
  /** The object's labels (`layout` and `shard`, `schema` and `tag`, ...; `le` for a bucket). */
  labels: Record<string, string>
  /** In base units: seconds where the core counts milliseconds. */
  value: number
}

/** One Prometheus metric family of shardid (`shardid_ids_total`, ...), read from the live
 *  objects at each scrape; its name, help and type are the core's. */
export interface ShardIdMetric {
  /** Its Prometheus name, e.g. `shardid_ids_total`. */
  readonly name: string
  /** Its `HELP` text. */
  readonly help: string
  /** Its Prometheus type. */
  readonly type: 'counter' | 'gauge' | 'histogram'
  /** How prom-client's cluster registry adds up workers' values. */
  readonly aggregator: 'sum' | 'max'
  /** The family with its current values (what the registry calls at a scrape). */
  get(): Promise<{ name: string; help: string; type: string; values: ShardIdMetricValue[]; aggregator: string }>
  /** Nothing: the figures are the objects' own. */
  reset(): void
}

/** Adds shardid's metric families to `registry` (prom-client's default registry if left
 *  out): every generator of the process (`shardid_ids_total{layout,shard}`,
 *  `shardid_waits_total`, ...), every dense-ID allocator and dictionary the core reports. All or
 *  nothing: a name already registered throws and adds none. Returns the families. */
export declare function register(registry?: Registry<any>): ShardIdMetric[]

/** shardid's metric families, not registered anywhere (to register yourself). */
export declare function metrics(): ShardIdMetric[]
