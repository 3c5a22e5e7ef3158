//! The server's limits: a request head that does not arrive in time closes
//! the connection, connections over the cap are answered `503 busy`, and a
//! body over the limit is refused (413) whether or not it declares its
//! length, with nothing stored.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use understudy_hub::{Limits, Role};

use crate::support::*;

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

#[test]
fn a_stalled_request_head_is_cut_after_the_header_timeout() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_with_limits(
        &db,
        Limits {
            header_read_timeout: Duration::from_millis(400),
            ..Limits::default()
        },
    );
    let mut stalled = TcpStream::connect(addr_of(&hub.url)).expect("a connection");
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    let started = Instant::now();
    // A request line and one header, and then nothing.
    stalled
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: hub\r\n")
        .expect("a partial head");
    let mut rest = Vec::new();
    let read = stalled.read_to_end(&mut rest);
    let waited = started.elapsed();
    assert!(
        read.is_ok(),
        "the hub closes the connection (not our 10 s read timeout): {read:?}"
    );
    assert!(
        waited >= Duration::from_millis(350) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    assert!(
        !String::from_utf8_lossy(&rest).contains("200 OK"),
        "the stalled request was not served"
    );
    // A prompt request on the same hub is served.
    let ok = reqwest::blocking::get(format!("{}/v1/health", hub.url)).expect("health");
    assert_eq!(ok.status().as_u16(), 200);
}

#[test]
fn connections_over_the_cap_are_answered_busy_until_one_closes() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_with_limits(
        &db,
        Limits {
            max_connections: 2,
            ..Limits::default()
        },
    );
    let health = || {
        let http = reqwest::blocking::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .expect("a client");
        let resp = http
            .get(format!("{}/v1/health", hub.url))
            .send()
            .expect("an answer");
        let status = resp.status().as_u16();
        (status, resp.text().expect("a body"))
    };
    assert_eq!(health().0, 200);
    // The probe's own connection may still hold its place for a moment
    // after it closed, and a connection over the cap is answered `busy`
    // at once and closed: connect again until two connections are held
    // (nothing comes back on them).
    let mut held: Vec<TcpStream> = Vec::new();
    let started = Instant::now();
    while held.len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the hub kept refusing a second held connection"
        );
        let stream = TcpStream::connect(addr_of(&hub.url)).expect("a connection");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("a read timeout");
        let mut first = [0u8; 1];
        match stream.peek(&mut first) {
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                stream.set_read_timeout(None).expect("no read timeout");
                held.push(stream);
            }
            Err(e) => panic!("reading a held connection: {e}"),
        }
    }
    // The two held connections count once the hub has accepted them; on a
    // loaded machine that can take longer than any fixed pause, so ask
    // until the cap answers (within 10 s).
    let started = Instant::now();
    let (status, body) = loop {
        let answer = health();
        if answer.0 != 200 || started.elapsed() > Duration::from_secs(10) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["code"], "busy");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("maximum of 2 connections")),
        "{body}"
    );
    let e = client(&hub.url, "ush_x").me().expect_err("busy");
    assert!(e.is_transient(), "a client retries busy: {e}");
    drop(held);
    let started = Instant::now();
    loop {
        let (status, _) = health();
        if status == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a freed connection is reused"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_body_over_the_limit_is_refused_with_or_without_a_length() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, 4096);
    let admin = person(&db, "admin", Role::Admin);
    let url = format!("{}/v1/people", hub.url);
    let big = format!(
        r#"{{"login": "eve", "name": "{}", "role": "expert"}}"#,
        "e".repeat(8000)
    );
    let http = reqwest::blocking::Client::new();
    // With a Content-Length.
    let declared = http
        .post(&url)
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(big.clone())
        .send()
        .expect("an answer");
    assert_eq!(declared.status().as_u16(), 413);
    let body: serde_json::Value = declared.json().expect("JSON");
    assert_eq!(body["code"], "payload_too_large");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("4096 bytes"),
        "{body}"
    );
    // Chunked, without a length: cut when the limit is passed. The hub
    // answers 413 and closes while the client may still be sending, so the
    // client sees either that answer or the connection cut; never a 200,
    // and nothing stored.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = big
        .as_bytes()
        .chunks(1000)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let streamed = http
        .post(&url)
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(reqwest::blocking::Body::new(ChunkReader::new(chunks)))
        .send();
    match streamed {
        Ok(answer) => assert_eq!(answer.status().as_u16(), 413),
        Err(e) => assert!(e.is_request() || e.is_body(), "the hub cut the upload: {e}"),
    }
    assert_eq!(
        count(&db, "SELECT count(*) FROM people WHERE login = 'eve'"),
        0
    );
    // Under the limit, the same request is served.
    let small = http
        .post(&url)
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(r#"{"login": "eve", "name": "Eve", "role": "expert"}"#)
        .send()
        .expect("an answer");
    assert_eq!(small.status().as_u16(), 200);
}

/// A reader of unknown length, so reqwest sends the body chunked.
struct ChunkReader {
    chunks: std::vec::IntoIter<Result<Vec<u8>, std::io::Error>>,
    current: std::io::Cursor<Vec<u8>>,
}

impl ChunkReader {
    fn new(chunks: Vec<Result<Vec<u8>, std::io::Error>>) -> ChunkReader {
        ChunkReader {
            chunks: chunks.into_iter(),
            current: std::io::Cursor::new(Vec::new()),
        }
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            match self.chunks.next() {
                Some(c) => self.current = std::io::Cursor::new(c?),
                None => return Ok(0),
            }
        }
    }
}
