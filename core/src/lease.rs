//! Shard leases: no two processes on a host hold the same shard, and no process reissues the
//! IDs of one that held its shard before.
//!
//! The most common way snowflake IDs repeat in production is two processes with the same
//! shard: pre-fork servers whose workers inherit one generator, N copies of one configuration,
//! a restart onto a clock that was set back. A [`LeasedGenerator`] takes its shard from a
//! directory of lock files, one per shard of a configured range, each held with the OS's
//! advisory lock (`flock` on Unix, `LockFileEx` on Windows, through [`std::fs::File::try_lock`]).
//! The OS releases it when the process dies, however it dies, so a crashed worker's shard is
//! free again for the next one.
//!
//! Each lock file also records a *ceiling*: a time unit at or above every unit the holder has
//! issued. It is written before any ID above it is handed out (a little ahead, so a file write
//! happens every few hundred milliseconds, not every ID). The next holder starts its state
//! above the ceiling: after a restart, or with a clock set back, it continues after the last
//! holder's IDs within the generator's backwards tolerance and fails with
//! [`Error::ClockMovedBackwards`] beyond it, exactly as one long-lived generator would.
//! The file is written, not synced: the ceiling survives the process (killed or not), and a
//! machine that loses its page cache takes longer to reboot than the ceiling runs ahead.
//!
//! After `fork()`, a leased generator used in the child takes a new lease of its own in the
//! child (the bindings' at-fork hooks call [`crate::after_fork`], which tells it), so a
//! pre-fork server's workers get one shard each.

use std::boxed::Box;
use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::string::String;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::{Error, ErrorKind, Generator, Layout, Options};

/// How many nested forks a leased generator follows (a child of a child of ...).
const FORK_DEPTH: usize = 8;

/// Why a lease could not be taken or kept.
#[derive(Debug)]
#[non_exhaustive]
pub enum LeaseError {
    /// An error of the generator (clock moved backwards, expiry, shard out of range).
    Id(Error),
    /// Every shard of the range is held by a live process.
    NoFreeShard {
        /// The directory of lock files.
        directory: PathBuf,
        /// The range of shards that were tried.
        shards: Range<u64>,
    },
    /// A lock file records another layout: the directory belongs to other IDs.
    OtherLayout {
        /// The lock file.
        path: PathBuf,
    },
    /// Reading or writing a lock file failed.
    Io(std::io::Error),
    /// The store reported that this process no longer holds the shard (a database lease
    /// whose session ended): no ID above the recorded ceiling is handed out.
    Lost {
        /// The shard that was held.
        shard: u64,
    },
}

/// What a [`CeilingStore`] wraps in its `io::Error` (`io::Error::other(LostLease)`) when the
/// lease it records for is no longer held: the generator then reports [`LeaseError::Lost`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostLease;

impl fmt::Display for LostLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the lease is no longer held")
    }
}

impl std::error::Error for LostLease {}

impl LeaseError {
    /// The kind of the shared table this error is reported as in every binding.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Id(e) => e.kind(),
            Self::NoFreeShard { .. } => ErrorKind::NoFreeShard,
            Self::OtherLayout { .. } | Self::Io(_) => ErrorKind::LeaseFile,
            Self::Lost { .. } => ErrorKind::LeaseLost,
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Id(e) => e.fmt(f),
            Self::NoFreeShard { directory, shards } => {
                ErrorKind::NoFreeShard.render(f, |name, f| match name {
                    "first" => write!(f, "{}", shards.start),
                    "end" => write!(f, "{}", shards.end),
                    _ => write!(f, "lock files in {}", directory.display()),
                })
            }
            Self::OtherLayout { path } => ErrorKind::LeaseFile.render(f, |_, f| {
                write!(
                    f,
                    "{} records another layout: use a directory per layout",
                    path.display()
                )
            }),
            Self::Io(e) => ErrorKind::LeaseFile.render(f, |_, f| write!(f, "{e}")),
            Self::Lost { shard } => ErrorKind::LeaseLost.render(f, |_, f| write!(f, "{shard}")),
        }
    }
}

impl std::error::Error for LeaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Id(e) => Some(e),
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for LeaseError {
    fn from(e: Error) -> Self {
        Self::Id(e)
    }
}

