//! OpenEnv's surface over real HTTP on loopback: `/ws` sessions (an
//! episode end to end, framing errors, the guard, the end of a session),
//! reset without a task, `/metadata` and `/openapi.json` against real
//! responses.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};
use understudy::store::EpisodeStatus;
use understudy_serve::http::HttpOptions;
use understudy_serve::ServeConfig;

use super::support::{error_code, mini, solution, support_desk, Harness};

type Socket = WebSocket<TcpStream>;

/// Opens `/ws` with extra `headers`; the HTTP status and body when the
/// handshake is refused.
fn open_with(h: &Harness, headers: &[(&str, &str)]) -> Result<Socket, (u16, Value)> {
    let mut req = format!("ws://{}/ws", h.addr())
        .into_client_request()
        .expect("request");
    for (k, v) in headers {
        req.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    let stream = TcpStream::connect(h.addr()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    match tungstenite::client(req, stream) {
        Ok((socket, _)) => Ok(socket),
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(resp))) => {
            let status = resp.status().as_u16();
            let body = resp
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            Err((status, body))
        }
        Err(e) => panic!("handshake failed: {e}"),
    }
}

fn open(h: &Harness) -> Socket {
    open_with(h, &[]).unwrap_or_else(|(s, b)| panic!("refused: {s} {b}"))
}

/// Sends `text`, returns the answer (a JSON text message).
fn ask_raw(socket: &mut Socket, text: &str) -> Value {
    socket.send(Message::text(text)).expect("send");
    loop {
        match socket.read().expect("an answer") {
            Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON answer"),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("expected a text answer, got {other:?}"),
        }
    }
}

fn ask(socket: &mut Socket, message: Value) -> Value {
    ask_raw(socket, &message.to_string())
}

/// The close frame the server ends with.
fn closed_with(socket: &mut Socket) -> (CloseCode, String) {
    loop {
        match socket.read() {
            Ok(Message::Close(Some(f))) => return (f.code, f.reason.as_str().to_string()),
            Ok(Message::Close(None)) => panic!("closed without a frame"),
            Ok(_) => continue,
            Err(e) => panic!("expected a close frame, got {e}"),
        }
    }
}

/// `(OpenEnv code, Understudy code)` of an error answer.
fn ws_error(answer: &Value) -> (&str, &str) {
    assert_eq!(answer["type"], "error", "{answer}");
    assert!(
        answer["data"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{answer}"
    );
    (
        answer["data"]["code"].as_str().unwrap(),
        answer["data"]["api_code"].as_str().unwrap(),
    )
}

fn status_of(h: &Harness, id: &str) -> EpisodeStatus {
    h.store().episode(id).expect("stored").status
}

/// Waits until the stored status of `id` is `want`.
fn wait_for_status(h: &Harness, id: &str, want: EpisodeStatus) {
    let start = Instant::now();
    while status_of(h, id) != want {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{id} stayed {:?}",
            status_of(h, id)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_ws_session_runs_a_recorded_episode_like_http() {
    let h = Harness::start(ServeConfig::default(), None);
    let mut ws = open(&h);
    let state = ask(&mut ws, json!({"type": "state"}));
    assert_eq!(
        state,
        json!({"type": "state", "data": {"episode_id": null, "step_count": 0}})
    );
    let reset = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "duplicate-charge", "seed": 7, "model": "ws-agent"}}),
    );
    assert_eq!(reset["type"], "observation", "{reset}");
    let data = &reset["data"];
    // The same step response as `POST /reset`.
    let (status, http) = h.post(
        "/reset",
        &json!({"task_id": "duplicate-charge", "seed": 7, "model": "http-agent"}),
    );
    assert_eq!(status, 200);
    assert_eq!(data["observation"], http["observation"]);
    assert_eq!(
        (data["reward"].as_f64(), data["done"].as_bool()),
        (Some(0.0), Some(false))
    );
    let id = data["episode_id"].as_str().unwrap().to_string();

    let actions = solution(&support_desk(), "duplicate-charge");
    for (i, action) in actions.iter().enumerate() {
        let out = ask(&mut ws, json!({"type": "step", "data": action}));
        assert_eq!(out["type"], "observation", "step {i}: {out}");
        assert_eq!(out["data"]["observation"]["ok"], true, "step {i}: {out}");
        assert_eq!(out["data"]["info"]["steps"], i + 1);
    }
    let end = ask(&mut ws, json!({"type": "step", "data": {"submit": true}}));
    assert_eq!(end["data"]["done"], true, "{end}");
    assert_eq!(end["data"]["reward"].as_f64(), Some(1.0), "{end}");
    let state = ask(&mut ws, json!({"type": "state"}));
    assert_eq!(state["type"], "state");
    assert_eq!(
        (
            &state["data"]["status"],
            &state["data"]["step_count"],
            &state["data"]["model"]
        ),
        (
            &json!("submitted"),
            &json!(actions.len()),
            &json!("ws-agent")
        )
    );
    let over = ask(&mut ws, json!({"type": "step", "data": {"message": "hi"}}));
    assert_eq!(ws_error(&over), ("EXECUTION_ERROR", "episode_over"));

    ws.send(Message::text(json!({"type": "close"}).to_string()))
        .unwrap();
    assert_eq!(closed_with(&mut ws).0, CloseCode::Normal);
    assert_eq!(status_of(&h, &id), EpisodeStatus::Submitted);
    assert_eq!(h.store().steps(&id).unwrap().len(), actions.len());
}

