//! Shared helpers for the agent-server tests: a real HTTP server on
//! 127.0.0.1 (port 0) over a real SQLite store in a temp dir.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use understudy::store::Store;
use understudy::{Action, Episode, World};
use understudy_serve::http::HttpOptions;
use understudy_serve::{ServeConfig, Server, UserSimulator};

pub use understudy_testkit::{copy_dir, mini, repo};

pub fn support_desk() -> Arc<World> {
    understudy_testkit::world("support-desk")
}

/// A running server and a client for it. Dropping it shuts the server down.
pub struct Harness {
    pub base: String,
    pub server: Arc<Server>,
    pub client: reqwest::blocking::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub fn start(config: ServeConfig, sim: Option<Box<dyn UserSimulator>>) -> Harness {
        Harness::with_worlds(vec![support_desk(), mini()], config, sim)
    }

    pub fn with_worlds(
        worlds: Vec<Arc<World>>,
        config: ServeConfig,
        sim: Option<Box<dyn UserSimulator>>,
    ) -> Harness {
        Harness::with_options(worlds, config, sim, HttpOptions::default())
    }

    pub fn with_options(
        worlds: Vec<Arc<World>>,
        config: ServeConfig,
        sim: Option<Box<dyn UserSimulator>>,
        options: HttpOptions,
    ) -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        let store_path = dir.path().join("store.sqlite");
        let store =
            Arc::new(Store::open_with(&store_path, config.durability).expect("store opens"));
        let server = Arc::new(
            Server::new(worlds, store, config)
                .expect("server")
                .with_user_simulator(sim),
        );
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let s = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                let reaper = understudy_serve::spawn_reaper(Arc::clone(&s));
                understudy_serve::http::serve_with(listener, s, options, async {
                    let _ = stop_rx.await;
                })
                .await
                .expect("serve");
                reaper.abort();
            });
        });
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("server starts");
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client");
        Harness {
            base: format!("http://{addr}"),
            server,
            client,
            shutdown: Some(stop_tx),
            thread: Some(thread),
            _dir: dir,
        }
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.post_raw(path, &body.to_string())
    }

    pub fn post_raw(&self, path: &str, body: &str) -> (u16, Value) {
        let resp = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .expect("request");
        let status = resp.status().as_u16();
        (status, resp.json().expect("the response is JSON"))
    }

    pub fn get(&self, path_and_query: &str) -> (u16, Value) {
        let resp = self
            .client
            .get(format!("{}{path_and_query}", self.base))
            .send()
            .expect("request");
        let status = resp.status().as_u16();
        (status, resp.json().expect("the response is JSON"))
    }

    /// Resets `task`, asserting success; returns the response.
    pub fn reset(&self, body: Value) -> Value {
        let (status, out) = self.post("/reset", &body);
        assert_eq!(status, 200, "reset failed: {out}");
        out
    }

    pub fn step(&self, episode_id: &str, action: Value) -> (u16, Value) {
        self.post(
            "/step",
            &serde_json::json!({"episode_id": episode_id, "action": action}),
        )
    }

    /// The bound address, `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    pub fn store(&self) -> &Arc<Store> {
        self.server.store()
    }

    pub fn shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// An error response's code, asserting the shape `{"error": {code, message}}`.
pub fn error_code(body: &Value) -> &str {
    let err = body
        .get("error")
        .unwrap_or_else(|| panic!("not an error response: {body}"));
    assert!(
        err.get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| !m.is_empty()),
        "error without a message: {body}"
    );
    err.get("code")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("error without a code: {body}"))
}

pub fn message(body: &Value) -> String {
    body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The task's reference solution as actions.
pub fn solution(world: &World, task: &str) -> Vec<Value> {
    world.task(task).expect("task").solution.clone()
}

/// What the engine itself observes for `actions` on a fresh episode, as
/// JSON: the expected observations over the wire.
pub fn expected_observations(
    world: &Arc<World>,
    task: &str,
    seed: u64,
    actions: &[Value],
) -> Vec<Value> {
    let mut ep = Episode::new(Arc::clone(world)).expect("episode");
    ep.reset(task, seed).expect("reset");
    let mut out = Vec::new();
    for a in actions {
        if ep.is_done() {
            break;
        }
        let action = Action::from_json(a).expect("valid action");
        let step = ep.step(&action).expect("step");
        out.push(serde_json::to_value(step.observation).expect("json"));
    }
    out
}
