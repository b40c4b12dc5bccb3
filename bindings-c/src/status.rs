//! Status codes, and the one panic boundary every exported function runs inside.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// What a `shardid_*` function reports. `SHARDID_OK` is 0; every other value is the number
/// of one kind of the core's table of error kinds (`shardid::ErrorKind`), which also gives the
/// Python exceptions, the JS `err.code`s and the WebAssembly statuses.
///
/// The values are stable: new kinds get new numbers, old numbers are never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum shardid_status {
    /// Success: the output parameters were written.
    SHARDID_OK = 0,
    /// The layout's parameters do not describe a usable ID space.
    SHARDID_ERR_INVALID_LAYOUT = 1,
    /// A shard number does not fit the layout's shard field.
    SHARDID_ERR_SHARD_OUT_OF_RANGE = 2,
    /// A sequence number does not fit the layout's sequence field.
    SHARDID_ERR_SEQUENCE_OUT_OF_RANGE = 3,
    /// A count of logical shards that is zero or larger than the shard field holds.
    SHARDID_ERR_INVALID_SHARD_COUNT = 4,
    /// The value is not an ID this layout can produce.
    SHARDID_ERR_INVALID_ID = 5,
    /// Scattering would produce a value outside the layout's ID range.
    SHARDID_ERR_SCATTER_OVERFLOW = 6,
    /// A timestamp earlier than the layout's epoch.
    SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH = 7,
    /// A timestamp later than the last one the layout can represent.
    SHARDID_ERR_TIMESTAMP_PAST_EXPIRY = 8,
    /// The clock is further behind the last issued ID than the generator tolerates.
    SHARDID_ERR_CLOCK_MOVED_BACKWARDS = 9,
    /// Every sequence number of the time unit is used; nothing was issued. Retry in the next
    /// time unit.
    SHARDID_ERR_SEQUENCE_EXHAUSTED = 10,
    /// A required pointer argument was `NULL`.
    SHARDID_ERR_NULL_ARGUMENT = 100,
    /// The library hit a bug (a Rust panic), caught before it crossed into C. Nothing was
    /// written; please report it.
    SHARDID_ERR_PANIC = 101,
    /// Leases: every shard of the range is held by a live process.
    SHARDID_ERR_NO_FREE_SHARD = 102,
    /// Leases: a lock file could not be read or written, or records another layout.
    SHARDID_ERR_LEASE_FILE = 103,
    /// An argument with no status of its own has a wrong value (a path that is not UTF-8, an
    /// empty range).
    SHARDID_ERR_INVALID_ARGUMENT = 104,
    /// Leases: the hold on the shard was lost. Not returned by the C API today (its leases
    /// are lock files, which cannot be lost); reserved so every binding shares the numbers.
    SHARDID_ERR_LEASE_LOST = 105,
    /// A generator made before `fork()` was used in the child, where its IDs would repeat the
    /// parent's: nothing was issued. (A lease used in a child takes a shard of its own instead.)
    SHARDID_ERR_FORKED_GENERATOR = 106,
    /// The operation is not available in this build. Not returned by the C API today.
    SHARDID_ERR_UNSUPPORTED = 107,
    /// Dense IDs: no segment is available (the database did not answer in time). Not returned
    /// by the C API (C programs call the segment functions with libpq).
    SHARDID_ERR_SEGMENT_UNAVAILABLE = 108,
    /// Dense IDs: the tag does not exist. Not returned by the C API.
    SHARDID_ERR_UNKNOWN_TAG = 109,
    /// Dictionary: the topic does not exist. Not returned by the C API (C programs call the
    /// dictionary's functions with libpq).
    SHARDID_ERR_UNKNOWN_TOPIC = 110,
    /// Dictionary: the topic was dropped and assigns no new IDs. Not returned by the C API.
    SHARDID_ERR_TOPIC_DROPPED = 111,
    /// A statement failed in the database, or could not reach it. Not returned by the C API.
    SHARDID_ERR_DATABASE = 112,
    /// A session lease shares its server session with another connection (a transaction
    /// pooler). Not returned by the C API.
    SHARDID_ERR_SESSION_POOLED = 113,
    /// A database lease: this host's clock is too far ahead of the database's. Not returned
    /// by the C API (C has lock-file leases only).
    SHARDID_ERR_CLOCK_SKEW = 114,
    /// Public IDs: the text does not start with its type's prefix and `_`.
    SHARDID_ERR_PUBLIC_ID_PREFIX = 120,
    /// Public IDs: the wrong number of symbols after the prefix.
    SHARDID_ERR_PUBLIC_ID_LENGTH = 121,
    /// Public IDs: a character outside the encoding's alphabet.
    SHARDID_ERR_PUBLIC_ID_ALPHABET = 122,
    /// Public IDs: the check symbol does not match (`base32check`).
    SHARDID_ERR_PUBLIC_ID_CHECK = 123,
    /// Public IDs: the text was made with a key version not held.
    SHARDID_ERR_UNKNOWN_KEY_VERSION = 124,
    /// Public IDs: the digits spell a value of 2^64 or more.
    SHARDID_ERR_PUBLIC_ID_OVERFLOW = 125,
    /// Public IDs: the text is not one of these IDs (made under another key or type, or
    /// altered).
    SHARDID_ERR_PUBLIC_ID_MISMATCH = 126,
    /// The server a `mysql://` URL names did not answer as MySQL or MariaDB. Not returned by
    /// the C API.
    SHARDID_ERR_NOT_MYSQL = 140,
    /// The object was closed and makes no more calls. Not returned by the C API (its objects
    /// are closed by being freed).
    SHARDID_ERR_CLOSED = 160,
    /// The database could not be reached. Not returned by the C API.
    SHARDID_ERR_DATABASE_UNREACHABLE = 161,
    /// Serials: a format that cannot be parsed or could print one serial twice.
    SHARDID_ERR_INVALID_SERIAL_FORMAT = 130,
    /// Serials: a time zone that is not in the IANA tz database.
    SHARDID_ERR_UNKNOWN_TIME_ZONE = 131,
    /// Serials: text that the format cannot have made (mistyped, a wrong check digit, an
    /// impossible date).
    SHARDID_ERR_INVALID_SERIAL = 132,
    /// Serials: a number past the format's width.
    SHARDID_ERR_SERIAL_OVERFLOW = 133,
    /// Serials: the tag is registered in the database with another format or zone. Not
    /// returned by the C API (C programs call the database's functions with libpq).
    SHARDID_ERR_SERIAL_MISMATCH = 134,
}