#[test]
fn framing_errors_get_clear_errors_and_the_session_goes_on() {
    let h = Harness::start(ServeConfig::default(), None);
    let mut ws = open(&h);
    let cases: Vec<(&str, (&str, &str), &str)> = vec![
        ("{oops", ("INVALID_JSON", "invalid_json"), "not valid JSON"),
        (
            "[1, 2]",
            ("VALIDATION_ERROR", "invalid_request"),
            "JSON object",
        ),
        (
            r#"{"data": {}}"#,
            ("UNKNOWN_TYPE", "unknown_type"),
            "no `type`",
        ),
        (
            r#"{"type": 7}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "`type` must be text",
        ),
        (
            r#"{"type": "launch"}"#,
            ("UNKNOWN_TYPE", "unknown_type"),
            "`launch`",
        ),
        (
            r#"{"type": "mcp", "data": {}}"#,
            ("UNKNOWN_TYPE", "unknown_type"),
            "MCP",
        ),
        (
            r#"{"type": "state", "extra": 1}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "`extra`",
        ),
        (
            r#"{"type": "step"}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "needs `data`",
        ),
        (
            r#"{"type": "step", "data": "hi"}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "JSON object",
        ),
        (
            r#"{"type": "step", "data": {"message": "hi"}}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "send `reset` first",
        ),
        (
            r#"{"type": "reset", "data": {"seeds": 1}}"#,
            ("VALIDATION_ERROR", "invalid_request"),
            "`seeds`",
        ),
        (
            r#"{"type": "reset", "data": {"task_id": "nope"}}"#,
            ("EXECUTION_ERROR", "unknown_task"),
            "nope",
        ),
    ];
    for (text, codes, needle) in cases {
        let answer = ask_raw(&mut ws, text);
        assert_eq!(ws_error(&answer), codes, "{text}: {answer}");
        let message = answer["data"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{text}: {message}");
    }
    // A binary message that is not text.
    ws.send(Message::binary(vec![0xff, 0xfe])).unwrap();
    let answer = loop {
        if let Message::Text(t) = ws.read().unwrap() {
            break serde_json::from_str::<Value>(t.as_str()).unwrap();
        }
    };
    assert_eq!(ws_error(&answer).0, "INVALID_JSON");

    // Still serving: an episode runs, and a refused step leaves it as it was.
    let reset = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "pay-back"}}),
    );
    assert_eq!(reset["type"], "observation", "{reset}");
    let bad = ask(&mut ws, json!({"type": "step", "data": {"args": {}}}));
    assert_eq!(ws_error(&bad), ("VALIDATION_ERROR", "invalid_action"));
    let state = ask(&mut ws, json!({"type": "state"}));
    assert_eq!(state["data"]["step_count"], 0);
    // A reset with a typo does not end the running episode.
    let typo = ask(
        &mut ws,
        json!({"type": "reset", "data": {"tsk_id": "pay-back"}}),
    );
    assert_eq!(ws_error(&typo).1, "invalid_request");
    let id = state["data"]["episode_id"].as_str().unwrap().to_string();
    assert_eq!(status_of(&h, &id), EpisodeStatus::InProgress);
}