impl From<std::io::Error> for LeaseError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// Where a [`CeilingGenerator`] records its ceiling: a lock file here, a database row in a
/// binding's lease on PostgreSQL.
pub trait CeilingStore: Send + Sync + fmt::Debug {
    /// Records a ceiling of at least `at_least` time units (the unit of an ID about to be
    /// handed out), ideally `wanted` (a span ahead, so the next records are rarer), and
    /// returns the ceiling it recorded. Called before any ID above the previous ceiling is
    /// handed out; an error keeps that ID from being handed out.
    ///
    /// # Errors
    /// Whatever kept the ceiling from being recorded.
    fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64>;

    /// Gives up the lease at once (a lock file's lock, a database session), so another
    /// process can take the shard; later calls to [`CeilingStore::store`] fail. The default
    /// does nothing: a store whose lease ends some other way.
    fn release(&self) {}
}

/// A generator that never hands out an ID above the ceiling its [`CeilingStore`] has
/// recorded: it records a new one (a span ahead) first. Started above a recorded ceiling, it
/// never repeats an ID issued under that ceiling. [`LeasedGenerator`] is one on a lock file;
/// bindings build their database leases on it.
#[derive(Debug)]
pub struct CeilingGenerator {
    generator: Generator,
    /// The ceiling last recorded, in time units.
    ceiling: AtomicU64,
    /// How far ahead of an ID a new ceiling is recorded, in time units.
    span: u64,
    store: Box<dyn CeilingStore>,
    /// Serialises recording, so the store sees increasing ceilings.
    recording: Mutex<()>,
}

impl CeilingGenerator {
    /// A generator for `shard` whose first ID is above `recorded` (the ceiling the shard's
    /// last holder recorded, if any).
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub fn new(
        layout: Layout,
        shard: u64,
        options: Options,
        recorded: Option<u64>,
        store: Box<dyn CeilingStore>,
    ) -> Result<Self, Error> {
        let seq_bits = u32::from(layout.sequence_bits());
        // The next free slot: the first of the unit after the ceiling.
        let state = recorded.map_or(0, |units| (units + 1) << seq_bits);
        let generator = Generator::with_state(AtomicU64::new(state), layout, shard, options)?;
        // 100 ms, or half the backwards tolerance if that is less, and at least one unit: a
        // successor that starts at once waits at most this long for the clock to pass the
        // ceiling, and the store is written at most once per span.
        let span_ms = (options.backwards_tolerance_ms / 2).min(100);
        Ok(Self {
            generator,
            ceiling: AtomicU64::new(recorded.unwrap_or(0)),
            span: (span_ms / layout.unit_ms()).max(1),
            store,
            recording: Mutex::new(()),
        })
    }

    /// The shard.
    pub const fn shard(&self) -> u64 {
        self.generator.shard()
    }

    /// The layout.
    pub const fn layout(&self) -> Layout {
        self.generator.layout()
    }

    /// Releases the store's lease ([`CeilingStore::release`]).
    pub fn release(&self) {
        self.store.release();
    }

    /// Issues one ID now, as [`Generator::next_id`], after recording a new ceiling if the ID
    /// is above the current one.
    ///
    /// # Errors
    /// [`LeaseError::Id`] as [`Generator::next_id`]; [`LeaseError::Io`] when the ceiling
    /// cannot be recorded (the ID is then not handed out).
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        let id = self.generator.next_id()?;
        self.cover(id)?;
        Ok(id)
    }

    /// Issues one ID as if the clock read `now_ms`, as [`Generator::next_id_at`].
    ///
    /// # Errors
    /// As [`CeilingGenerator::next_id`], and [`Error::SequenceExhausted`].
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        let id = self.generator.next_id_at(now_ms)?;
        self.cover(id)?;
        Ok(id)
    }

    /// Fills `out` with IDs now, as [`Generator::next_ids`].
    ///
    /// # Errors
    /// As [`CeilingGenerator::next_id`]; on an error none of `out` may be used.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
        self.generator.next_ids(out)?;
        if let Some(&last) = out.last() {
            self.cover(last)?;
        }
        Ok(())
    }

    /// Makes sure the ceiling covers `id`'s time unit before `id` is handed out.
    #[inline]
    fn cover(&self, id: u64) -> Result<(), LeaseError> {
        let units = id >> self.generator.layout().time_shift();
        if units <= self.ceiling.load(Ordering::Acquire) {
            return Ok(());
        }
        // A panic while recording leaves at worst an older ceiling, which the next record
        // replaces: keep using the lock.
        let _recording = self
            .recording
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if units <= self.ceiling.load(Ordering::Acquire) {
            return Ok(());
        }
        let ceiling =
            self.store
                .store(units, units + self.span)
                .map_err(|e| match e.get_ref() {
                    Some(inner) if inner.is::<LostLease>() => LeaseError::Lost {
                        shard: self.shard(),
                    },
                    _ => LeaseError::Io(e),
                })?;
        if ceiling < units {
            return Err(LeaseError::Io(std::io::Error::other(
                "the ceiling store recorded less than it was asked to",
            )));
        }
        self.ceiling.store(ceiling, Ordering::Release);
        Ok(())
    }
}

