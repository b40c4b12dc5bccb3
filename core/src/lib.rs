//! Time-sortable 64-bit unique IDs: Instagram's, Twitter Snowflake's, Discord's and
//! Sonyflake's layouts, or your own, from one `no_std` core.
//!
//! ```
//! use shardid::{Generator, Layout};
//!
//! let generator = Generator::new(Layout::INSTAGRAM, 5)?;
//! let id = generator.next_id_at(1_700_000_000_000)?; // time is an argument...
//! # #[cfg(feature = "std")]
//! let later = generator.next_id()?; // ...or read from the process clock (feature `std`)
//! # #[cfg(feature = "std")]
//! assert!(later > id);
//!
//! let parts = Layout::INSTAGRAM.decode(id)?;
//! assert_eq!((parts.timestamp_ms, parts.shard, parts.sequence), (1_700_000_000_000, 5, 0));
//! # Ok::<(), shardid::Error>(())
//! ```
//!
//! - [`Layout`]: presets and custom layouts; decode, compose, range bounds, expiry, scattering.
//! - [`Generator`]: lock-free, `Sync`, strictly increasing IDs for one shard.
//! - [`Error`]: one small `Copy` error type whose [`Error::code`] every binding exposes;
//!   [`ErrorKind`]: the table of every error kind of every binding (numbers, codes, messages).
//! - [`lease::LeasedGenerator`] (`std`): a shard leased from lock files, so no two processes
//!   share one and a restart continues after its predecessor's IDs.
//! - [`PublicIds`]: short, opaque, reversible text for IDs in URLs and APIs (`note_0923h26jsg2d8g`),
//!   under a secret key: hides the time, shard and order an ID would show.
//! - [`args`]: which error a bad argument gets, in every binding.
//! - [`segment`]: dense IDs from database segments (号段), the allocator every driver runs.
//! - `serial` (feature `serial`): business serial numbers (`ORD-20261125-000123`) whose
//!   number starts again every day, month or year in an IANA time zone, from segments.
//! - [`dictionary`]: the string ↔ ID dictionary's rules, server choice and clients' cache.
//! - [`ordinal`]: a shard from a Kubernetes `StatefulSet` pod's ordinal (`app-3` → 3), no
//!   store needed.
//! - [`uuid`]: the bridge to UUIDv7 and back, lossless and order-keeping.
//! - [`js`]: what JavaScript numbers hold, for the Node addon and the WebAssembly module.
//! - [`sql::Postgres`]: the DDL for a `next_id()` and decoding functions inside PostgreSQL;
//!   [`sql::Mysql`] the same for MySQL 8 and MariaDB ([`sql::mysql`]).
//!
//! On targets without 64-bit atomics the layout and decoding API still builds; the generator
//! needs `AtomicU64`.
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod args;
mod decimal;
pub mod dictionary;
mod error;
pub mod js;
mod kind;
mod layout;
pub mod ordinal;
pub mod public;
mod scatter;
pub mod stats;
pub mod uuid;

#[cfg(target_has_atomic = "64")]
mod anchor;
#[cfg(target_has_atomic = "64")]
mod generator;
#[cfg(target_has_atomic = "64")]
pub mod segment;
#[cfg(all(feature = "serial", target_has_atomic = "64"))]
pub mod serial;

#[cfg(all(feature = "sql", target_has_atomic = "64"))]
pub mod sql;

#[cfg(all(feature = "std", feature = "sql", target_has_atomic = "64"))]
pub mod cli;
#[cfg(feature = "std")]
mod clock;
#[cfg(all(
    any(
        feature = "postgres",
        feature = "mysql",
        feature = "sqlite",
        feature = "redis"
    ),
    target_has_atomic = "64"
))]
// With `redis` alone, what only the SQL drivers call (`run`, placeholders) is unused.
#[cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(dead_code)
)]
mod driver;
#[cfg(all(feature = "lease", target_has_atomic = "64"))]
pub mod lease;
#[cfg(all(feature = "sql", target_has_atomic = "64"))]
pub mod redis;
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
mod registry;
#[cfg(feature = "serde")]
pub mod serde;
#[cfg(feature = "sqlx")]
pub mod sqlx;

pub use decimal::{DecimalList, parse_decimal};
pub use error::{Error, FieldValue, Fields};
pub use kind::{CamelCase, Category, ErrorKind};
pub use layout::{FieldOrder, Layout, LayoutBuilder, Parts, RUN_OUT_WARNING_MS};
pub use public::{Encoding, PublicId, PublicIds};
pub use scatter::{SCATTER_BITS, ScatterDigits};

#[cfg(target_has_atomic = "64")]
pub use anchor::{Anchor, RESYNC_EVERY_MS};
#[cfg(target_has_atomic = "64")]
pub use generator::{DEFAULT_BACKWARDS_TOLERANCE_MS, Generator, Options, State};

#[cfg(feature = "std")]
pub use clock::{after_fork, fork_generation, now_ms};
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
pub use registry::Registry;

/// The README's Rust examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of the book (`docs/src`), run as doctests: one item per page that shows
/// Rust (tests/docs/snippets.py fails on a page with Rust that is missing here). The examples
/// that need a database are `no_run` under `cfg(feature = "postgres")`: compiled, not run.
#[cfg(doctest)]
pub mod book {
    #[doc = include_str!("../../docs/src/start/rust.md")]
    pub struct StartRust;
    #[doc = include_str!("../../docs/src/start/async-rust.md")]
    pub struct StartAsyncRust;
    #[doc = include_str!("../../docs/src/databases/redis.md")]
    pub struct Redis;
    #[doc = include_str!("../../docs/src/systems/segments.md")]
    pub struct Segments;
    #[doc = include_str!("../../docs/src/systems/serials.md")]
    pub struct Serials;
    #[doc = include_str!("../../docs/src/systems/dictionary.md")]
    pub struct Dictionary;
    #[doc = include_str!("../../docs/src/systems/public-ids.md")]
    pub struct PublicIds;
    #[doc = include_str!("../../docs/src/systems/uuid.md")]
    pub struct Uuid;
    #[doc = include_str!("../../docs/src/deploy/operations.md")]
    pub struct Operations;
    #[doc = include_str!("../../docs/src/deploy/kubernetes.md")]
    pub struct Kubernetes;
}
