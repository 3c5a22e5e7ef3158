//! A copy-on-write SQLite VFS: many connections read one shared, immutable
//! database image and each keeps only the pages it writes. Also SQLite's
//! allocator for the engine ([`heap`]): its memory counted without a lock.
//!
//! Why a crate of its own: the engine forbids `unsafe`, and a VFS (like an
//! allocator) is C function pointers SQLite calls. The crates that wrap that were read
//! first and not taken: `sqlite-vfs` (a self-declared prototype) hands out
//! `&mut` to the VFS's shared state from every thread's `xOpen` and writes
//! a counter through it, a data race when two threads open databases at
//! once; `sqlite-plugin` generates its bindings with bindgen at build time,
//! which needs libclang on every machine that builds. This crate is the
//! minimal glue (about a dozen callbacks) against the `libsqlite3-sys` that
//! rusqlite already links, so there is still one SQLite in the build.
//!
//! [`open`] gives a connection whose main database reads pages it has not
//! written from the image (an `Arc<[u8]>` of a serialized database) and
//! keeps written pages in a private map, allocated with `sqlite3_malloc64`
//! so SQLite's process heap limit covers them, and the [`Overlay`] handle
//! to those pages. [`Overlay::reset`] drops them: the database is the image
//! again. SQLite notices as it notices another process's write: the change
//! counter in page 1 differs from the one its page cache was read with, so
//! it drops its cache at the next read (the connection runs in SQLite's
//! normal locking mode for that). Temporary files and journals are private
//! in-memory files; the main journal is kept in memory
//! (`journal_mode=MEMORY`), so nothing touches the disk.
//!
//! Soundness rests on: the VFS object and its name are leaked, so they
//! outlive every connection; a file's state is a `Box` owned by SQLite's
//! file object from `xOpen` to `xClose`, which SQLite calls once; SQLite
//! never calls two methods of one file at once (one connection is used by
//! one thread at a time), and the page map shared with the [`Overlay`] is
//! behind a mutex; no callback unwinds into C (each body runs under
//! `catch_unwind`).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::ffi;
use rusqlite::{Connection, OpenFlags};

pub mod heap;

/// The name the VFS is registered under.
pub const VFS_NAME: &str = "understudy-cow";

/// Why an overlay could not be reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetError {
    /// SQLite holds a lock on the database (a statement or transaction is
    /// open); dropping pages under it would change what it is reading.
    Locked,
}

impl std::fmt::Display for ResetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the database is in use (a statement or transaction is open)")
    }
}

impl std::error::Error for ResetError {}

/// The private pages of one database opened over an image.
#[derive(Clone)]
pub struct Overlay(Arc<Mutex<FileData>>);

impl Overlay {
    /// Drops every private page: the database reads as the image again.
    /// Refused while SQLite holds a lock on it.
    pub fn reset(&self) -> Result<(), ResetError> {
        let mut data = lock(&self.0);
        if data.lock != ffi::SQLITE_LOCK_NONE {
            return Err(ResetError::Locked);
        }
        data.reset();
        Ok(())
    }

    /// Bytes held in private pages.
    pub fn private_bytes(&self) -> usize {
        let data = lock(&self.0);
        data.pages.values().map(|p| p.len).sum()
    }