use shardid::ErrorKind;
use shardid_status::{SHARDID_ERR_NULL_ARGUMENT, SHARDID_ERR_PANIC, SHARDID_OK};

/// Every status but `SHARDID_OK`, each with the core's kind of the same number and name
/// (checked at compile time below), so the C enum cannot drift from the core's table.
const STATUSES: [(shardid_status, ErrorKind); 40] = {
    #[allow(clippy::enum_glob_use)] // a table of every variant
    use shardid_status::*;
    [
        (SHARDID_ERR_INVALID_LAYOUT, ErrorKind::InvalidLayout),
        (SHARDID_ERR_SHARD_OUT_OF_RANGE, ErrorKind::ShardOutOfRange),
        (
            SHARDID_ERR_SEQUENCE_OUT_OF_RANGE,
            ErrorKind::SequenceOutOfRange,
        ),
        (
            SHARDID_ERR_INVALID_SHARD_COUNT,
            ErrorKind::InvalidShardCount,
        ),
        (SHARDID_ERR_INVALID_ID, ErrorKind::InvalidId),
        (SHARDID_ERR_SCATTER_OVERFLOW, ErrorKind::ScatterOverflow),
        (
            SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH,
            ErrorKind::TimestampBeforeEpoch,
        ),
        (
            SHARDID_ERR_TIMESTAMP_PAST_EXPIRY,
            ErrorKind::TimestampPastExpiry,
        ),
        (
            SHARDID_ERR_CLOCK_MOVED_BACKWARDS,
            ErrorKind::ClockMovedBackwards,
        ),
        (SHARDID_ERR_SEQUENCE_EXHAUSTED, ErrorKind::SequenceExhausted),
        (SHARDID_ERR_NULL_ARGUMENT, ErrorKind::NullArgument),
        (SHARDID_ERR_PANIC, ErrorKind::Panic),
        (SHARDID_ERR_NO_FREE_SHARD, ErrorKind::NoFreeShard),
        (SHARDID_ERR_LEASE_FILE, ErrorKind::LeaseFile),
        (SHARDID_ERR_INVALID_ARGUMENT, ErrorKind::InvalidArgument),
        (SHARDID_ERR_LEASE_LOST, ErrorKind::LeaseLost),
        (SHARDID_ERR_FORKED_GENERATOR, ErrorKind::ForkedGenerator),
        (SHARDID_ERR_UNSUPPORTED, ErrorKind::Unsupported),
        (
            SHARDID_ERR_SEGMENT_UNAVAILABLE,
            ErrorKind::SegmentUnavailable,
        ),
        (SHARDID_ERR_UNKNOWN_TAG, ErrorKind::UnknownTag),
        (SHARDID_ERR_UNKNOWN_TOPIC, ErrorKind::UnknownTopic),
        (SHARDID_ERR_TOPIC_DROPPED, ErrorKind::TopicDropped),
        (SHARDID_ERR_DATABASE, ErrorKind::Database),
        (SHARDID_ERR_SESSION_POOLED, ErrorKind::SessionPooled),
        (SHARDID_ERR_CLOCK_SKEW, ErrorKind::ClockSkew),
        (SHARDID_ERR_PUBLIC_ID_PREFIX, ErrorKind::PublicIdPrefix),
        (SHARDID_ERR_PUBLIC_ID_LENGTH, ErrorKind::PublicIdLength),
        (SHARDID_ERR_PUBLIC_ID_ALPHABET, ErrorKind::PublicIdAlphabet),
        (SHARDID_ERR_PUBLIC_ID_CHECK, ErrorKind::PublicIdCheck),
        (
            SHARDID_ERR_UNKNOWN_KEY_VERSION,
            ErrorKind::UnknownKeyVersion,
        ),
        (SHARDID_ERR_PUBLIC_ID_OVERFLOW, ErrorKind::PublicIdOverflow),
        (SHARDID_ERR_PUBLIC_ID_MISMATCH, ErrorKind::PublicIdMismatch),
        (SHARDID_ERR_NOT_MYSQL, ErrorKind::NotMysql),
        (SHARDID_ERR_CLOSED, ErrorKind::Closed),
        (
            SHARDID_ERR_DATABASE_UNREACHABLE,
            ErrorKind::DatabaseUnreachable,
        ),
        (
            SHARDID_ERR_INVALID_SERIAL_FORMAT,
            ErrorKind::InvalidSerialFormat,
        ),
        (SHARDID_ERR_UNKNOWN_TIME_ZONE, ErrorKind::UnknownTimeZone),
        (SHARDID_ERR_INVALID_SERIAL, ErrorKind::InvalidSerial),
        (SHARDID_ERR_SERIAL_OVERFLOW, ErrorKind::SerialOverflow),
        (SHARDID_ERR_SERIAL_MISMATCH, ErrorKind::SerialMismatch),
    ]
};