#[test]
fn an_oversized_message_closes_the_socket_with_1009_and_the_server_goes_on() {
    let h = Harness::start(ServeConfig::default(), None);
    let mut ws = open(&h);
    let reset = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "pay-back"}}),
    );
    let id = reset["data"]["episode_id"].as_str().unwrap().to_string();
    let huge = json!({"type": "step", "data": {"message": "x".repeat(5 << 20)}}).to_string();
    // The server may close before the whole message is written.
    let _ = ws.send(Message::text(huge));
    let (code, reason) = closed_with(&mut ws);
    assert_eq!(code, CloseCode::Size, "{reason}");
    assert!(reason.contains("larger than 4194304 bytes"), "{reason}");
    // The session's episode was closed with it, and the server serves on.
    wait_for_status(&h, &id, EpisodeStatus::Abandoned);
    let mut again = open(&h);
    let state = ask(&mut again, json!({"type": "state"}));
    assert_eq!(state["type"], "state");
    assert_eq!(h.get("/health").1["status"], "healthy");
}

#[test]
fn a_dropped_connection_or_a_new_reset_abandons_the_running_episode() {
    let h = Harness::start(ServeConfig::default(), None);
    let mut ws = open(&h);
    let first = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "pay-back"}}),
    );
    let first = first["data"]["episode_id"].as_str().unwrap().to_string();
    let step = ask(
        &mut ws,
        json!({"type": "step", "data": {"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 5}}}),
    );
    assert_eq!(step["type"], "observation", "{step}");
    let second = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "frozen"}}),
    );
    let second = second["data"]["episode_id"].as_str().unwrap().to_string();
    assert_eq!(status_of(&h, &first), EpisodeStatus::Abandoned);
    assert_eq!(h.store().steps(&first).unwrap().len(), 1, "every step kept");
    // No close message: the TCP connection just goes away.
    drop(ws);
    wait_for_status(&h, &second, EpisodeStatus::Abandoned);
    assert_eq!(h.server.open_sessions(), 0);
}

#[test]
fn an_idle_session_is_closed_with_1008() {
    let config = ServeConfig {
        idle_timeout: Duration::from_millis(300),
        ..ServeConfig::default()
    };
    let h = Harness::start(config, None);
    let mut ws = open(&h);
    let reset = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "pay-back"}}),
    );
    let id = reset["data"]["episode_id"].as_str().unwrap().to_string();
    let (code, reason) = closed_with(&mut ws);
    assert_eq!(code, CloseCode::Policy, "{reason}");
    assert!(reason.contains("idle timeout"), "{reason}");
    wait_for_status(&h, &id, EpisodeStatus::Abandoned);
}

#[test]
fn shutdown_closes_sessions_with_1001() {
    let mut h = Harness::start(ServeConfig::default(), None);
    let mut ws = open(&h);
    let reset = ask(
        &mut ws,
        json!({"type": "reset", "data": {"task_id": "pay-back"}}),
    );
    let id = reset["data"]["episode_id"].as_str().unwrap().to_string();
    let store = std::sync::Arc::clone(h.store());
    h.shutdown();
    assert_eq!(closed_with(&mut ws).0, CloseCode::Away);
    assert_eq!(store.episode(&id).unwrap().status, EpisodeStatus::Abandoned);
}

#[test]
fn the_http_guard_applies_to_ws() {
    let h = Harness::with_options(
        vec![support_desk(), mini()],
        ServeConfig::default(),
        None,
        HttpOptions {
            token: Some("s3cret".into()),
            ..HttpOptions::default()
        },
    );
    let bearer = ("authorization", "Bearer s3cret");
    let refused = |headers: &[(&str, &str)]| match open_with(&h, headers) {
        Ok(_) => panic!("{headers:?} was let in"),
        Err((status, body)) => (status, error_code(&body).to_string()),
    };
    assert_eq!(refused(&[]), (401, "unauthorized".into()));
    assert_eq!(
        refused(&[bearer, ("origin", "http://evil.example")]),
        (403, "forbidden_origin".into())
    );
    assert_eq!(
        refused(&[bearer, ("host", "rebind.example")]),
        (403, "forbidden_host".into())
    );
    let mut ws = open_with(&h, &[bearer, ("origin", "http://localhost:3000")])
        .unwrap_or_else(|(s, b)| panic!("refused: {s} {b}"));
    assert_eq!(ask(&mut ws, json!({"type": "state"}))["type"], "state");
    // A plain GET is not a handshake.
    let resp = h
        .client
        .get(format!("{}/ws", h.base))
        .header("authorization", "Bearer s3cret")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 426);
    let body: Value = resp.json().unwrap();
    assert_eq!(error_code(&body), "upgrade_required");
}