    /// The database as one image (the image under the private pages),
    /// once its connection is closed; the overlay back while a connection
    /// still has the file open.
    ///
    /// Why: a world is seeded once through this VFS over an empty image,
    /// and its pages become the image every episode reads. Each page is
    /// freed as it is copied out, so the peak is about one database, not
    /// the two that serializing a connection and then copying would hold.
    pub fn into_image(self) -> Result<Arc<[u8]>, Overlay> {
        let data = Arc::try_unwrap(self.0).map_err(Overlay)?;
        let mut data = data.into_inner().unwrap_or_else(|e| e.into_inner());
        let len = usize::try_from(data.len).unwrap_or(usize::MAX);
        if data.pages.is_empty() && data.visible == data.len {
            return Ok(data.image);
        }
        // A zeroed allocation this large is fresh pages from the system,
        // which take memory only as they are written; each private page is
        // freed as soon as it is copied, the last first, so the allocator
        // can hand the top of its heap back as it goes. So the copy takes
        // about one database at its peak, not two.
        let zeroed: Arc<[std::mem::MaybeUninit<u8>]> = Arc::new_zeroed_slice(len);
        // SAFETY: zero is a valid u8, and every byte is zeroed.
        let mut out: Arc<[u8]> = unsafe { zeroed.assume_init() };
        let Some(bytes) = Arc::get_mut(&mut out) else {
            unreachable!("a new Arc has one owner");
        };
        let page = data.page;
        let mut freed = 0;
        for (idx, chunk) in bytes.chunks_mut(page).enumerate().rev() {
            match data.pages.remove(&(idx as u64)) {
                Some(p) => {
                    chunk.copy_from_slice(&p.bytes()[..chunk.len()]);
                    freed += p.len;
                }
                None => data.image_bytes((idx * page) as u64, chunk),
            }
            // The pages are small blocks of SQLite's (the system's) heap,
            // between other allocations: freeing them makes room there but
            // returns nothing to the system, so without this the copy held
            // two databases after all (tau-retail x100: 162 -> 293 MB).
            if freed >= RELEASE_EVERY {
                release_free_heap();
                freed = 0;
            }
        }
        release_free_heap();
        Ok(out)
    }
}

/// How many bytes of pages [`Overlay::into_image`] frees between handing
/// free heap back to the system: often enough to keep its peak near one
/// database, rarely enough that the heap walks cost little (16 of them for
/// a 130 MB world).
const RELEASE_EVERY: usize = 8 << 20;

/// Hands the free pages of the C heap back to the system (glibc's
/// `malloc_trim`); elsewhere the allocator is left to do as it does.
fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> c_int;
        }
        // SAFETY: malloc_trim only gives free heap pages back to the
        // system; it touches no live allocation and may be called from any
        // thread at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("private_bytes", &self.private_bytes())
            .finish()
    }
}

/// Opens a connection over `image` (a serialized SQLite database; empty
/// for a new one) with `flags`, and the handle to its private pages.
pub fn open(image: Arc<[u8]>, flags: OpenFlags) -> rusqlite::Result<(Connection, Overlay)> {
    register()?;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!("/{VFS_NAME}/{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let data = Arc::new(Mutex::new(FileData::over(image)));
    pending_insert(name.clone(), Arc::clone(&data));
    let opened = Connection::open_with_flags_and_vfs(&name, flags, VFS_NAME);
    // xOpen took it if it ran; a failed open must not leave it behind.
    pending_take(&name);
    let conn = opened?;
    if !flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY) {
        conn.query_row("PRAGMA journal_mode = MEMORY", [], |_| Ok(()))?;
    }
    Ok((conn, Overlay(data)))
}

/// Main databases opened by [`open`] and not yet claimed by `xOpen`.
static PENDING: Mutex<Vec<(String, Arc<Mutex<FileData>>)>> = Mutex::new(Vec::new());

fn pending_insert(name: String, data: Arc<Mutex<FileData>>) {
    lock(&PENDING).push((name, data));
}