// The C enum's numbers are the core's: a status whose number differs fails the build.
const _: () = {
    let mut i = 0;
    while i < STATUSES.len() {
        assert!(STATUSES[i].0 as u32 == STATUSES[i].1.number());
        i += 1;
    }
};

impl shardid_status {
    /// The status of a core error kind; `SHARDID_ERR_PANIC` for a kind this enum lacks, which
    /// `every_core_kind_has_its_status` rules out.
    pub(crate) fn of(kind: ErrorKind) -> Self {
        STATUSES
            .iter()
            .find(|(_, k)| *k == kind)
            .map_or(SHARDID_ERR_PANIC, |(s, _)| *s)
    }
}

/// `"SHARDID_ERR_<CODE>: <summary>"` for every status, NUL-terminated, made once from the
/// core's table.
fn descriptions() -> &'static [(u32, std::ffi::CString)] {
    static TEXTS: std::sync::OnceLock<Vec<(u32, std::ffi::CString)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| {
        let mut texts = vec![(
            SHARDID_OK as u32,
            std::ffi::CString::from(c"SHARDID_OK: success"),
        )];
        for (status, kind) in STATUSES {
            let text = format!("SHARDID_ERR_{}: {}", kind.code(), kind.summary());
            // The core's summaries hold no NUL; if one ever did, say so rather than panic.
            let text = std::ffi::CString::new(text)
                .unwrap_or_else(|_| std::ffi::CString::from(c"SHARDID_ERR_PANIC: bad summary"));
            texts.push((status as u32, text));
        }
        texts
    })
}

