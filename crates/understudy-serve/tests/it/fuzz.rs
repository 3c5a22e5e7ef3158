//! Property-based fuzzing of agent requests: random and mutated lines to
//! the stdio handler, random and mutated HTTP requests to the router. The
//! property: every request gets one JSON reply (a result, or an error with
//! a code and a message), and nothing panics.
//!
//! Bounded by default (64 cases, 20 s per harness); see
//! `understudy_testkit::fuzz` for a longer run.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use serde_json::{json, Value};
use tower::ServiceExt;
use understudy::store::Store;
use understudy_serve::http::{self, Guard};
use understudy_serve::{ServeConfig, Server};
use understudy_testkit::fuzz::{self, ByteEdit, Edit};

use super::support::{mini, support_desk};

fn server(dir: &tempfile::TempDir) -> Arc<Server> {
    let store = Arc::new(Store::open(dir.path().join("fuzz.sqlite")).expect("store"));
    let config = ServeConfig {
        max_concurrent: 8,
        ..ServeConfig::default()
    };
    Arc::new(Server::new(vec![support_desk(), mini()], store, config).expect("server"))
}

/// Keeps the registry from filling up with fuzzed episodes, while letting
/// a few live on so that later cases step them.
fn forget_some(server: &Server) {
    if server.open_sessions() >= 6 {
        server.close_all();
    }
}