fn pending_take(name: &str) -> Option<Arc<Mutex<FileData>>> {
    let mut pending = lock(&PENDING);
    let at = pending.iter().position(|(n, _)| n == name)?;
    Some(pending.swap_remove(at).1)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One page-sized buffer from SQLite's allocator, owned uniquely.
struct Page {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is owned by this value alone; SQLite's allocator may
// free from any thread.
unsafe impl Send for Page {}

impl Page {
    /// A zeroed page, or `None` when SQLite's heap limit refuses it.
    fn zeroed(len: usize) -> Option<Page> {
        // SAFETY: plain allocation; a null result is handled.
        let raw = unsafe { ffi::sqlite3_malloc64(len as u64) }.cast::<u8>();
        let ptr = NonNull::new(raw)?;
        // SAFETY: `raw` points to `len` writable bytes just allocated.
        unsafe { ptr::write_bytes(ptr.as_ptr(), 0, len) };
        Some(Page { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: allocated by sqlite3_malloc64, freed once.
        unsafe { ffi::sqlite3_free(self.ptr.as_ptr().cast()) }
    }
}

/// A file's contents: the image's bytes under the private pages.
struct FileData {
    image: Arc<[u8]>,
    /// The granularity of private pages: the image's page size.
    page: usize,
    pages: HashMap<u64, Page>,
    /// The image's bytes still visible: a truncation hides the rest, so a
    /// later growth reads zeros there, as a real file would.
    visible: u64,
    len: u64,
    lock: c_int,
}

impl FileData {
    fn over(image: Arc<[u8]>) -> FileData {
        let page = page_size(&image);
        let len = image.len() as u64;
        FileData {
            image,
            page,
            pages: HashMap::new(),
            visible: len,
            len,
            lock: ffi::SQLITE_LOCK_NONE,
        }
    }

    fn reset(&mut self) {
        self.pages.clear();
        self.visible = self.image.len() as u64;
        self.len = self.visible;
    }

    /// The image's bytes at `pos` (within one page), zeros past what is visible.
    fn image_bytes(&self, pos: u64, out: &mut [u8]) {
        let end = pos.saturating_add(out.len() as u64);
        let have = end.min(self.visible).saturating_sub(pos) as usize;
        if have > 0 {
            let start = pos as usize;
            out[..have].copy_from_slice(&self.image[start..start + have]);
        }
        out[have..].fill(0);
    }

    /// Fills `out` from `offset`; whether it was all within the file (past
    /// its end, the rest is zeros).
    fn read(&self, out: &mut [u8], offset: u64) -> bool {
        let page = self.page as u64;
        let mut done = 0;
        while done < out.len() {
            let pos = offset + done as u64;
            let idx = pos / page;
            let at = (pos % page) as usize;
            let take = (self.page - at).min(out.len() - done);
            let chunk = &mut out[done..done + take];
            match self.pages.get(&idx) {
                Some(p) => chunk.copy_from_slice(&p.bytes()[at..at + take]),
                None => self.image_bytes(pos, chunk),
            }
            done += take;
        }
        let end = offset.saturating_add(out.len() as u64);
        if end > self.len {
            let inside = self.len.saturating_sub(offset) as usize;
            let from = inside.min(out.len());
            out[from..].fill(0);
            return false;
        }
        true
    }

    /// Writes `data` at `offset`; false when a page could not be allocated.
    fn write(&mut self, data: &[u8], offset: u64) -> bool {
        let page = self.page as u64;
        let mut done = 0;
        while done < data.len() {
            let pos = offset + done as u64;
            let idx = pos / page;
            let at = (pos % page) as usize;
            let take = (self.page - at).min(data.len() - done);
            if !self.pages.contains_key(&idx) {
                let Some(mut fresh) = Page::zeroed(self.page) else {
                    return false;
                };
                self.image_bytes(idx * page, fresh.bytes_mut());
                self.pages.insert(idx, fresh);
            }
            if let Some(p) = self.pages.get_mut(&idx) {
                p.bytes_mut()[at..at + take].copy_from_slice(&data[done..done + take]);
            }
            done += take;
        }
        self.len = self.len.max(offset + data.len() as u64);
        true
    }

    fn truncate(&mut self, size: u64) {
        let page = self.page as u64;
        self.pages.retain(|idx, _| idx * page < size);
        if let Some(p) = self.pages.get_mut(&(size / page)) {
            p.bytes_mut()[(size % page) as usize..].fill(0);
        }
        self.visible = self.visible.min(size);
        self.len = size;
    }
}

/// The page size in a database header, 4096 for anything else.
fn page_size(image: &[u8]) -> usize {
    match image.get(16..18) {
        Some(&[1, 0]) => 65536,
        Some(&[hi, lo]) => {
            let n = usize::from(u16::from_be_bytes([hi, lo]));
            if n >= 512 && n.is_power_of_two() {
                n
            } else {
                4096
            }
        }
        _ => 4096,
    }
}

/// SQLite's file object for this VFS: its base struct first, as SQLite
/// requires of a "subclass", then the file's state.
#[repr(C)]
struct CowFile {
    base: ffi::sqlite3_file,
    data: *mut Arc<Mutex<FileData>>,
}

/// The default VFS, to which time, sleep and randomness are delegated.
static PARENT: AtomicUsize = AtomicUsize::new(0);

fn register() -> rusqlite::Result<()> {
    static DONE: OnceLock<c_int> = OnceLock::new();
    let rc = *DONE.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find may be called at any time (it initialises
        // SQLite); a null name asks for the default.
        let parent = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
        if parent.is_null() {
            return ffi::SQLITE_ERROR;
        }
        PARENT.store(parent as usize, Ordering::Release);
        let name = CString::new(VFS_NAME).unwrap_or_default().into_raw();
        let vfs = Box::into_raw(Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: std::mem::size_of::<CowFile>() as c_int,
            mxPathname: 512,
            pNext: ptr::null_mut(),
            zName: name,
            pAppData: ptr::null_mut(),
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: Some(x_dl_open),
            xDlError: Some(x_dl_error),
            xDlSym: Some(x_dl_sym),
            xDlClose: Some(x_dl_close),
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        }));
        // SAFETY: `vfs` and its name are leaked, so they live as long as
        // SQLite may use them; it is not made the default.
        unsafe { ffi::sqlite3_vfs_register(vfs, 0) }
    });
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// Runs a callback body; a panic becomes `err` instead of unwinding into C.
fn guard(err: c_int, body: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(err)
}

/// The state of an open file of this VFS.
///
/// # Safety
/// `file` is a file SQLite opened through [`x_open`] and has not closed.
unsafe fn data_of<'a>(file: *mut ffi::sqlite3_file) -> Option<&'a Arc<Mutex<FileData>>> {
    // SAFETY: per the contract, `file` points to a `CowFile` whose `data`
    // is null or a live box.
    unsafe { file.cast::<CowFile>().as_ref()?.data.as_ref() }
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    guard(ffi::SQLITE_CANTOPEN, || {
        let file = file.cast::<CowFile>();
        if file.is_null() {
            return ffi::SQLITE_CANTOPEN;
        }
        // SAFETY: SQLite hands `szOsFile` bytes for the file object; until
        // this returns they are ours to initialise. pMethods must be null
        // if the open fails, so xClose is not called.
        unsafe {
            ptr::write(
                file,
                CowFile {
                    base: ffi::sqlite3_file {
                        pMethods: ptr::null(),
                    },
                    data: ptr::null_mut(),
                },
            )
        };
        let data = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
            if name.is_null() {
                return ffi::SQLITE_CANTOPEN;
            }
            // SAFETY: a non-null name is a NUL-terminated string.
            let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            match pending_take(&name) {
                Some(data) => data,
                None => return ffi::SQLITE_CANTOPEN,
            }
        } else {
            // Journals, temporary databases, sorter spills: private,
            // in memory, gone at close.
            Arc::new(Mutex::new(FileData::over(Arc::from(&[][..]))))
        };
        // SAFETY: `file` was initialised above.
        unsafe {
            (*file).data = Box::into_raw(Box::new(data));
            (*file).base.pMethods = &IO_METHODS;
            if let Some(out) = out_flags.as_mut() {
                *out = flags;
            }
        }
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    guard(ffi::SQLITE_IOERR_CLOSE, || {
        if let Some(file) = unsafe { file.cast::<CowFile>().as_mut() } {
            let data = std::mem::replace(&mut file.data, ptr::null_mut());
            if !data.is_null() {
                // SAFETY: made by Box::into_raw in x_open; taken once.
                drop(unsafe { Box::from_raw(data) });
            }
        }
        ffi::SQLITE_OK
    })
}

/// Runs `body` on the state of an open file of this VFS, under its lock;
/// `err` when the file has none or the body panics.
///
/// # Safety
/// As [`data_of`].
unsafe fn with_file(
    file: *mut ffi::sqlite3_file,
    err: c_int,
    body: impl FnOnce(&mut FileData) -> c_int,
) -> c_int {
    guard(err, || {
        // SAFETY: per this function's contract.
        match unsafe { data_of(file) } {
            Some(data) => body(&mut lock(data)),
            None => err,
        }
    })
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let (Ok(amount), Ok(offset)) = (usize::try_from(amount), u64::try_from(offset)) else {
        return ffi::SQLITE_IOERR_READ;
    };
    if buf.is_null() {
        return ffi::SQLITE_IOERR_READ;
    }
    // SAFETY: SQLite passes a buffer of `amount` writable bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), amount) };
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_READ, |data| {
            if data.read(out, offset) {
                ffi::SQLITE_OK
            } else {
                ffi::SQLITE_IOERR_SHORT_READ
            }
        })
    }
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let (Ok(amount), Ok(offset)) = (usize::try_from(amount), u64::try_from(offset)) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    if buf.is_null() {
        return ffi::SQLITE_IOERR_WRITE;
    }
    // SAFETY: SQLite passes `amount` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), amount) };
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_WRITE, |data| {
            if data.write(bytes, offset) {
                ffi::SQLITE_OK
            } else {
                ffi::SQLITE_IOERR_NOMEM
            }
        })
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let Ok(size) = u64::try_from(size) else {
        return ffi::SQLITE_IOERR_TRUNCATE;
    };
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_TRUNCATE, |data| {
            data.truncate(size);
            ffi::SQLITE_OK
        })
    }
}

