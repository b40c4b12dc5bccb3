//! Where a SQLite file must not live: on a network filesystem (SQLite's "How To Corrupt An
//! SQLite Database File"; WAL mode needs memory shared between the processes using the file).

use std::format;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

/// The filesystems a SQLite database must not live on (SQLite's "How To Corrupt An SQLite
/// Database File", and WAL's need of shared memory): their names in `/proc/self/mountinfo`.
const NETWORK_FILESYSTEMS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "fuse.s3fs",
    "afs",
    "lustre",
];

/// The type of the filesystem `mountinfo` (the text of `/proc/self/mountinfo`) mounts `dir`
/// (an absolute, canonical directory) on, if it is a network filesystem: the mount whose point
/// is the longest prefix of `dir` decides.
fn network_filesystem(mountinfo: &str, dir: &Path) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for line in mountinfo.lines() {
        // `id parent major:minor root mount-point options [optional...] - type source ...`
        let mut fields = line.split(' ');
        let Some(point) = fields.nth(4) else { continue };
        let Some(kind) = fields.skip_while(|f| *f != "-").nth(1) else {
            continue;
        };
        // Spaces and other bytes in a mount point are written as octal escapes (`\040`).
        let point = unescape(point);
        if dir.starts_with(&point) && best.is_none_or(|(len, _)| point.len() >= len) {
            best = Some((point.len(), kind));
        }
    }
    best.map(|(_, kind)| kind)
        .filter(|kind| NETWORK_FILESYSTEMS.contains(kind))
        .map(Into::into)
}

/// A mount point as `/proc/self/mountinfo` writes it (`\040` for a space), decoded.
fn unescape(point: &str) -> String {
    let bytes = point.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        if let Some(d) = octal {
            let n = d.iter().fold(0u32, |n, b| n * 8 + u32::from(b - b'0'));
            out.push(u8::try_from(n).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The file a `sqlite:` URL names, if a client may open it: the URL read by
/// [`crate::sql::sqlite_path`] (no in-memory database, host or query string), and the file not
/// on a network filesystem (read from `/proc/self/mountinfo`; Linux only). Every client opens
/// the file this returns and no other (Rust's driver; Python's and Node's bindings, which only
/// translate its error), so both refusals are the same in every language by construction.
///
/// # Errors
/// The reason, for an `INVALID_ARGUMENT` on the URL's argument: the URL's
/// ([`crate::sql::NotASqliteUrl`]'s text) or the network filesystem's.
pub fn usable_file(url: &str) -> Result<&str, String> {
    usable_file_in(url, || std::fs::read_to_string("/proc/self/mountinfo").ok())
}

/// [`usable_file`] with the mount table (the text of `/proc/self/mountinfo`, `None`: not
/// readable, nothing checked) from `mountinfo`, read only for a URL that names a file.
fn usable_file_in(url: &str, mountinfo: impl FnOnce() -> Option<String>) -> Result<&str, String> {
    let path = crate::sql::sqlite_path(url).map_err(|why| why.to_string())?;
    match network_filesystem_problem(path, mountinfo) {
        Some(why) => Err(why),
        None => Ok(path),
    }
}

/// Why the file at `path` (as [`crate::sql::sqlite_path`] gives it) must not be used: it is on a
/// network filesystem. Linux only, read from the mount table `mountinfo` gives (`None`: it
/// cannot be read, as off Linux: nothing is checked).
fn network_filesystem_problem(
    path: &str,
    mountinfo: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let path = Path::new(path);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // A directory that does not exist is SQLite's to report, with its own message.
    let dir: PathBuf = dir.canonicalize().ok()?;
    let mountinfo = mountinfo()?;
    network_filesystem(&mountinfo, &dir).map(|kind| {
        format!(
            "names a file on a network filesystem ({kind}): SQLite's WAL mode needs memory \
             shared between the processes using the file, which a network filesystem does not \
             give (SQLite advises against it); put the database on a local disk"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_network_filesystems_are_found_by_the_longest_mount_point() {
        let mountinfo = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:40 / /mnt/share rw,relatime shared:20 - nfs4 server:/export rw,vers=4.2
41 40 8:2 / /mnt/share/local rw shared:21 - ext4 /dev/sdb1 rw
42 22 0:41 / /mnt/my\\040docs rw - cifs //host/docs rw
43 22 0:42 / /mnt/fuse rw - fuse.sshfs me@host:/ rw
";
        let kind = |dir: &str| network_filesystem(mountinfo, Path::new(dir));
        assert_eq!(kind("/home/app"), None);
        assert_eq!(kind("/mnt/share/db").as_deref(), Some("nfs4"));
        assert_eq!(kind("/mnt/share").as_deref(), Some("nfs4"));
        assert_eq!(
            kind("/mnt/share/local/db"),
            None,
            "a local disk mounted inside"
        );
        assert_eq!(
            kind("/mnt/sharedisk"),
            None,
            "a prefix of a name is not a mount"
        );
        assert_eq!(kind("/mnt/my docs/x").as_deref(), Some("cifs"));
        assert_eq!(kind("/mnt/fuse").as_deref(), Some("fuse.sshfs"));
        assert_eq!(
            network_filesystem("garbage\n\n1 2 3", Path::new("/x")),
            None
        );
    }

    /// The one function every client opens its file through: the URL's refusals and the
    /// network filesystem's, each with its message, and a usable file as the URL names it.
    #[test]
    fn sqlite_usable_file_refuses_bad_urls_and_network_filesystems() {
        let tmp = std::env::temp_dir().canonicalize().unwrap();
        let tmp = tmp.to_str().unwrap();
        let local = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n".to_string();
        let nfs = format!("{local}40 22 0:40 / {tmp} rw - nfs4 server:/export rw,vers=4.2\n");
        let url = format!("sqlite:///{tmp}/app.db");
        let file = format!("{tmp}/app.db");
        assert_eq!(
            usable_file_in(&url, || Some(local.clone())),
            Ok(file.as_str())
        );
        assert_eq!(
            usable_file_in(&url, || None),
            Ok(file.as_str()),
            "no mount table: unchecked"
        );
        let said = usable_file_in(&url, || Some(nfs.clone())).unwrap_err();
        assert!(
            said.starts_with("names a file on a network filesystem (nfs4): "),
            "{said}"
        );
        // A relative file is checked in the working directory's filesystem.
        let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
        let cwd_nfs = format!("{local}40 22 0:40 / {} rw - cifs //h/d rw\n", cwd.display());
        let said = usable_file_in("sqlite:///app.db", || Some(cwd_nfs.clone())).unwrap_err();
        assert!(said.contains("(cifs)"), "{said}");
        // A directory that does not exist is SQLite's to report when it opens the file.
        let missing = format!("sqlite:///{tmp}/no-such-dir-shardid/app.db");
        assert!(usable_file_in(&missing, || Some(nfs.clone())).is_ok());
        // The URL's refusals come first, with the URL's message; the mount table is not read.
        for url in [
            "sqlite://",
            "sqlite:///:memory:",
            "sqlite://host/x.db",
            "sqlite:///a.db?x=1",
            "postgres:///x",
        ] {
            let said = usable_file_in(url, || unreachable!("read for {url}")).unwrap_err();
            assert_eq!(said, crate::sql::sqlite_path(url).unwrap_err().to_string());
        }
    }
}
