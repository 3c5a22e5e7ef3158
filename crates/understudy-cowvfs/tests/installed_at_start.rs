//! The counting allocator is SQLite's before the program's first line
//! runs: a test binary (like any program linking the crate) opens a plain
//! connection first, on several threads at once, and SQLite must already
//! count through it (it would otherwise swap allocators under a running
//! SQLite, or not count at all).

use understudy_cowvfs::heap;

#[test]
fn sqlite_allocates_through_the_counting_allocator_from_the_start() {
    // Nothing in this test binary has used SQLite before this line.
    assert!(heap::installed(), "installed when the program started");
    let threads: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let conn = rusqlite::Connection::open_in_memory().expect("memory db");
                conn.execute_batch(&format!(
                    "CREATE TABLE t (x); INSERT INTO t VALUES (randomblob(100000 + {i}));"
                ))
                .expect("write");
                conn
            })
        })
        .collect();
    let conns: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    assert!(
        heap::used() > 400_000,
        "SQLite's blocks are counted: {}",
        heap::used()
    );
    drop(conns);
}