unsafe extern "C" fn x_sync(_file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: `size` is null or writable.
    let Some(size) = (unsafe { size.as_mut() }) else {
        return ffi::SQLITE_IOERR_FSTAT;
    };
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_FSTAT, |data| {
            *size = data.len as ffi::sqlite3_int64;
            ffi::SQLITE_OK
        })
    }
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_LOCK, |data| {
            data.lock = data.lock.max(level);
            ffi::SQLITE_OK
        })
    }
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_UNLOCK, |data| {
            data.lock = data.lock.min(level);
            ffi::SQLITE_OK
        })
    }
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: `out` is null or writable.
    let Some(out) = (unsafe { out.as_mut() }) else {
        return ffi::SQLITE_IOERR_CHECKRESERVEDLOCK;
    };
    // SAFETY: an open file of this VFS.
    unsafe {
        with_file(file, ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, |data| {
            *out = c_int::from(data.lock >= ffi::SQLITE_LOCK_RESERVED);
            ffi::SQLITE_OK
        })
    }
}

unsafe extern "C" fn x_file_control(
    _file: *mut ffi::sqlite3_file,
    _op: c_int,
    _arg: *mut c_void,
) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn x_sector_size(_file: *mut ffi::sqlite3_file) -> c_int {
    4096
}

unsafe extern "C" fn x_device_characteristics(_file: *mut ffi::sqlite3_file) -> c_int {
    // As SQLite's own in-memory files: nothing here can be torn by a crash.
    ffi::SQLITE_IOCAP_ATOMIC
        | ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
        | ffi::SQLITE_IOCAP_SAFE_APPEND
        | ffi::SQLITE_IOCAP_SEQUENTIAL
}