impl From<shardid::Error> for shardid_status {
    fn from(e: shardid::Error) -> Self {
        remember(Self::of(e.kind()), &e)
    }
}

impl From<shardid::lease::LeaseError> for shardid_status {
    fn from(e: shardid::lease::LeaseError) -> Self {
        remember(Self::of(e.kind()), &e)
    }
}

std::thread_local! {
    /// The core's message for the error a call of this thread is turning into a status
    /// (`From<shardid::Error>`), picked up by [`boundary`] when the call fails with that status.
    static PENDING: std::cell::RefCell<Option<(shardid_status, String)>> =
        const { std::cell::RefCell::new(None) };
    /// What `shardid_last_error_message()` answers: the message of this thread's last failure.
    static LAST: std::cell::RefCell<std::ffi::CString> =
        std::cell::RefCell::new(std::ffi::CString::default());
}

/// Keeps the core's message for `status` (its `Display`: the text Python's exceptions and JS's
/// `err.message` carry) until the call's boundary. Runs on error paths only.
fn remember(status: shardid_status, e: &dyn std::fmt::Display) -> shardid_status {
    let text = e.to_string();
    // `try_with`: a thread being torn down keeps no message rather than panicking.
    let _ = PENDING.try_with(|pending| *pending.borrow_mut() = Some((status, text)));
    status
}

/// Records the message of a call that failed with `status`: the core's, when the error that
/// became this status left one, else the kind's message from the core's table when it has no
/// fields to fill (`"a required pointer argument was NULL"`), else its summary.
#[cold]
fn record_failure(status: shardid_status) {
    let pending = PENDING.try_with(|p| p.borrow_mut().take()).ok().flatten();
    let text = match pending {
        Some((kept, text)) if kept == status => text,
        _ => STATUSES.iter().find(|(s, _)| *s == status).map_or_else(
            || "a status without a message".to_owned(),
            |(_, kind)| match kind.template() {
                template if !template.contains('{') => template.to_owned(),
                _ => kind.summary().to_owned(),
            },
        ),
    };
    // The core's messages hold no NUL; if one ever did, the text stops before it.
    let text = std::ffi::CString::new(text).unwrap_or_else(|e| {
        let end = e.nul_position();
        let mut bytes = e.into_vec();
        bytes.truncate(end);
        std::ffi::CString::new(bytes).unwrap_or_default()
    });
    let _ = LAST.try_with(|last| *last.borrow_mut() = text);
}

/// The message of the last error a `shardid_*` function returned in this thread, as Python's
/// exceptions and JavaScript's `err.message` carry it, with the details the status's name
/// lacks: `"shard 9000 is out of range: the layout holds 0..=8191"`, `"invalid layout: there
/// is no preset of that name: use INSTAGRAM, TWITTER, DISCORD or SONYFLAKE"`.
///
/// Read it right after a call returned a status other than `SHARDID_OK` (as `errno`): a call
/// that succeeds leaves it as it was. `""` before this thread's first failure. The string
/// belongs to the library: never free it; it stays valid until this thread's next failing
/// call or its exit.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_last_error_message() -> *const std::ffi::c_char {
    // A panic here (there is none to expect) must not unwind into C.
    catch_unwind(|| {
        LAST.try_with(|last| last.borrow().as_ptr())
            .unwrap_or(c"".as_ptr())
    })
    .unwrap_or(c"".as_ptr())
}