/// Real requests to mutate: every op, every action shape.
fn requests() -> Vec<Value> {
    vec![
        json!({"id": 1, "op": "reset", "task_id": "pay-back", "seed": 3, "model": "m"}),
        json!({"op": "reset", "task_id": "duplicate-charge", "world_id": "support-desk", "episode_id": "fuzz-1"}),
        json!({"id": "s", "op": "step", "episode_id": "fuzz-1", "action": {"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25}}}),
        json!({"op": "step", "episode_id": "fuzz-1", "action": {"message": "Hello"}}),
        json!({"op": "step", "episode_id": "fuzz-1", "action": {"name": "get_account", "arguments": "{\"account_id\": \"A-1\"}"}}),
        json!({"op": "step", "episode_id": "fuzz-1", "action": {"type": "function", "function": {"name": "view_accounts", "arguments": {"search": "ada"}}}}),
        json!({"op": "step", "episode_id": "fuzz-1", "action": {"name": "respond", "kwargs": {"content": "hi"}}}),
        json!({"op": "step", "episode_id": "fuzz-1", "action": {"submit": {"final_message": "done"}}}),
        json!({"op": "state", "episode_id": "fuzz-1"}),
        json!({"op": "close", "episode_id": "fuzz-1"}),
        json!({"op": "schema", "world_id": "mini", "task_id": "pay-back"}),
        json!({"op": "tasks", "world_id": "mini"}),
        json!({"op": "health"}),
    ]
}

/// A request line: a real request mutated as JSON, then maybe as bytes.
fn line() -> impl Strategy<Value = (usize, Vec<Edit<Value>>, Option<Vec<ByteEdit>>)> {
    (
        0..requests().len(),
        fuzz::edits(fuzz::json_value(), fuzz::json_scalars()),
        proptest::option::weighted(0.3, fuzz::byte_edits()),
    )
}

fn render(request: usize, tree: &[Edit<Value>], bytes: &Option<Vec<ByteEdit>>) -> Vec<u8> {
    let text = fuzz::apply(&requests()[request], tree)
        .to_string()
        .into_bytes();
    match bytes {
        Some(edits) => fuzz::apply_bytes(&text, edits),
        None => text,
    }
}

/// `reply` is one JSON object holding a result or an error with a code
/// and a message.
fn well_formed(reply: &[u8]) -> Result<Value, TestCaseError> {
    let v: Value = serde_json::from_slice(reply).map_err(|e| {
        TestCaseError::fail(format!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(reply)
        ))
    })?;
    if let Some(err) = v.get("error") {
        prop_assert!(err["code"].as_str().is_some_and(|c| !c.is_empty()), "{v}");
        prop_assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{v}"
        );
    }
    Ok(v)
}

#[test]
fn any_stdio_line_gets_one_json_reply() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let cases = prop_oneof![
        4 => line().prop_map(|(r, t, b)| render(r, &t, &b)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ];
    fuzz::check("stdio lines", cases, |bytes| {
        let reply = understudy_serve::stdio::handle_line(&server, &bytes);
        prop_assert!(!reply.contains(&b'\n'), "one line");
        let v = well_formed(&reply)?;
        prop_assert!(v.get("result").is_some() != v.get("error").is_some(), "{v}");
        forget_some(&server);
        Ok(())
    });
    // Still serving.
    let reply = understudy_serve::stdio::handle_line(&server, br#"{"op": "health"}"#);
    assert!(well_formed(&reply).unwrap().get("result").is_some());
}

/// An HTTP request: method, path, headers and body, mutated.
#[derive(Debug, Clone)]
struct HttpCase {
    method: &'static str,
    path: String,
    content_type: Option<&'static str>,
    host: &'static str,
    origin: Option<&'static str>,
    body: Vec<u8>,
}

fn http_case() -> impl Strategy<Value = HttpCase> {
    let method = prop::sample::select(vec![
        "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD",
    ]);
    let path = prop_oneof![
        prop::sample::select(vec![
            "/reset",
            "/step",
            "/close",
            "/state",
            "/schema",
            "/tasks",
            "/health",
            "/",
            "/nope",
            "/state?episode_id=fuzz-1",
            "/schema?world_id=mini&task_id=pay-back",
            "/tasks?world_id=%ff%fe",
            "/state?episode_id=",
            "/health?x=1&x=2",
        ])
        .prop_map(str::to_string),
        "/[a-z?=&%0-9]{0,20}",
    ];
    let content_type = prop::sample::select(vec![
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ]);
    let host = prop::sample::select(vec![
        "127.0.0.1:8000",
        "127.0.0.1:8000",
        "localhost:8000",
        "evil.example",
        "",
    ]);
    let origin = prop::sample::select(vec![
        None,
        None,
        Some("http://localhost:3000"),
        Some("http://evil.example"),
        Some("null"),
    ]);
    let body = prop_oneof![
        4 => line().prop_map(|(r, t, b)| render(r, &t, &b)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
        1 => Just(Vec::new()),
    ];
    (method, path, content_type, host, origin, body).prop_map(
        |(method, path, content_type, host, origin, body)| HttpCase {
            method,
            path,
            content_type,
            host,
            origin,
            body,
        },
    )
}

#[test]
fn any_http_request_gets_a_json_reply() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let guard = Guard::new("127.0.0.1:8000".parse().unwrap(), None, &[]);
    let app = http::router(
        Arc::clone(&server),
        guard,
        std::time::Duration::from_secs(5),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    fuzz::check("http requests", http_case(), |case| {
        let mut req = Request::builder()
            .method(case.method)
            .uri(case.path.as_str());
        if !case.host.is_empty() {
            req = req.header("host", case.host);
        }
        if let Some(ct) = case.content_type {
            req = req.header("content-type", ct);
        }
        if let Some(o) = case.origin {
            req = req.header("origin", o);
        }
        let Ok(req) = req.body(Body::from(case.body.clone())) else {
            return Ok(()); // not a request hyper would hand us
        };
        let resp = runtime
            .block_on(app.clone().oneshot(req))
            .expect("the router is infallible");
        let status = resp.status().as_u16();
        let bytes = runtime
            .block_on(http_body_util::BodyExt::collect(resp.into_body()))
            .expect("the body is in memory")
            .to_bytes();
        if case.method == "HEAD" {
            return Ok(()); // no body by definition
        }
        let v = well_formed(&bytes)?;
        prop_assert_eq!(status == 200, v.get("error").is_none(), "{} {}", status, v);
        forget_some(&server);
        Ok(())
    });
}