/// The lock file of a leased shard, which also records its ceiling. `None` once released.
#[derive(Debug)]
struct LockFile {
    file: Mutex<Option<File>>,
    signature: String,
}

impl CeilingStore for LockFile {
    fn store(&self, _at_least: u64, units: u64) -> std::io::Result<u64> {
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(file) = file.as_mut() else {
            return Err(std::io::Error::other(LostLease));
        };
        let text = std::format!(
            "shardid lease: the last time unit this shard may have issued\nlayout {}\nceiling {units}\n",
            self.signature
        );
        file.seek(SeekFrom::Start(0))?;
        file.write_all(text.as_bytes())?;
        file.set_len(text.len() as u64)?;
        Ok(units)
    }

    fn release(&self) {
        // Closing the file releases its lock (in this process: a forked child's inherited
        // handle keeps it until the child closes it too).
        drop(
            self.file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
    }
}

/// A generator on a shard leased from a directory of lock files: see the [module](self) docs.
///
/// `Sync`: share it between threads. Dropping it releases the shard.
#[derive(Debug)]
pub struct LeasedGenerator {
    directory: PathBuf,
    shards: Range<u64>,
    layout: Layout,
    options: Options,
    /// The lease of this process and, after forks, of each child generation in turn.
    held: [OnceLock<CeilingGenerator>; FORK_DEPTH],
    /// Which entry of `held` is this process's.
    current: AtomicUsize,
    /// The fork generation `current` belongs to.
    generation: AtomicU64,
    /// Set by [`LeasedGenerator::close`].
    closed: std::sync::atomic::AtomicBool,
}

impl LeasedGenerator {
    /// Leases the first free shard of `shards` from lock files `shard-<n>.lock` in
    /// `directory` (created if missing) and makes a generator for it, starting above the
    /// ceiling the last holder recorded.
    ///
    /// # Errors
    /// [`LeaseError::NoFreeShard`], naming the range; [`LeaseError::Io`];
    /// [`LeaseError::OtherLayout`]; [`LeaseError::Id`] with [`Error::ShardOutOfRange`] when
    /// the range does not fit the layout.
    pub fn acquire(
        directory: impl AsRef<Path>,
        shards: Range<u64>,
        layout: Layout,
        options: Options,
    ) -> Result<Self, LeaseError> {
        let this = Self {
            directory: directory.as_ref().to_path_buf(),
            shards,
            layout,
            options,
            held: Default::default(),
            current: AtomicUsize::new(0),
            generation: AtomicU64::new(crate::clock::fork_generation()),
            closed: std::sync::atomic::AtomicBool::new(false),
        };
        let held = this.lease()?;
        let _ = this.held[0].set(held);
        Ok(this)
    }

