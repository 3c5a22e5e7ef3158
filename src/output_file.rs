//! Writing a file the user named as output (`--output` of `replay`,
//! `score` and `export`).
//!
//! **Key decision: replace regular files, write through everything else.**
//! A regular file (or a missing one) is written to a sibling temporary
//! file, synced, and renamed over the target, so a failure midway leaves
//! whatever was there before. Anything else that already exists there, a
//! device such as `/dev/null` or `/dev/stdout`, a FIFO, a socket, is opened
//! and written in place: renaming over it would replace the device node
//! itself (as root, `--output /dev/null` once turned the system's
//! `/dev/null` into a regular file) or bypass the reader at the other end
//! of the pipe. Symbolic links are followed to decide.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{io_error, Result};

/// The buffer in front of the file: large writes, few system calls.
const BUFFER: usize = 1 << 20;

/// Writes `bytes` to `path` (see the module docs).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |out| {
        out.write_all(bytes)
            .map_err(|e| io_error(format!("writing {}", path.display()), e))
    })
}

/// Gives `fill` a writer for `path` and makes the output appear only when
/// `fill` succeeded (see the module docs). Returns what `fill` returned.
pub fn write_with<T>(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
    if is_special(path) {
        return write_through(path, fill);
    }
    let tmp = partial_path(path);
    let result = File::create(&tmp)
        .map_err(|e| io_error(format!("cannot write {}", path.display()), e))
        .and_then(|file| {
            let mut writer = BufWriter::with_capacity(BUFFER, file);
            let value = fill(&mut writer)?;
            writer
                .into_inner()
                .map_err(|e| io_error(format!("writing {}", path.display()), e.into_error()))?
                .sync_all()
                .map_err(|e| io_error(format!("writing {}", path.display()), e))?;
            Ok(value)
        })
        .and_then(|value| {
            std::fs::rename(&tmp, path)
                .map_err(|e| io_error(format!("writing {}", path.display()), e))?;
            Ok(value)
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Something other than a regular file already exists at `path`. A
/// folder counts as regular here: renaming a file over it fails with a
/// clear error, as it should.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Opens the existing node for writing (no create, no truncate: devices
/// and pipes have nothing to truncate) and writes into it.
fn write_through<T>(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io_error(format!("cannot write {}", path.display()), e))?;
    let mut writer = BufWriter::with_capacity(BUFFER, file);
    let value = fill(&mut writer)?;
    writer
        .flush()
        .map_err(|e| io_error(format!("writing {}", path.display()), e))?;
    Ok(value)
}

/// A sibling of `path` to write into before renaming.
pub(crate) fn partial_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".partial-{}", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_regular_file_is_replaced_whole_or_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(&path, "old\n").unwrap();
        write(&path, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let failed: Result<()> = write_with(&path, |out| {
            out.write_all(b"half").unwrap();
            Err(Error::Other("stop".into()))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }
}
