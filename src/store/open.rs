//! Opening a store file: recognising it, checking its whole schema, and
//! either bringing it up to date (read-write) or reading it where it cannot
//! be written (read-only).
//!
//! **Nothing is written before the file is known to be sound.** A foreign
//! file, one from a newer build, and one whose schema is damaged or
//! half-migrated are refused after reading only.
//!
//! **Racing processes.** Every write transaction is `IMMEDIATE`: it takes
//! the write lock when it begins, waiting up to [`BUSY_TIMEOUT`] for
//! another process's write to end, so it never fails halfway with
//! "database is locked" because another writer committed after it read.
//! Two processes creating the same new store both succeed: the file is
//! claimed (`application_id`) before any table exists, and a migration that
//! lost the race to another process's identical one counts as done.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::{schema, Durability};

/// How long a writer waits for another process's write to finish.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Migration attempts while other processes migrate the same file.
const MIGRATE_ATTEMPTS: usize = 5;

/// What a file says about itself, read in one snapshot.
struct Header {
    app_id: i32,
    objects: i64,
    version: i64,
}

/// Opens (creating if needed) and migrates the store at `path`.
pub(super) fn read_write(path: &Path, durability: Durability) -> Result<Connection, String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create its folder: {e}"))?;
    }
    let existed = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open: {e}"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    let (header, shape) = inspect(&conn)?;
    if existed && header.objects > 0 && header.app_id != schema::APPLICATION_ID {
        return Err(
            "this SQLite file belongs to another program, not Understudy; it was left untouched"
                .into(),
        );
    }
    known_version(header.version)?;
    shape?;
    if header.app_id != schema::APPLICATION_ID {
        // Claimed before any table exists, so a process opening it
        // meanwhile never sees Understudy's tables without Understudy's id.
        set_application_id(&conn)?;
    }
    enable_wal(&conn)?;
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .map_err(|e| e.to_string())?;
    migrate(&mut conn)?;
    // Checkpoints run off the commit path (see the `checkpoint` module).
    conn.execute_batch(&format!(
        "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = {};",
        super::checkpoint::LOG_SIZE_LIMIT
    ))
    .map_err(|e| e.to_string())?;
    if durability == Durability::Fast {
        conn.execute_batch("PRAGMA synchronous = NORMAL;")
            .map_err(|e| e.to_string())?;
    }
    Ok(conn)
}

/// Opens the store at `path` for reading only: nothing is created,
/// migrated or written, and the file may be on a read-only mount.
pub(super) fn read_only(path: &Path) -> Result<Connection, String> {
    if !path.is_file() {
        return Err("there is no store file here".into());
    }
    let conn = open_read_only(path, false)?;
    let (conn, (header, shape)) = match inspect(&conn) {
        Ok(found) => (conn, found),
        // A write-ahead-log store whose folder cannot be written: SQLite
        // cannot create the shared-memory file it reads through. With no
        // log left to read, the main file is the whole store.
        Err(e) if !has_pending_log(path) => {
            drop(conn);
            let conn = open_read_only(path, true)?;
            match inspect(&conn) {
                Ok(found) => (conn, found),
                Err(_) => return Err(e),
            }
        }
        Err(e) => {
            return Err(format!(
                "{e} (its write-ahead log {}-wal holds changes that can only be read where the store can be written: copy the store and its -wal file to a writable folder)",
                path.display()
            ))
        }
    };
    if header.objects > 0 && header.app_id != schema::APPLICATION_ID {
        return Err("this SQLite file belongs to another program, not Understudy".into());
    }
    let version = known_version(header.version)?;
    if version < schema::latest_version() {
        return Err(format!(
            "this store is at schema version {version}, older than this build's {}, and it is opened read-only, so it cannot be updated; open it once where it can be written",
            schema::latest_version()
        ));
    }
    shape?;
    Ok(conn)
}

/// Whether the store can be opened read-write: the file and its folder
/// (where SQLite keeps its log) can both be written.
pub(super) fn is_writable(path: &Path) -> bool {
    let file = std::fs::OpenOptions::new().write(true).open(path).is_ok();
    let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => folder_is_writable(dir),
        None => folder_is_writable(Path::new(".")),
    };
    file && folder
}

#[cfg(unix)]
fn folder_is_writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
}

#[cfg(not(unix))]
fn folder_is_writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}

