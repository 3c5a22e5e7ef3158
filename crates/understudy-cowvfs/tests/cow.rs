//! The copy-on-write VFS against real SQLite: connections over one image
//! see their own writes only, a reset gives the image back, and the heap
//! limit covers private pages.

use std::sync::Arc;

use rusqlite::{Connection, OpenFlags, MAIN_DB};
use understudy_cowvfs::{open, ResetError};

fn image(rows: i64) -> Arc<[u8]> {
    let conn = Connection::open_in_memory().expect("memory db");
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v);",
    )
    .expect("schema");
    for i in 0..rows {
        conn.execute(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            (i, format!("row {i}")),
        )
        .expect("row");
    }
    Arc::from(&*conn.serialize(MAIN_DB).expect("serialize"))
}

fn count(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .expect("count")
}

fn flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

#[test]
fn two_connections_over_one_image_see_only_their_own_writes() {
    let img = image(2000);
    let (a, oa) = open(Arc::clone(&img), flags()).expect("a");
    let (b, ob) = open(Arc::clone(&img), flags()).expect("b");
    a.execute("DELETE FROM t WHERE id < 1000", [])
        .expect("delete");
    b.execute("UPDATE t SET v = 'changed' WHERE id = 5", [])
        .expect("update");
    assert_eq!(count(&a), 1000);
    assert_eq!(count(&b), 2000);
    let v: String = a
        .query_row("SELECT v FROM t WHERE id = 1500", [], |r| r.get(0))
        .expect("row");
    assert_eq!(v, "row 1500");
    assert!(oa.private_bytes() > 0);
    assert!(
        ob.private_bytes() < img.len(),
        "b copied only what it wrote"
    );
}

#[test]
fn a_reset_gives_the_image_back_and_statements_go_on_working() {
    let img = image(500);
    let (conn, overlay) = open(img, flags()).expect("open");
    for round in 0..5 {
        conn.prepare_cached("INSERT INTO t (v) VALUES ('new')")
            .expect("prepare")
            .execute([])
            .expect("insert");
        conn.execute("UPDATE t SET v = 'x' WHERE id < 100", [])
            .expect("update");
        assert_eq!(count(&conn), 501, "round {round}");
        overlay.reset().expect("reset");
        assert_eq!(overlay.private_bytes(), 0);
        assert_eq!(count(&conn), 500, "round {round}: the seed again");
        let x: i64 = conn
            .query_row("SELECT count(*) FROM t WHERE v = 'x'", [], |r| r.get(0))
            .expect("x");
        assert_eq!(x, 0);
        conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
            .map(|s| assert_eq!(s, "ok"))
            .expect("integrity");
    }
}

#[test]
fn a_reset_is_refused_while_a_transaction_is_open() {
    let (conn, overlay) = open(image(10), flags()).expect("open");
    conn.execute_batch("BEGIN; DELETE FROM t;").expect("begin");
    assert_eq!(overlay.reset(), Err(ResetError::Locked));
    conn.execute_batch("ROLLBACK").expect("rollback");
    assert_eq!(
        count(&conn),
        10,
        "the rollback worked from the memory journal"
    );
    overlay.reset().expect("free again");
}

#[test]
fn savepoints_roll_back() {
    let (conn, _overlay) = open(image(10), flags()).expect("open");
    conn.execute_batch("SAVEPOINT s; DELETE FROM t; ROLLBACK TO s; RELEASE s;")
        .expect("savepoint");
    assert_eq!(count(&conn), 10);
}

#[test]
fn an_empty_image_is_a_new_database() {
    let (conn, _overlay) = open(Arc::from(&[][..]), flags()).expect("open");
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a');",
    )
    .expect("create");
    assert_eq!(count(&conn), 1);
}

#[test]
fn a_read_only_connection_reads_the_image() {
    let (conn, _overlay) = open(
        image(50),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open");
    assert_eq!(count(&conn), 50);
    assert!(conn.execute("DELETE FROM t", []).is_err());
}

#[test]
fn big_sorts_spill_to_private_temporary_files() {
    let (conn, _overlay) = open(image(3000), flags()).expect("open");
    conn.execute_batch("PRAGMA cache_size = 10; CREATE TEMP TABLE big AS SELECT * FROM t;")
        .expect("temp");
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT v FROM big ORDER BY v DESC)",
            [],
            |r| r.get(0),
        )
        .expect("sort");
    assert_eq!(n, 3000);
}

#[test]
fn a_database_built_over_an_empty_image_becomes_an_image_once_closed() {
    let (conn, overlay) = open(Arc::from(&[][..]), flags()).expect("open");
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);")
        .expect("schema");
    for i in 0..3000 {
        conn.execute(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            (i, format!("row {i}")),
        )
        .expect("row");
    }
    let overlay = overlay
        .into_image()
        .expect_err("refused while the connection has the file open");
    drop(conn);
    let img = overlay.into_image().expect("closed, so the pages are ours");
    assert!(img.starts_with(b"SQLite format 3\0"));
    // Every episode reads it through the VFS, and SQLite's own
    // deserialize agrees on every row.
    let (over, _) = open(Arc::clone(&img), flags()).expect("over the image");
    assert_eq!(count(&over), 3000);
    let mut copy = Connection::open_in_memory().expect("memory db");
    copy.deserialize_read_exact(MAIN_DB, &img[..], img.len(), true)
        .expect("deserialize");
    let v: String = copy
        .query_row("SELECT v FROM t WHERE id = 2999", [], |r| r.get(0))
        .expect("row");
    assert_eq!(v, "row 2999");
    let check: String = copy
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
}

#[test]
fn an_untouched_overlay_gives_back_its_image_without_a_copy() {
    let img = image(10);
    let (conn, overlay) = open(Arc::clone(&img), flags()).expect("open");
    assert_eq!(count(&conn), 10);
    drop(conn);
    let back = overlay.into_image().expect("closed");
    assert!(Arc::ptr_eq(&back, &img));
}