    /// Takes the first free shard of the range.
    fn lease(&self) -> Result<CeilingGenerator, LeaseError> {
        if self.shards.end > 0 && self.shards.end - 1 > self.layout.max_shard() {
            return Err(Error::ShardOutOfRange {
                shard: self.shards.end - 1,
                max: self.layout.max_shard(),
            }
            .into());
        }
        std::fs::create_dir_all(&self.directory)?;
        for shard in self.shards.clone() {
            let path = self.directory.join(std::format!("shard-{shard}.lock"));
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            match file.try_lock() {
                Ok(()) => return self.take(shard, file, &path),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        Err(LeaseError::NoFreeShard {
            directory: self.directory.clone(),
            shards: self.shards.clone(),
        })
    }

    /// Starts a generator for `shard` above the ceiling its lock file records.
    fn take(
        &self,
        shard: u64,
        mut file: File,
        path: &Path,
    ) -> Result<CeilingGenerator, LeaseError> {
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let signature = signature(&self.layout);
        let mut ceiling = None;
        for line in text.lines() {
            if let Some(recorded) = line.strip_prefix("layout ") {
                if recorded != signature {
                    return Err(LeaseError::OtherLayout {
                        path: path.to_path_buf(),
                    });
                }
            } else if let Some(units) = line.strip_prefix("ceiling ") {
                ceiling = units.parse::<u64>().ok();
            }
        }
        let store = LockFile {
            file: Mutex::new(Some(file)),
            signature,
        };
        if ceiling.is_none() {
            store.store(0, 0)?; // claims the file for this layout
        }
        Ok(CeilingGenerator::new(
            self.layout,
            shard,
            self.options,
            ceiling,
            Box::new(store),
        )?)
    }

    /// This process's lease: a new one when this is a forked child of the process that took
    /// the current one.
    fn held(&self) -> Result<&CeilingGenerator, LeaseError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(self.lost());
        }
        let generation = crate::clock::fork_generation();
        if self.generation.load(Ordering::Acquire) == generation {
            let index = self.current.load(Ordering::Acquire);
            if let Some(held) = self.held[index].get() {
                return Ok(held);
            }
        }
        // A forked child: the parent keeps its shard (and our copy of its lock file handle
        // holds the lock with it). Take another one; the parent's state is never used here.
        let next = self.current.load(Ordering::Acquire) + 1;
        let Some(slot) = self.held.get(next) else {
            return Err(LeaseError::Io(std::io::Error::other(
                "a leased generator follows at most 8 nested forks",
            )));
        };
        if slot.get().is_none() {
            let held = self.lease()?;
            let _ = slot.set(held);
        }
        self.current.store(next, Ordering::Release);
        self.generation.store(generation, Ordering::Release);
        slot.get()
            .ok_or_else(|| LeaseError::Io(std::io::Error::other("lease not set")))
    }

    /// The shard this process holds (after [`LeasedGenerator::close`], the one it held).
    ///
    /// # Errors
    /// As [`LeasedGenerator::next_id`], in a forked child that must take a new lease.
    pub fn shard(&self) -> Result<u64, LeaseError> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(self.last_shard());
        }
        Ok(self.held()?.shard())
    }

    /// Releases the shard at once — another process can take it, and continues above the
    /// ceiling recorded — and makes no more IDs: every later call fails with
    /// [`LeaseError::Lost`]. Dropping the generator does the same; this is for the bindings,
    /// whose objects the host language frees when it pleases. Closing twice is fine.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for held in self.held.iter().filter_map(OnceLock::get) {
            held.release();
        }
    }

    /// The shard of the lease taken last.
    fn last_shard(&self) -> u64 {
        let index = self.current.load(Ordering::Acquire);
        self.held[index]
            .get()
            .map_or(self.shards.start, CeilingGenerator::shard)
    }

    fn lost(&self) -> LeaseError {
        LeaseError::Lost {
            shard: self.last_shard(),
        }
    }

    /// The layout.
    pub const fn layout(&self) -> Layout {
        self.layout
    }

    /// The directory of lock files.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// Issues one ID now, as [`Generator::next_id`], after recording a new ceiling if the ID
    /// is above the current one.
    ///
    /// # Errors
    /// [`LeaseError::Id`] as [`Generator::next_id`]; [`LeaseError::Io`] when the ceiling
    /// cannot be written (the ID is then not handed out); lease errors in a forked child.
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        self.held()?.next_id()
    }

    /// Issues one ID as if the clock read `now_ms`, as [`Generator::next_id_at`].
    ///
    /// # Errors
    /// As [`LeasedGenerator::next_id`], and [`Error::SequenceExhausted`].
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        self.held()?.next_id_at(now_ms)
    }

    /// Fills `out` with IDs now, as [`Generator::next_ids`].
    ///
    /// # Errors
    /// As [`LeasedGenerator::next_id`]; on an error none of `out` may be used.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
        self.held()?.next_ids(out)
    }
}

/// The layout's defining numbers, recorded in each lock file.
pub fn signature(layout: &Layout) -> String {
    std::string::ToString::to_string(&crate::sql::LeaseSignature(*layout))
}
