//! Where a SQLite file must not live: on a network filesystem (SQLite's "How To Corrupt An
//! SQLite Database File"; WAL mode needs memory shared between the processes using the file).

use std::format;
use std::path::{Path, PathBuf};
use std::string::String;
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

/// Why the file at `path` (as [`crate::sql::sqlite_path`] gives it) must not be used: it is on a
/// network filesystem. Linux only, read from `/proc/self/mountinfo`; elsewhere, and where that
/// cannot be read, nothing is checked. Every client calls it before opening the file (Rust's
/// driver; Python and Node through their bindings' reading of the URL), so the refusal
/// (`INVALID_ARGUMENT`, this reason) is the same in every language.
#[must_use]
pub fn network_filesystem_problem(path: &str) -> Option<String> {
    let path = Path::new(path);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // A directory that does not exist is SQLite's to report, with its own message.
    let dir: PathBuf = dir.canonicalize().ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
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
}
