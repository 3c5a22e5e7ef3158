//! SQLite's memory, counted without a lock.
//!
//! The engine's process-wide cap on what SQLite holds used to be
//! SQLite's own `hard_heap_limit`, which needs its memory statistics: one
//! global mutex taken on every allocation and free. With two sessions
//! stepping on two cores that mutex was most of what the second core did
//! (replaying the τ-bench retail tasks on two threads took 1.5× the CPU
//! time of one). Here SQLite allocates through [`methods`] instead, which
//! keep the same cap with one atomic counter, and its statistics are off.
//!
//! SQLite takes an allocator only before it first initializes, and
//! `sqlite3_config` must not run while another thread is starting SQLite:
//! a connection opened on one thread as the allocator was swapped on
//! another freed a block of one allocator through the other (the cowvfs
//! tests aborted with "free(): invalid pointer"). So it is installed once,
//! when the program starts, before `main` and any thread (a module
//! constructor, linked into every program that links this crate), and
//! never later, when another thread may be using SQLite. Should a program
//! start without it (or something have started SQLite first), the engine
//! falls back to SQLite's own limit ([`installed`] says which is in
//! force).
//!
//! Blocks come from the system allocator (as SQLite's own default does)
//! with a 16-byte header holding the size SQLite asked for, which
//! `xSize` and `xFree` read back.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use rusqlite::ffi;

/// Bytes before each block: its size, keeping the block 16-byte aligned.
const HEADER: usize = 16;

/// What SQLite holds now, in bytes (block sizes as SQLite asked for them).
static USED: AtomicI64 = AtomicI64::new(0);

/// The cap, in bytes; 0 is none.
static LIMIT: AtomicI64 = AtomicI64::new(0);

/// Whether SQLite allocates through [`methods`].
static INSTALLED: AtomicBool = AtomicBool::new(false);

ctor::declarative::ctor! {
    /// Makes SQLite allocate through the counting allocator when the
    /// program starts, unless SQLite has already started (then the
    /// configuration fails and nothing changes).
    // SAFETY (of running before main): this only records SQLite
    // configuration and stores an atomic; it uses no Rust runtime service,
    // allocates nothing and never unwinds.
    #[ctor(unsafe)]
    fn install() {
        let methods = methods();
        // SAFETY: both calls only record configuration (SQLite copies the
        // methods before returning); they fail with SQLITE_MISUSE and
        // change nothing once SQLite has initialized. The methods never
        // unwind.
        let ok = unsafe {
            ffi::sqlite3_config(
                ffi::SQLITE_CONFIG_MALLOC,
                &methods as *const ffi::sqlite3_mem_methods,
            ) == ffi::SQLITE_OK
                && ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) == ffi::SQLITE_OK
        };
        INSTALLED.store(ok, Ordering::Release);
    }
}

/// Whether the cap is kept here rather than by SQLite's `hard_heap_limit`.
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// Sets the cap (bytes; 0 for none) and returns it.
pub fn set_limit(bytes: i64) -> i64 {
    LIMIT.store(bytes.max(0), Ordering::Relaxed);
    bytes.max(0)
}

/// What SQLite holds now through the counting allocator, in bytes.
pub fn used() -> i64 {
    USED.load(Ordering::Relaxed)
}

/// Counts `bytes` more, unless that would pass the cap.
fn reserve(bytes: i64) -> bool {
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit == 0 {
        USED.fetch_add(bytes, Ordering::Relaxed);
        return true;
    }
    USED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
        (used + bytes <= limit).then_some(used + bytes)
    })
    .is_ok()
}

fn release(bytes: i64) {
    USED.fetch_sub(bytes, Ordering::Relaxed);
}

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

// SAFETY (for every block below): SQLite calls these as the
// `sqlite3_mem_methods` contract says, passing only pointers `x_malloc` or
// `x_realloc` returned and not yet freed. Each such pointer is HEADER bytes
// into a System block whose layout is `layout(size)`, with `size` written
// in its first bytes.

unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
    let Ok(size) = usize::try_from(n) else {
        return std::ptr::null_mut();
    };
    let Some(layout) = layout(size) else {
        return std::ptr::null_mut();
    };
    if !reserve(size as i64) {
        return std::ptr::null_mut();
    }
    // SAFETY: the layout's size is never zero (it includes the header).
    let base = unsafe { System.alloc(layout) };
    if base.is_null() {
        release(size as i64);
        return std::ptr::null_mut();
    }
    // SAFETY: `base` is a fresh block of at least HEADER bytes, 16-aligned.
    unsafe {
        (base as *mut usize).write(size);
        base.add(HEADER) as *mut c_void
    }
}

/// The size SQLite asked for when it got `p`.
///
/// # Safety
/// `p` is a live block from `x_malloc` or `x_realloc`.
unsafe fn size_of_block(p: *mut c_void) -> usize {
    // SAFETY: the caller's promise: the header precedes `p`.
    unsafe { ((p as *mut u8).sub(HEADER) as *mut usize).read() }
}

unsafe extern "C" fn x_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: see above; `p` is live until this returns.
    let size = unsafe { size_of_block(p) };
    release(size as i64);
    if let Some(layout) = layout(size) {
        // SAFETY: the block was allocated by System with this layout.
        unsafe { System.dealloc((p as *mut u8).sub(HEADER), layout) };
    }
}

unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if p.is_null() {
        // SAFETY: as for any call of x_malloc.
        return unsafe { x_malloc(n) };
    }
    // SAFETY: see above.
    let old = unsafe { size_of_block(p) };
    let Ok(new) = usize::try_from(n) else {
        return std::ptr::null_mut();
    };
    let (Some(old_layout), Some(_)) = (layout(old), layout(new)) else {
        return std::ptr::null_mut();
    };
    let grow = new as i64 - old as i64;
    if grow > 0 && !reserve(grow) {
        return std::ptr::null_mut();
    }
    // SAFETY: the block was allocated by System with `old_layout`; the new
    // size is non-zero and, checked by `layout(new)`, a valid layout size.
    let base = unsafe { System.realloc((p as *mut u8).sub(HEADER), old_layout, new + HEADER) };
    if base.is_null() {
        if grow > 0 {
            release(grow);
        }
        return std::ptr::null_mut();
    }
    if grow < 0 {
        release(-grow);
    }
    // SAFETY: `base` is the live, 16-aligned block of `new + HEADER` bytes.
    unsafe {
        (base as *mut usize).write(new);
        base.add(HEADER) as *mut c_void
    }
}

unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: see above.
    c_int::try_from(unsafe { size_of_block(p) }).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn x_roundup(n: c_int) -> c_int {
    n.checked_add(7).map_or(n, |m| m & !7)
}

unsafe extern "C" fn x_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_shutdown(_: *mut c_void) {}

/// The methods SQLite allocates through (it copies them when configured).
fn methods() -> ffi::sqlite3_mem_methods {
    ffi::sqlite3_mem_methods {
        xMalloc: Some(x_malloc),
        xFree: Some(x_free),
        xRealloc: Some(x_realloc),
        xSize: Some(x_size),
        xRoundup: Some(x_roundup),
        xInit: Some(x_init),
        xShutdown: Some(x_shutdown),
        pAppData: std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_size_and_their_bytes() {
        // SAFETY: the test uses the methods as SQLite would.
        unsafe {
            let p = x_malloc(100);
            assert!(!p.is_null());
            assert_eq!(x_size(p), 100);
            assert_eq!(p as usize % HEADER, 0, "blocks are 16-byte aligned");
            std::ptr::write_bytes(p as *mut u8, 7, 100);
            let q = x_realloc(p, 5000);
            assert!(!q.is_null());
            assert_eq!(x_size(q), 5000);
            assert_eq!(*(q as *mut u8).add(99), 7, "realloc keeps the bytes");
            let r = x_realloc(q, 10);
            assert_eq!(x_size(r), 10);
            x_free(r);
            x_free(std::ptr::null_mut());
            assert_eq!(x_roundup(1), 8);
            assert_eq!(x_roundup(16), 16);
            assert!(x_malloc(-1).is_null());
        }
    }
}
