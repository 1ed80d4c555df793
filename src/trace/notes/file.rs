//! The file side of the notes: what may be read, how a new version is written, the lock every
//! writer of one trace's notes takes, and where an unreadable file is kept.
//!
//! The notes file sits in a directory others may write to (a shared log directory), so nothing
//! here trusts a name: only a regular file is read, and never more than a cap of it (a FIFO or
//! `/dev/zero` planted at the name neither blocks nor fills memory); the temporary file is
//! created new (`O_EXCL`), so a symlink planted at its name is never followed; and a file that
//! could not be read is kept under a fresh `.broken` name before a new one takes its place.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What was found at a notes file's name.
#[derive(Debug)]
pub(super) enum Contents {
    /// Nothing there.
    Missing,
    /// A regular file and its text.
    Text(String),
    /// A regular file that could not be read as text (too large, not UTF-8): it is kept aside
    /// under a `.broken` name before a new file is written.
    Broken(String),
    /// Something that is not a regular file (a FIFO, a device, a directory) or cannot be
    /// opened: never read and never replaced.
    Foreign(String),
}

/// Reads the notes file at `path`: only a regular file, at most `cap` bytes.
pub(super) fn read(path: &Path, cap: u64) -> Contents {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it changes nothing for a file.
    let f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Contents::Missing,
        Err(e) => return Contents::Foreign(format!("cannot be opened: {e}")),
    };
    match f.metadata() {
        Ok(m) if !m.is_file() => {
            return Contents::Foreign("is not a regular file and was not read".into());
        }
        Ok(m) if m.len() > cap => return Contents::Broken(too_large(cap)),
        Ok(_) => {}
        Err(e) => return Contents::Foreign(format!("cannot be examined: {e}")),
    }
    let mut bytes = Vec::new();
    // The size may grow between the check and the read: the cap holds either way.
    if let Err(e) = f.take(cap + 1).read_to_end(&mut bytes) {
        return Contents::Foreign(format!("cannot be read: {e}"));
    }
    if bytes.len() as u64 > cap {
        return Contents::Broken(too_large(cap));
    }
    match String::from_utf8(bytes) {
        Ok(t) => Contents::Text(t),
        Err(e) => Contents::Broken(format!(
            "is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

fn too_large(cap: u64) -> String {
    if cap >= 1 << 20 {
        format!("is larger than {} MiB", cap >> 20)
    } else {
        format!("is larger than {cap} bytes")
    }
}

/// The lock every writer of one trace's notes holds while it reads, changes and writes them:
/// an advisory `flock` on the directory the notes are kept beside, so no lock file is left
/// behind. It is released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub(super) struct Lock {
    _dir: Option<File>,
}

impl Lock {
    /// No lock (nothing to lock on).
    pub(super) fn none() -> Lock {
        Lock { _dir: None }
    }
}

/// How long a writer waits for another to finish before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Takes the lock of `dir`. A file system without `flock` (or a directory that cannot be
/// opened) is written without one rather than not at all; a lock held for longer than
/// [`LOCK_WAIT`] is an error, so a hung writer elsewhere never freezes the screen.
pub(super) fn lock(dir: &Path) -> io::Result<Lock> {
    use rustix::fs::{FlockOperation, flock};
    let Ok(f) = File::open(dir) else {
        return Ok(Lock { _dir: None });
    };
    let until = Instant::now() + LOCK_WAIT;
    loop {
        match flock(&f, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Lock { _dir: Some(f) }),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "another process has held the notes lock on {} for {} s",
                        dir.display(),
                        LOCK_WAIT.as_secs()
                    ),
                ));
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return Ok(Lock { _dir: None }),
        }
    }
}

/// `path` with `suffix` appended to its name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Keeps the file at `path` under the first free name of `.broken`, `.broken.1`, `.broken.2`,
/// …, never over an earlier copy; returns that name. A hard link is made, so the old file keeps
/// its content whatever happens next; where links are not supported it is renamed instead.
pub(super) fn keep_aside(path: &Path) -> io::Result<PathBuf> {
    for n in 0..10_000u32 {
        let name = if n == 0 {
            with_suffix(path, ".broken")
        } else {
            with_suffix(path, &format!(".broken.{n}"))
        };
        match fs::hard_link(path, &name) {
            Ok(()) => return Ok(name),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) if fs::symlink_metadata(&name).is_err() => {
                fs::rename(path, &name)?;
                return Ok(name);
            }
            Err(_) => continue,
        }
    }
    Err(io::Error::other(format!(
        "no free name to keep {} aside",
        path.display()
    )))
}

/// Writes `text` to `path` through a new temporary file in the same directory and a rename,
/// so a reader sees the old file or the new one, never half of one. A read-only file at
/// `path` is not replaced.
pub(super) fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    if let Ok(m) = fs::symlink_metadata(path)
        && m.is_file()
        && m.permissions().readonly()
    {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is read-only", path.display()),
        ));
    }
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(d)?;
    }
    let (tmp, mut f) = create_temp(path)?;
    let written = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// A temporary file beside `path` that did not exist before: `O_EXCL` refuses any name that
/// is taken, a symlink included, and a taken name is tried again with another.
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = io::Error::other("no free temporary name");
    for _ in 0..64 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = with_suffix(path, &format!(".tmp{}-{n}-{nanos:08x}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_never_past_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n.json");
        assert!(matches!(read(&p, 10), Contents::Missing));
        fs::write(&p, "0123456789").unwrap();
        assert!(matches!(read(&p, 10), Contents::Text(t) if t == "0123456789"));
        assert!(matches!(read(&p, 9), Contents::Broken(_)));
        fs::write(&p, b"{\xff}").unwrap();
        assert!(matches!(read(&p, 10), Contents::Broken(w) if w.contains("UTF-8")));
        assert!(matches!(read(d.path(), 10), Contents::Foreign(_)));
        assert!(matches!(
            read(Path::new("/dev/zero"), 10),
            Contents::Foreign(_)
        ));
    }

    #[test]
    fn broken_copies_never_overwrite_each_other() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n.json");
        fs::write(&p, "first").unwrap();
        assert_eq!(keep_aside(&p).unwrap(), with_suffix(&p, ".broken"));
        // A fresh inode, as a rename over the file would leave.
        fs::remove_file(&p).unwrap();
        fs::write(&p, "second").unwrap();
        assert_eq!(keep_aside(&p).unwrap(), with_suffix(&p, ".broken.1"));
        assert_eq!(
            fs::read_to_string(with_suffix(&p, ".broken")).unwrap(),
            "first"
        );
        assert_eq!(
            fs::read_to_string(with_suffix(&p, ".broken.1")).unwrap(),
            "second"
        );
    }
}
