//! The HTTP server against hostile clients: web pages (wrong Content-Type,
//! foreign Origin), DNS rebinding (foreign Host), missing tokens, slow
//! headers and bodies, and oversized actions.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use understudy_serve::http::HttpOptions;
use understudy_serve::ServeConfig;

use super::support::{error_code, mini, support_desk, Harness};

fn harness(options: HttpOptions) -> Harness {
    Harness::with_options(
        vec![support_desk(), mini()],
        ServeConfig::default(),
        None,
        options,
    )
}

fn episodes(h: &Harness) -> usize {
    h.store().episodes(&Default::default()).unwrap().len()
}

/// Sends a request; returns the status and the JSON body.
fn send(req: reqwest::blocking::RequestBuilder) -> (u16, Value) {
    let resp = req.send().expect("request");
    let status = resp.status().as_u16();
    let body = resp.json().unwrap_or(Value::Null);
    (status, body)
}

/// POSTs a reset with exactly `headers`.
fn reset_with(h: &Harness, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut req = h
        .client
        .post(format!("{}/reset", h.base))
        .body(json!({"task_id": "pay-back"}).to_string());
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    send(req)
}

#[test]
fn a_web_page_cannot_reset_or_step_an_episode() {
    let h = harness(HttpOptions::default());
    // The request: a "simple" cross-site POST, no preflight.
    let (status, out) = reset_with(
        &h,
        &[
            ("content-type", "text/plain"),
            ("origin", "http://evil.example"),
            ("host", "attacker.example"),
        ],
    );
    assert_eq!(status, 403, "{out}");
    // Each check on its own.
    for (headers, expected) in [
        (
            vec![("content-type", "text/plain")],
            (415, "unsupported_media_type"),
        ),
        (
            vec![("content-type", "application/x-www-form-urlencoded")],
            (415, "unsupported_media_type"),
        ),
        (vec![], (415, "unsupported_media_type")),
        (
            vec![
                ("content-type", "application/json"),
                ("origin", "http://evil.example"),
            ],
            (403, "forbidden_origin"),
        ),
        (
            vec![("content-type", "application/json"), ("origin", "null")],
            (403, "forbidden_origin"),
        ),
    ] {
        let (status, out) = reset_with(&h, &headers);
        assert_eq!((status, error_code(&out)), expected, "{headers:?}");
    }
    assert_eq!(episodes(&h), 0, "nothing was recorded");

    // A loopback page (a local dashboard) and plain clients still work.
    let (status, out) = reset_with(
        &h,
        &[
            ("content-type", "application/json; charset=utf-8"),
            ("origin", "http://localhost:3000"),
        ],
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(episodes(&h), 1);
}

#[test]
fn dns_rebinding_cannot_read_answers() {
    let h = harness(HttpOptions::default());
    let port = h.addr().rsplit_once(':').unwrap().1.to_string();
    for host in [
        format!("attacker.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "127.0.0.1:1".to_string(),
    ] {
        let (status, out) = send(
            h.client
                .get(format!("{}/tasks", h.base))
                .header("host", host.as_str()),
        );
        assert_eq!(
            (status, error_code(&out)),
            (403, "forbidden_host"),
            "{host}"
        );
        assert!(out.get("tasks").is_none());
    }
    for host in [format!("localhost:{port}"), h.addr().to_string()] {
        let (status, out) = send(
            h.client
                .get(format!("{}/health", h.base))
                .header("host", host.as_str()),
        );
        assert_eq!(status, 200, "{host}: {out}");
    }
}

#[test]
fn with_a_token_every_request_must_carry_it() {
    let h = harness(HttpOptions {
        token: Some("let-me-in".into()),
        ..HttpOptions::default()
    });
    let (status, out) = h.get("/health");
    assert_eq!((status, error_code(&out)), (401, "unauthorized"));
    let (status, out) = h.post("/reset", &json!({"task_id": "pay-back"}));
    assert_eq!((status, error_code(&out)), (401, "unauthorized"));
    let (status, _) = send(
        h.client
            .get(format!("{}/health", h.base))
            .bearer_auth("wrong"),
    );
    assert_eq!(status, 401);
    let (status, out) = send(
        h.client
            .post(format!("{}/reset", h.base))
            .bearer_auth("let-me-in")
            .json(&json!({"task_id": "pay-back"})),
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(episodes(&h), 1);
}

fn connect(h: &Harness) -> TcpStream {
    let s = TcpStream::connect(h.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    s
}

/// Reads until the server closes the connection; what it sent, and when.
fn read_to_close(mut s: TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "the server kept a stalled connection open for {:?}: {e}",
                started.elapsed()
            ),
        }
    }
    (
        String::from_utf8_lossy(&got).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn slow_headers_and_bodies_are_cut_off() {
    let h = harness(HttpOptions {
        header_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    });
    // Half a header, then nothing (slowloris).
    let mut s = connect(&h);
    write!(s, "GET /health HTTP/1.1\r\nHost: {}\r\nX-Slow: ", h.addr()).unwrap();
    let (_, took) = read_to_close(s);
    assert!(took < Duration::from_secs(5), "{took:?}");

    // A whole header, then a body that never completes.
    let mut s = connect(&h);
    write!(
        s,
        "POST /reset HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"task_id\"",
        h.addr()
    )
    .unwrap();
    let (reply, took) = read_to_close(s);
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("request_timeout"), "{reply}");

    // A body that trickles in, a byte at a time, is cut off as a whole.
    let mut s = connect(&h);
    write!(
        s,
        "POST /reset HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        h.addr()
    )
    .unwrap();
    let started = Instant::now();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for _ in 0..40 {
            if writer.write_all(b" ").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let (reply, _) = read_to_close(s);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    let _ = trickle.join();

    // Meanwhile ordinary requests are served.
    let (status, _) = h.get("/health");
    assert_eq!(status, 200);
    assert_eq!(episodes(&h), 0);
}

#[test]
fn an_oversized_action_is_an_invalid_action_not_a_memory_spike() {
    let h = harness(HttpOptions::default());
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let note = "x".repeat(1_100_000);
    let (status, out) = h.step(
        &id,
        json!({"tool": "view_accounts", "args": {"search": "ada", "note": note}}),
    );
    assert_eq!((status, error_code(&out)), (400, "invalid_action"), "{out}");
    assert!(out["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 1048576 bytes"));
    assert_eq!(
        h.store().steps(&id).unwrap().len(),
        0,
        "nothing was recorded"
    );
}