/// The name and a one-line explanation of a status, e.g.
/// `"SHARDID_ERR_INVALID_ID: the value is not an ID this layout can produce"`.
///
/// Takes the status as a plain integer so that any value is safe to pass; unknown values give
/// `"SHARDID_ERR_UNKNOWN: ..."`. The string is static: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn shardid_status_str(status: u32) -> *const std::ffi::c_char {
    const UNKNOWN: &std::ffi::CStr =
        c"SHARDID_ERR_UNKNOWN: not a status this version of libshardid returns";
    // A panic here (there is none to expect) must not unwind into C.
    catch_unwind(|| {
        descriptions()
            .iter()
            .find(|(number, _)| *number == status)
            .map_or(UNKNOWN.as_ptr(), |(_, text)| text.as_ptr())
    })
    .unwrap_or(UNKNOWN.as_ptr())
}

/// Runs an exported function's body: a panic becomes `SHARDID_ERR_PANIC` instead of
/// unwinding into C (undefined behaviour), and `Err(status)` becomes that status, its message
/// kept for `shardid_last_error_message()`.
pub(crate) fn boundary(body: impl FnOnce() -> Result<(), shardid_status>) -> shardid_status {
    let status = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return SHARDID_OK,
        Ok(Err(status)) => status,
        Err(_) => SHARDID_ERR_PANIC,
    };
    record_failure(status);
    status
}

/// Borrows a `const T *` argument.
///
/// # Safety
/// `ptr` is null or points to a valid, aligned `T` that stays unmodified for `'a`.
pub(crate) unsafe fn arg<'a, T>(ptr: *const T) -> Result<&'a T, shardid_status> {
    // SAFETY: the caller guarantees a non-null `ptr` is valid for reads for 'a.
    unsafe { ptr.as_ref() }.ok_or(SHARDID_ERR_NULL_ARGUMENT)
}

/// Borrows an output parameter, which may point to uninitialised memory.
///
/// Callers take every output before doing any work, so a null output is reported before an
/// ID is issued (and lost).
///
/// # Safety
/// `ptr` is null or points to memory valid for writing a `T`, aligned, and not accessed
/// through any other pointer for `'a`.
pub(crate) unsafe fn out<'a, T>(
    ptr: *mut T,
) -> Result<&'a mut std::mem::MaybeUninit<T>, shardid_status> {
    // SAFETY: the caller guarantees a non-null `ptr` is valid for writes of a `T` for 'a;
    // `MaybeUninit` makes no claim about what is there now.
    unsafe { ptr.cast::<std::mem::MaybeUninit<T>>().as_mut() }.ok_or(SHARDID_ERR_NULL_ARGUMENT)
}

/// Reads a NUL-terminated UTF-8 string argument; `SHARDID_ERR_INVALID_ARGUMENT` when it is not
/// UTF-8.
///
/// # Safety
/// `ptr` is null or a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn str_arg<'a>(ptr: *const std::ffi::c_char) -> Result<&'a str, shardid_status> {
    // SAFETY: forwarded from the caller.
    let ptr = unsafe { arg(ptr) }?;
    // SAFETY: non-null, and the caller guarantees a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| shardid_status::SHARDID_ERR_INVALID_ARGUMENT)
}

/// A caller's buffer for text (`buf`, `buf_len` bytes), taken with the other outputs before
/// any work (`text_out`) and written once the text is made (`TextOut::write`).
pub(crate) struct TextOut {
    buf: *mut std::ffi::c_char,
    len: usize,
}

/// Takes a text buffer; `SHARDID_ERR_NULL_ARGUMENT` when `buf` is null,
/// `SHARDID_ERR_INVALID_ARGUMENT` for a length no buffer has ([`span`]).
///
/// # Safety
/// `buf` is null or valid for writing `len` bytes, and not accessed through any other pointer
/// until the `TextOut` is dropped.
pub(crate) unsafe fn text_out(
    buf: *mut std::ffi::c_char,
    len: usize,
) -> Result<TextOut, shardid_status> {
    if buf.is_null() {
        return Err(SHARDID_ERR_NULL_ARGUMENT);
    }
    span(buf, len)?;
    Ok(TextOut { buf, len })
}

