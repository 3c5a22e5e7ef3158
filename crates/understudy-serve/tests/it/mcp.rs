//! MCP: the session handler over the bounded stdio framing (in process,
//! through pipes), and `/mcp` on the real HTTP server: bad framing, an
//! unknown tool, refused arguments, the guard and the body limit, and the
//! episode each session records.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use understudy::store::{Actor, Durability, EpisodeFilter, EpisodeStatus, Store};
use understudy_serve::http::{HttpOptions, MAX_BODY};
use understudy_serve::mcp::{LineTransport, McpSession};
use understudy_serve::{ServeConfig, Server};

use super::support::{error_code, support_desk, Harness};

/// A client's end of an in-process stdio session.
struct Pipe {
    to_server: DuplexStream,
    from_server: BufReader<DuplexStream>,
}

impl Pipe {
    async fn send(&mut self, line: &str) {
        self.to_server
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            self.from_server.read_line(&mut line),
        )
        .await
        .expect("an answer in time")
        .expect("read");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    async fn ask(&mut self, message: Value) -> Value {
        self.send(&message.to_string()).await;
        self.recv().await
    }
}

/// An MCP session on `server` behind pipes, with lines of at most
/// `max_line` bytes.
fn stdio_session(server: Arc<Server>, max_line: usize, query: Value) -> Pipe {
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let defaults = query.as_object().cloned().unwrap_or_default();
    tokio::spawn(async move {
        let session = McpSession::new(server, Arc::new(defaults), None);
        let transport = LineTransport::new(server_in, server_out, max_line);
        if let Ok(running) = rmcp::serve_server(session, transport).await {
            let _ = running.waiting().await;
        }
    });
    Pipe {
        to_server: client_out,
        from_server: BufReader::new(client_in),
    }
}

fn server(dir: &tempfile::TempDir) -> Arc<Server> {
    let store = Store::open_with(dir.path().join("store.sqlite"), Durability::Fast).expect("store");
    Arc::new(
        Server::new(
            vec![support_desk()],
            Arc::new(store),
            ServeConfig::default(),
        )
        .expect("server"),
    )
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "it-client", "version": "0.1"}}})
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

/// A call of a tool the session does not offer is a protocol error naming it.
fn assert_unknown_tool(e: &Value, name: &str) {
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("unknown tool `{name}`")),
        "{e}"
    );
}

fn episodes(store: &Store) -> Vec<understudy::store::EpisodeRecord> {
    store.episodes(&EpisodeFilter::default()).expect("episodes")
}