unsafe extern "C" fn x_delete(
    _vfs: *mut ffi::sqlite3_vfs,
    _name: *const c_char,
    _sync: c_int,
) -> c_int {
    // Only private files are ever deleted, and they go at close.
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_access(
    _vfs: *mut ffi::sqlite3_vfs,
    _name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    // No journal or WAL file ever exists to be found (so none is "hot").
    // SAFETY: `out` is null or writable.
    if let Some(out) = unsafe { out.as_mut() } {
        *out = 0;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_full_pathname(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    guard(ffi::SQLITE_CANTOPEN, || {
        let Ok(n_out) = usize::try_from(n_out) else {
            return ffi::SQLITE_CANTOPEN;
        };
        if name.is_null() || out.is_null() || n_out == 0 {
            return ffi::SQLITE_CANTOPEN;
        }
        // SAFETY: `name` is NUL-terminated; `out` has `n_out` bytes.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes_with_nul();
        if bytes.len() > n_out {
            return ffi::SQLITE_CANTOPEN;
        }
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr().cast(), out, bytes.len()) };
        ffi::SQLITE_OK
    })
}

fn parent() -> *mut ffi::sqlite3_vfs {
    PARENT.load(Ordering::Acquire) as *mut ffi::sqlite3_vfs
}

unsafe extern "C" fn x_dl_open(_vfs: *mut ffi::sqlite3_vfs, _name: *const c_char) -> *mut c_void {
    // Extensions are never loaded from a copy-on-write database.
    ptr::null_mut()
}

unsafe extern "C" fn x_dl_error(_vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) {
    const MESSAGE: &[u8] = b"extensions are not loaded through the copy-on-write VFS\0";
    let Ok(n) = usize::try_from(n) else { return };
    if out.is_null() || n == 0 {
        return;
    }
    let len = MESSAGE.len().min(n);
    // SAFETY: `out` has `n` bytes; the last one written is a NUL.
    unsafe {
        ptr::copy_nonoverlapping(MESSAGE.as_ptr().cast(), out, len);
        *out.add(len - 1) = 0;
    }
}

type DlSym = Option<unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *mut c_void, *const c_char)>;

