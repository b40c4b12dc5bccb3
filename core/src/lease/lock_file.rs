//! Leases from a directory of lock files, one per shard, held with the OS's advisory lock;
//! each file records its shard's ceiling. Follows `fork()`: a child takes a lease of its own.

use std::boxed::Box;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::string::String;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use super::{CeilingGenerator, CeilingStore, LeaseError, LostLease};
use crate::{Error, Layout, Options};

/// How many nested forks a leased generator follows (a child of a child of ...).
const FORK_DEPTH: usize = 8;

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
        let text = render_lock_file(&self.signature, units);
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

/// The first line of every lock file.
const LOCK_FILE_HEADER: &str = "shardid lease: the last time unit this shard may have issued";

/// A lock file's text: the header, the layout's [`signature`], the ceiling in time units.
fn render_lock_file(signature: &str, ceiling_units: u64) -> String {
    std::format!("{LOCK_FILE_HEADER}\nlayout {signature}\nceiling {ceiling_units}\n")
}

/// Why a lock file's text cannot be trusted: see [`read_lock_file`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockFileError {
    /// The file records another layout: the directory belongs to other IDs.
    OtherLayout,
    /// Line `line` (from 1; the line after the last when one is missing) is not what
    /// [`LeasedGenerator`] writes.
    Unreadable {
        /// The line, counted from 1.
        line: usize,
    },
}

/// What a [`LeasedGenerator`]'s lock file says for `layout`: the ceiling (in time units) its
/// last holder recorded, or `None` for an empty (new) file.
///
/// Strict, because the ceiling is what keeps a successor above its predecessor's IDs: a file
/// that is not exactly a header line, a `layout` line and a `ceiling` line of plain digits
/// is refused rather than read as "no ceiling" (which would let a successor whose clock is
/// behind repeat IDs). Operators can call it to inspect a lease directory.
///
/// # Errors
/// [`LockFileError::OtherLayout`] when the file is another layout's,
/// [`LockFileError::Unreadable`] when it is not what shardid writes.
pub fn read_lock_file(text: &str, layout: &Layout) -> Result<Option<u64>, LockFileError> {
    if text.is_empty() {
        return Ok(None);
    }
    let unreadable = |line| Err(LockFileError::Unreadable { line });
    if !text.ends_with('\n') {
        // A write that stopped part way: the last line is cut.
        return unreadable(text.matches('\n').count() + 1);
    }
    let mut lines = text.split_terminator('\n');
    if lines.next() != Some(LOCK_FILE_HEADER) {
        return unreadable(1);
    }
    match lines.next().map(|l| l.strip_prefix("layout ")) {
        Some(Some(recorded)) if recorded == signature(layout) => {}
        Some(Some(_)) => return Err(LockFileError::OtherLayout),
        _ => return unreadable(2),
    }
    let ceiling = match lines.next().map(|l| l.strip_prefix("ceiling ")) {
        Some(Some(units)) => match crate::parse_decimal(units.as_bytes()) {
            Some(units) => units,
            None => return unreadable(3),
        },
        _ => return unreadable(3),
    };
    if lines.next().is_some() {
        return unreadable(4);
    }
    Ok(Some(ceiling))
}

/// A generator on a shard leased from a directory of lock files: see the [module](super) docs.
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

/// An I/O error on `path`, naming it: "permission denied" alone does not say which directory
/// the settings pointed at.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> LeaseError + '_ {
    move |e| {
        LeaseError::Io(std::io::Error::new(
            e.kind(),
            std::format!("{}: {e}", path.display()),
        ))
    }
}

impl LeasedGenerator {
    /// Leases the first free shard of `shards` from lock files `shard-<n>.lock` in
    /// `directory` (created if missing) and makes a generator for it, starting above the
    /// ceiling the last holder recorded.
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::NoFreeShard`], naming the range;
    /// [`LeaseError::Io`], naming the file or directory;
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
        if self.shards.is_empty() {
            return Err(LeaseError::EmptyShards {
                shards: self.shards.clone(),
            });
        }
        if self.shards.end > 0 && self.shards.end - 1 > self.layout.max_shard() {
            return Err(Error::ShardOutOfRange {
                shard: self.shards.end - 1,
                max: self.layout.max_shard(),
            }
            .into());
        }
        std::fs::create_dir_all(&self.directory).map_err(at(&self.directory))?;
        for shard in self.shards.clone() {
            let path = self.directory.join(std::format!("shard-{shard}.lock"));
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(at(&path))?;
            match file.try_lock() {
                Ok(()) => return self.take(shard, file, &path),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(at(&path)(e)),
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
        file.read_to_string(&mut text).map_err(at(path))?;
        let signature = signature(&self.layout);
        let ceiling = read_lock_file(&text, &self.layout).map_err(|e| match e {
            LockFileError::OtherLayout => LeaseError::OtherLayout {
                path: path.to_path_buf(),
            },
            LockFileError::Unreadable { line } => {
                LeaseError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    std::format!(
                        "{}: line {line} is not what shardid writes; the shard's ceiling cannot be read, so it is not leased (remove the file only if no process of this layout used the shard)",
                        path.display()
                    ),
                ))
            }
        })?;
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
            return Err(LeaseError::Closed {
                shard: self.last_shard(),
            });
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
    /// [`LeaseError::Closed`]. Dropping the generator does the same; this is for the bindings,
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

    /// The layout.
    pub const fn layout(&self) -> Layout {
        self.layout
    }

    /// The directory of lock files.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// Issues one ID now, as [`Generator::next_id`](crate::Generator::next_id), after recording a new ceiling if the ID
    /// is above the current one.
    ///
    /// # Errors
    /// [`LeaseError::Id`] as [`Generator::next_id`](crate::Generator::next_id); [`LeaseError::Io`] when the ceiling
    /// cannot be written (the ID is then not handed out); lease errors in a forked child.
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        self.held()?.next_id()
    }

    /// Issues one ID as if the clock read `now_ms`, as [`Generator::next_id_at`](crate::Generator::next_id_at).
    ///
    /// # Errors
    /// As [`LeasedGenerator::next_id`], and [`Error::SequenceExhausted`].
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        self.held()?.next_id_at(now_ms)
    }

    /// Fills `out` with IDs now, as [`Generator::next_ids`](crate::Generator::next_ids).
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