/// Waits for the store's only episode to reach `status`; its model and
/// number of steps.
fn episode_becomes(store: &Store, status: EpisodeStatus) -> (String, usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let episodes = episodes(store);
        if let [e] = episodes.as_slice() {
            if e.status == status {
                let model = match &e.actor {
                    Actor::Agent { model } => model.clone(),
                    other => panic!("not an agent: {other:?}"),
                };
                return (model, store.steps(&e.id).expect("steps").len());
            }
        }
        assert!(
            Instant::now() < deadline,
            "no episode became {status:?}: {episodes:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_framing_errors_are_json_rpc_errors_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut pipe = stdio_session(server(&dir), 256, json!({"task_id": "duplicate-charge"}));
    pipe.send("this is not json").await;
    let e = pipe.recv().await;
    assert_eq!(
        (e["error"]["code"].as_i64(), &e["id"]),
        (Some(-32700), &Value::Null),
        "{e}"
    );
    pipe.send(r#"{"id": 4, "hello": true}"#).await;
    let e = pipe.recv().await;
    assert_eq!(
        (e["error"]["code"].as_i64(), e["id"].as_i64()),
        (Some(-32600), Some(4)),
        "{e}"
    );
    pipe.send(&format!("\"{}\"", "x".repeat(1000))).await;
    let e = pipe.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 256 bytes"),
        "{e}"
    );
    // The handshake still works after them.
    let init = pipe.ask(initialize()).await;
    assert_eq!(init["id"], 1, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "understudy");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let brief = init["result"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(
        brief.contains("T-1042") && brief.contains("billed twice"),
        "{brief}"
    );
    // A notification nobody knows gets no answer: the next answer is the
    // next request's.
    pipe.send(r#"{"jsonrpc": "2.0", "method": "notifications/whatever"}"#)
        .await;
    pipe.send(r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}"#)
        .await;
    let list = pipe.recv().await;
    assert_eq!(list["id"], 5, "{list}");
    assert!(list["result"]["tools"].is_array(), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_session_lists_calls_refuses_and_records_one_episode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(&dir);
    let mut pipe = stdio_session(
        Arc::clone(&server),
        1 << 20,
        json!({"task_id": "duplicate-charge"}),
    );
    // Before `initialize` nothing is served.
    let e = pipe
        .ask(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
        .await;
    assert_eq!(e["id"], 9, "a ping before initialize is answered: {e}");
    pipe.ask(initialize()).await;
    pipe.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#)
        .await;
    let list = pipe
        .ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let tools = list["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["get_ticket", "issue_refund", "send_message", "submit"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let refund = tools.iter().find(|t| t["name"] == "issue_refund").unwrap();
    assert_eq!(refund["inputSchema"]["type"], "object");
    assert!(
        refund["inputSchema"]["properties"]["amount"].is_object(),
        "{refund}"
    );
    // No episode yet: listing records nothing.
    assert!(episodes(server.store()).is_empty());

    // An unknown tool is a protocol error.
    let e = pipe.ask(call(3, "launch_rocket", json!({}))).await;
    assert_unknown_tool(&e, "launch_rocket");
    // The message tool's arguments are checked before any step.
    let r = pipe
        .ask(call(4, "send_message", json!({"message": 3})))
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`message`") && text.contains("must be text"),
        "{text}"
    );
    // A world tool's bad argument is the world's refusal: a recorded step.
    let r = pipe
        .ask(call(5, "get_ticket", json!({"ticket_id": 1042})))
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ticket_id"),
        "{r}"
    );
    assert_eq!(
        r["result"]["structuredContent"]["observation"]["error"]["code"],
        "invalid_arguments"
    );
    let r = pipe
        .ask(call(6, "get_ticket", json!({"ticket_id": "T-1042"})))
        .await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(r["result"]["structuredContent"]["reward"], 0.0);
    // The end of input ends the session, and its episode is abandoned
    // with both steps kept; the model is the client's name and version.
    drop(pipe);
    let store = Arc::clone(server.store());
    let got =
        tokio::task::spawn_blocking(move || episode_becomes(&store, EpisodeStatus::Abandoned))
            .await
            .expect("join");
    assert_eq!(got, ("it-client 0.1".to_string(), 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_ends_the_sessions_episode_with_its_reward() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(&dir);
    let mut pipe = stdio_session(
        Arc::clone(&server),
        1 << 20,
        json!({"task_id": "duplicate-charge", "model": "it-model"}),
    );
    pipe.ask(initialize()).await;
    let mut id = 10;
    for action in support_desk()
        .task("duplicate-charge")
        .unwrap()
        .solution
        .clone()
    {
        id += 1;
        let r = match action.get("tool") {
            Some(tool) => {
                pipe.ask(call(id, tool.as_str().unwrap(), action["args"].clone()))
                    .await
            }
            None => {
                pipe.ask(call(
                    id,
                    "send_message",
                    json!({"message": action["message"]}),
                ))
                .await
            }
        };
        assert_eq!(r["result"]["isError"], false, "{action}: {r}");
    }
    let r = pipe.ask(call(99, "submit", json!({}))).await;
    let step = &r["result"]["structuredContent"];
    assert_eq!(
        (step["done"].as_bool(), step["reward"].as_f64()),
        (Some(true), Some(1.0)),
        "{r}"
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Reward: 1"),
        "{r}"
    );
    let r = pipe.ask(call(100, "submit", json!({}))).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("over"),
        "{r}"
    );
    let store = Arc::clone(server.store());
    let (model, steps) =
        tokio::task::spawn_blocking(move || episode_becomes(&store, EpisodeStatus::Submitted))
            .await
            .expect("join");
    assert_eq!(model, "it-model");
    assert_eq!(
        steps,
        support_desk()
            .task("duplicate-charge")
            .unwrap()
            .solution
            .len()
    );
}

fn post_mcp(h: &Harness, body: &str, headers: &[(&str, &str)]) -> reqwest::blocking::Response {
    let mut req = h
        .client
        .post(format!("{}/mcp", h.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(body.to_string()).send().expect("request")
}

/// The JSON-RPC messages of a response: a JSON body or an SSE stream.
fn messages(resp: reqwest::blocking::Response) -> Vec<Value> {
    let text = resp.text().expect("body");
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

#[test]
fn http_mcp_passes_the_guard_and_answers_non_messages_with_json_rpc_errors() {
    let h = Harness::with_options(
        vec![support_desk()],
        ServeConfig::default(),
        None,
        HttpOptions {
            token: Some("s3cret".into()),
            ..HttpOptions::default()
        },
    );
    let auth = ("authorization", "Bearer s3cret");
    let init = initialize().to_string();
    let resp = post_mcp(&h, &init, &[]);
    assert_eq!(resp.status().as_u16(), 401);
    let resp = post_mcp(&h, &init, &[auth, ("origin", "http://evil.example")]);
    assert_eq!(resp.status().as_u16(), 403);
    assert_eq!(error_code(&resp.json().unwrap()), "forbidden_origin");
    let resp = post_mcp(&h, &init, &[auth, ("host", "rebind.example")]);
    assert_eq!(resp.status().as_u16(), 403);
    let resp = h
        .client
        .post(format!("{}/mcp", h.base))
        .header("authorization", "Bearer s3cret")
        .header("content-type", "text/plain")
        .body(init.clone())
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415);
    let big = format!(
        "{{\"jsonrpc\": \"2.0\", \"x\": \"{}\"}}",
        "x".repeat(MAX_BODY)
    );
    let resp = post_mcp(&h, &big, &[auth]);
    assert_eq!(resp.status().as_u16(), 413);
    assert_eq!(error_code(&resp.json().unwrap()), "payload_too_large");
    // What OpenEnv's validator sends, and what is not JSON at all.
    for (body, code) in [("{}", -32600), ("not json", -32700)] {
        let resp = post_mcp(&h, body, &[auth]);
        assert_eq!(resp.status().as_u16(), 200, "{body}");
        let m = messages(resp);
        assert_eq!(
            (m[0]["jsonrpc"].as_str(), m[0]["error"]["code"].as_i64()),
            (Some("2.0"), Some(code)),
            "{m:?}"
        );
    }
}

#[test]
fn an_http_mcp_session_is_one_episode() {
    let h = Harness::with_worlds(vec![support_desk()], ServeConfig::default(), None);
    // A wrong field in the query is refused at `initialize`, naming it.
    let resp = h
        .client
        .post(format!("{}/mcp?task_id=duplicate-charge&seeds=1", h.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize().to_string())
        .send()
        .unwrap();
    let m = messages(resp);
    assert_eq!(m.last().unwrap()["error"]["code"], -32602, "{m:?}");
    assert!(
        m.last().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`seeds`"),
        "{m:?}"
    );

    let resp = h
        .client
        .post(format!(
            "{}/mcp?task_id=duplicate-charge&model=http-it",
            h.base
        ))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize().to_string())
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let session = resp
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_string();
    let m = messages(resp);
    assert_eq!(
        m.last().unwrap()["result"]["serverInfo"]["name"],
        "understudy",
        "{m:?}"
    );
    let with_session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(post_mcp(&h, &note, &with_session).status().as_u16(), 202);
    let m = messages(post_mcp(
        &h,
        &call(2, "launch_rocket", json!({})).to_string(),
        &with_session,
    ));
    assert_eq!(m.last().unwrap()["error"]["code"], -32602, "{m:?}");
    let m = messages(post_mcp(
        &h,
        &call(3, "get_ticket", json!({"ticket_id": "T-1042"})).to_string(),
        &with_session,
    ));
    assert_eq!(m.last().unwrap()["result"]["isError"], false, "{m:?}");
    // Ending the session (DELETE) abandons its running episode.
    let resp = h
        .client
        .delete(format!("{}/mcp", h.base))
        .header("mcp-session-id", session.as_str())
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    assert_eq!(
        episode_becomes(h.store(), EpisodeStatus::Abandoned),
        ("http-it".to_string(), 1)
    );
}

/// τ-bench's records lists are the expert's (`audience = "expert"`): an
/// agent over MCP is offered exactly τ-bench's tools, and asking for a
/// list by name is an unknown tool, not a read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_agent_gets_no_expert_only_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let world = understudy_testkit::world("tau-airline");
    assert!(world.views.contains_key("users"));
    let store = Store::open_with(dir.path().join("store.sqlite"), Durability::Fast).expect("store");
    let server = Arc::new(
        Server::new(vec![world], Arc::new(store), ServeConfig::default()).expect("server"),
    );
    let mut pipe = stdio_session(Arc::clone(&server), 1 << 20, json!({"task_id": "test-16"}));
    pipe.ask(initialize()).await;
    pipe.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#)
        .await;
    let list = pipe
        .ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"get_user_details"), "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with("view_")), "{names:?}");
    let e = pipe.ask(call(3, "view_users", json!({}))).await;
    assert_unknown_tool(&e, "view_users");
    assert!(episodes(server.store()).is_empty(), "nothing was read");
}