#[test]
fn reset_without_a_task_picks_by_seed() {
    let h = Harness::start(ServeConfig::default(), None);
    let (_, listed) = h.get("/tasks");
    let listed: Vec<(String, String)> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["world_id"].as_str().unwrap().to_string(),
                t["task_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let n = listed.len() as u64;
    let picked = |body: Value| {
        let out = h.reset(body);
        (
            out["info"]["world_id"].as_str().unwrap().to_string(),
            out["info"]["task_id"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(picked(json!({})), listed[0]);
    assert_eq!(picked(json!({"seed": 1})), listed[1]);
    assert_eq!(
        picked(json!({"seed": n + 1})),
        listed[1],
        "modulo the count"
    );
    assert_eq!(
        picked(json!({"world_id": "mini", "seed": 1})),
        ("mini".to_string(), "frozen".to_string())
    );
    let (status, out) = h.post("/reset", &json!({"world_id": "nowhere"}));
    assert_eq!((status, error_code(&out)), (404, "unknown_world"));
}

#[test]
fn metadata_names_the_world_or_the_server() {
    let one = Harness::with_worlds(vec![mini()], ServeConfig::default(), None);
    let (status, meta) = one.get("/metadata");
    assert_eq!(status, 200, "{meta}");
    let world = mini();
    assert_eq!(meta["name"], world.meta.name.as_str());
    assert_eq!(meta["version"], world.meta.version.as_str());
    assert!(meta["description"].as_str().is_some_and(|d| !d.is_empty()));

    let several = Harness::start(ServeConfig::default(), None);
    let (_, meta) = several.get("/metadata");
    assert_eq!(meta["name"], "Understudy");
    let description = meta["description"].as_str().unwrap();
    assert!(
        description.contains("`support-desk`") && description.contains("`mini`"),
        "{description}"
    );
    let (status, out) = several.get("/metadata?x=1");
    assert_eq!((status, error_code(&out)), (400, "invalid_request"));
}

/// Validates `instance` against `schema` (a part of the OpenAPI document).
fn assert_valid(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{what}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}\n{instance}");
}

#[test]
fn openapi_describes_the_routes_and_real_responses_match_it() {
    let h = Harness::start(ServeConfig::default(), None);
    let (status, doc) = h.get("/openapi.json");
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    let paths = doc["paths"].as_object().unwrap();
    for route in understudy_serve::http::ROUTES {
        assert!(paths.contains_key(route.path), "{} missing", route.path);
    }
    for path in [
        "/ws",
        "/openapi.json",
        "/reset",
        "/step",
        "/state",
        "/metadata",
    ] {
        assert!(paths.contains_key(path), "{path}");
    }
    // The request body lists exactly the fields the server accepts.
    let reset_body =
        &doc["paths"]["/reset"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    let fields: Vec<&str> = reset_body["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fields,
        ["task_id", "world_id", "seed", "episode_id", "model"]
    );
    assert_eq!(
        doc["paths"]["/reset"]["post"]["requestBody"]["required"],
        false
    );
    assert_eq!(
        doc["paths"]["/step"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            ["required"],
        json!(["episode_id", "action"])
    );
    // A body the document allows is accepted; one it refuses is refused.
    assert_valid(
        reset_body,
        &json!({"task_id": "pay-back", "seed": 3}),
        "reset body",
    );
    let refused = jsonschema::validator_for(reset_body).unwrap();
    assert!(!refused.is_valid(&json!({"seeds": 3})));

    let step_schema = &doc["components"]["schemas"]["StepResponse"];
    let reset = h.reset(json!({"task_id": "pay-back"}));
    assert_valid(step_schema, &reset, "reset response");
    let id = reset["episode_id"].as_str().unwrap();
    let (_, step) = h.step(
        id,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": "lots"}}),
    );
    assert_valid(step_schema, &step, "a failed tool call's step response");
    let response = |path: &str, verb: &str| {
        doc["paths"][path][verb]["responses"]["200"]["content"]["application/json"]["schema"]
            .clone()
    };
    assert_valid(
        &response("/state", "get"),
        &h.get(&format!("/state?episode_id={id}")).1,
        "state",
    );
    assert_valid(&response("/health", "get"), &h.get("/health").1, "health");
    assert_valid(
        &response("/metadata", "get"),
        &h.get("/metadata").1,
        "metadata",
    );
    assert_valid(&response("/schema", "get"), &h.get("/schema").1, "schema");
    assert_valid(&response("/tasks", "get"), &h.get("/tasks").1, "tasks");
    let (_, closed) = h.post("/close", &json!({"episode_id": id}));
    assert_valid(&response("/close", "post"), &closed, "close");
    let (_, error) = h.get("/state");
    assert_valid(&doc["components"]["schemas"]["Error"], &error, "error");
}
