// shardid/opentelemetry: shardid's counters as OpenTelemetry observable instruments (needs the
// `@opentelemetry/api` package).
import type { Meter, ObservableCounter, ObservableGauge } from '@opentelemetry/api'

/** Creates shardid's observable instruments on `meter` (`metrics.getMeter('shardid')` of
 *  `@opentelemetry/api` if left out): `shardid.ids`, `shardid.waits`, ... with attributes
 *  `layout` and `shard`, the dense-ID allocators' `shardid.segment.*` and the dictionaries'
 *  `shardid.dictionary.*`, read when the SDK collects. Returns them. */
export declare function instrument(meter?: Meter): Array<ObservableCounter | ObservableGauge>