unsafe extern "C" fn x_dl_sym(
    _vfs: *mut ffi::sqlite3_vfs,
    _handle: *mut c_void,
    _symbol: *const c_char,
) -> DlSym {
    None
}

unsafe extern "C" fn x_dl_close(_vfs: *mut ffi::sqlite3_vfs, _handle: *mut c_void) {}

unsafe extern "C" fn x_randomness(
    _vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let p = parent();
    // SAFETY: the default VFS lives for the process; its method gets its
    // own object, as SQLite would call it.
    match unsafe { p.as_ref() }.and_then(|v| v.xRandomness) {
        Some(f) => unsafe { f(p, n, out) },
        None => 0,
    }
}

unsafe extern "C" fn x_sleep(_vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    let p = parent();
    // SAFETY: as in x_randomness.
    match unsafe { p.as_ref() }.and_then(|v| v.xSleep) {
        Some(f) => unsafe { f(p, micros) },
        None => 0,
    }
}

unsafe extern "C" fn x_current_time(_vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let p = parent();
    // SAFETY: as in x_randomness.
    match unsafe { p.as_ref() }.and_then(|v| v.xCurrentTime) {
        Some(f) => unsafe { f(p, out) },
        None => ffi::SQLITE_ERROR,
    }
}

unsafe extern "C" fn x_current_time_int64(
    _vfs: *mut ffi::sqlite3_vfs,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let p = parent();
    // SAFETY: as in x_randomness; the default VFS is version 2 or later
    // when it has the method.
    match unsafe { p.as_ref() }
        .filter(|v| v.iVersion >= 2)
        .and_then(|v| v.xCurrentTimeInt64)
    {
        Some(f) => unsafe { f(p, out) },
        None => ffi::SQLITE_ERROR,
    }
}

unsafe extern "C" fn x_get_last_error(
    _vfs: *mut ffi::sqlite3_vfs,
    _n: c_int,
    _out: *mut c_char,
) -> c_int {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_size_comes_from_the_header() {
        let mut header = vec![0u8; 100];
        header[16..18].copy_from_slice(&[0x10, 0]);
        assert_eq!(page_size(&header), 4096);
        header[16..18].copy_from_slice(&[0, 1]);
        assert_eq!(page_size(&header), 4096, "not a power of two ≥ 512");
        header[16..18].copy_from_slice(&[1, 0]);
        assert_eq!(page_size(&header), 65536);
        assert_eq!(page_size(&[]), 4096);
    }

    #[test]
    fn reads_past_the_end_are_short_and_zero_filled() {
        let data = FileData::over(Arc::from(&[7u8; 10][..]));
        let mut out = [1u8; 16];
        assert!(!data.read(&mut out, 0));
        assert_eq!(&out[..10], &[7u8; 10]);
        assert_eq!(&out[10..], &[0u8; 6]);
    }

    #[test]
    fn a_truncation_hides_the_image_beyond_it() {
        let mut data = FileData::over(Arc::from(vec![9u8; 8192]));
        data.truncate(100);
        assert!(data.write(&[1], 8000));
        let mut out = [5u8; 4];
        assert!(data.read(&mut out, 200));
        assert_eq!(out, [0; 4], "zeros, not the image, after a truncation");
        data.reset();
        assert!(data.read(&mut out, 200));
        assert_eq!(out, [9; 4]);
    }
}