fn open_read_only(path: &Path, immutable: bool) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if immutable {
        Connection::open_with_flags(
            format!("{}?immutable=1", file_uri(path)),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )
    } else {
        Connection::open_with_flags(path, flags)
    }
    .map_err(|e| format!("cannot open: {e}"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// A `-wal` file with content beside the store.
fn has_pending_log(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    std::fs::metadata(wal).is_ok_and(|m| m.len() > 0)
}

/// `file:` URI of `path`, with everything but unreserved characters and
/// `/` percent-encoded (SQLite reads `?`, `#` and `%` specially).
fn file_uri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let bytes = absolute.to_string_lossy().into_owned().into_bytes();
    let mut uri = String::from("file:");
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The header, and the verdict on the schema of the version it states,
/// from one snapshot: another process may be creating the tables
/// meanwhile, and a version read before its commit with tables read after
/// it would look half-migrated.
fn inspect(conn: &Connection) -> Result<(Header, Result<(), String>), String> {
    let read = |conn: &Connection| {
        let header = read_header(conn)?;
        let shape = match known_version(header.version) {
            Ok(version) => check_shape(conn, version),
            Err(_) => Ok(()), // refused by the caller, by version
        };
        Ok((header, shape))
    };
    // DEFERRED: only reads, so no write lock is taken.
    if conn.execute_batch("BEGIN DEFERRED").is_err() {
        return read(conn);
    }
    let found = read(conn);
    let _ = conn.execute_batch("COMMIT");
    found
}

fn read_header(conn: &Connection) -> Result<Header, String> {
    conn.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema), (SELECT user_version FROM pragma_user_version)",
        [],
        |r| {
            Ok(Header {
                app_id: r.get(0)?,
                objects: r.get(1)?,
                version: r.get(2)?,
            })
        },
    )
    .map_err(|e| {
        format!(
            "this file is not an Understudy store (SQLite says: {e}); it may be corrupt or another kind of file"
        )
    })
}

/// Refuses versions this build does not know.
fn known_version(version: i64) -> Result<usize, String> {
    let known = schema::latest_version();
    match usize::try_from(version) {
        Ok(v) if v <= known => Ok(v),
        _ => Err(format!(
            "this store was written by a newer Understudy (schema version {version}; this build knows up to {known}); upgrade Understudy to open it"
        )),
    }
}

fn check_shape(conn: &Connection, version: usize) -> Result<(), String> {
    let problems = schema::problems(conn, version)
        .map_err(|e| format!("cannot read the store's schema: {e}"))?;
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "this store's schema is damaged or half-migrated (schema version {version}): {}. It was left untouched; restore it from a backup",
        problems.join("; ")
    ))
}

/// Switches a new file to write-ahead logging. The switch needs the file
/// to itself, and SQLite refuses it at once (no busy handler) while another
/// process is reading it, as a concurrent creator briefly does: retried
/// until [`BUSY_TIMEOUT`].
fn enable_wal(conn: &Connection) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(format!(
                    "cannot enable write-ahead logging: SQLite kept the journal mode `{mode}`"
                ))
            }
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("cannot enable write-ahead logging: {e}")),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn set_application_id(conn: &Connection) -> Result<(), String> {
    conn.execute_batch(&format!(
        "PRAGMA application_id = {};",
        schema::APPLICATION_ID
    ))
    .map_err(|e| format!("cannot mark the file as an Understudy store: {e}"))
}

/// Brings the schema up to date. The migration library reads the version
/// before its transaction begins, so a process that lost a race to
/// another one migrating the same file fails on "table already exists";
/// its transaction is rolled back, and the version it finds then says
/// whether the other process did the work.
fn migrate(conn: &mut Connection) -> Result<(), String> {
    let latest = schema::latest_version();
    let version = |conn: &Connection| -> Result<usize, String> {
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        known_version(v)
    };
    for attempt in 1..=MIGRATE_ATTEMPTS {
        let before = version(conn)?;
        if before == latest {
            return Ok(());
        }
        match schema::migrations().to_latest(conn) {
            Ok(()) => break,
            Err(e) => {
                let now = version(conn)?;
                if now == latest {
                    break;
                }
                if now == before || attempt == MIGRATE_ATTEMPTS {
                    return Err(format!("cannot update the store's schema: {e}"));
                }
            }
        }
    }
    check_shape(conn, latest)
}