impl TextOut {
    /// Writes `text` and a NUL, and `text`'s length without the NUL into `out_len`;
    /// `SHARDID_ERR_INVALID_ARGUMENT` and nothing written when the buffer is too short.
    pub(crate) fn write(
        self,
        text: &str,
        out_len: &mut std::mem::MaybeUninit<usize>,
    ) -> Result<(), shardid_status> {
        let bytes = text.as_bytes();
        if self.len <= bytes.len() {
            return Err(shardid_status::SHARDID_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `buf` is non-null and valid for `len` > `bytes.len()` bytes, unshared
        // (`text_out`'s caller), so it does not overlap `text`, which the caller borrows.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.buf.cast::<u8>(), bytes.len());
            self.buf.add(bytes.len()).write(0);
        }
        out_len.write(bytes.len());
        Ok(())
    }
}

/// Drops what a `shardid_*_new` handed out as a `Box` (the body of every `shardid_*_free`,
/// which runs it behind the boundary: dropping runs the core's `Drop`s, and a panic must not
/// unwind into C; there is no status to return, a caught panic only leaks). `NULL` is ignored.
///
/// # Safety
/// `ptr` is null or came from `Box::into_raw` of a `Box<T>`, has not been freed, and no other
/// thread is using it.
#[allow(clippy::unnecessary_wraps)] // shaped as the boundary's body
pub(crate) unsafe fn drop_box<T>(ptr: *mut T) -> Result<(), shardid_status> {
    if !ptr.is_null() {
        // SAFETY: the caller guarantees it came from `Box::into_raw` and is unused.
        drop(unsafe { Box::from_raw(ptr) });
    }
    Ok(())
}

/// Checks that `len` elements of `T` from `ptr` can be a Rust slice: at most `isize::MAX`
/// bytes that do not wrap past the end of the address space. No real buffer breaks either
/// rule, so such a length (`SIZE_MAX`, a negative length cast to `size_t`) is a caller's
/// mistake, `SHARDID_ERR_INVALID_ARGUMENT`; passed on, it would be a panic that aborts in a
/// debug build and undefined behaviour in a release one.
pub(crate) fn span<T>(ptr: *const T, len: usize) -> Result<(), shardid_status> {
    let fits = len
        .checked_mul(size_of::<T>())
        .filter(|&bytes| isize::try_from(bytes).is_ok())
        .and_then(|bytes| ptr.addr().checked_add(bytes));
    fits.map(|_| ())
        .ok_or(shardid_status::SHARDID_ERR_INVALID_ARGUMENT)
}

/// Borrows a caller's `uint64_t` array of `len` elements (`NULL` allowed when `len` is 0);
/// `SHARDID_ERR_INVALID_ARGUMENT` for a length no array has ([`span`]).
///
/// # Safety
/// `ids` is null or valid for reads and writes of `len` `uint64_t`s, not accessed elsewhere
/// for `'a`.
pub(crate) unsafe fn id_array<'a>(
    ids: *mut u64,
    len: usize,
) -> Result<&'a mut [u64], shardid_status> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ids.is_null() {
        return Err(shardid_status::SHARDID_ERR_NULL_ARGUMENT);
    }
    span(ids, len)?;
    // Every bit pattern is a valid u64: zero the array so no uninitialised memory is ever
    // seen as a slice of integers.
    // SAFETY: the caller guarantees `ids` is valid for writes of `len` elements.
    unsafe { ids.write_bytes(0, len) };
    // SAFETY: non-null, valid for `len` elements (caller), initialised just above, exclusive.
    Ok(unsafe { std::slice::from_raw_parts_mut(ids, len) })
}

/// Panics behind the boundary, on purpose: only in builds with the `panic-probe` feature,
/// which `tests/c/run.sh` makes to check that a panic is `SHARDID_ERR_PANIC` and the caller
/// goes on. Not in the header.
///
/// # Panics
/// Always, inside [`boundary`], which turns the panic into the status.
#[cfg(feature = "panic-probe")]
#[unsafe(no_mangle)]
pub extern "C" fn shardid_panic_probe() -> shardid_status {
    boundary(|| panic!("shardid_panic_probe: a panic on purpose"))
}
