//! What the hub tests share: a fresh database per test, a hub in this
//! process or as a child process (to kill), people with tokens, local
//! stores with recorded episodes, and a TCP proxy that cuts connections.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use understudy::store::{Actor, Store};
use understudy_hub::client::Hub;
use understudy_hub::people::{self, NewPerson};
use understudy_hub::Role;

/// The admin URL of the test server, or `None` (a skip) outside CI.
pub fn server_url() -> Option<String> {
    match std::env::var("UNDERSTUDY_HUB_TEST_DATABASE") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("UNDERSTUDY_HUB_TEST_DATABASE is not set: the hub tests need the PostgreSQL server scripts/hub.sh starts (source scripts/lib.sh scripts/hub.sh; hub_tests)");
            }
            eprintln!("skipped: UNDERSTUDY_HUB_TEST_DATABASE is not set (run the hub stage: source scripts/lib.sh; source scripts/hub.sh; hub_tests)");
            None
        }
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A database of its own for one test, migrated; its URL.
pub fn fresh_database(server: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "hub_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    );
    let (base, _) = server.rsplit_once('/').expect("a URL with a database name");
    let url = format!("{base}/{name}");
    runtime().block_on(async {
        let (client, conn) = tokio_postgres::connect(server, tokio_postgres::NoTls)
            .await
            .expect("the test server answers");
        let conn = tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("a test database");
        drop(client);
        let _ = conn.await;
        understudy_hub::db::migrate(&url)
            .await
            .expect("migrations apply");
    });
    url
}

/// Runs `sql` on `url` and returns the first column of the first row as i64.
pub fn count(url: &str, sql: &str) -> i64 {
    runtime().block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("the test database answers");
        let conn = tokio::spawn(conn);
        let n: i64 = client.query_one(sql, &[]).await.expect(sql).get(0);
        drop(client);
        let _ = conn.await;
        n
    })
}

/// A hub served from this process on a free loopback port.
pub struct InProcessHub {
    pub url: String,
    _runtime: tokio::runtime::Runtime,
}

pub fn hub_in_process(database: &str, max_body_bytes: usize) -> InProcessHub {
    hub_with_limits(
        database,
        understudy_hub::Limits {
            max_body_bytes,
            ..understudy_hub::Limits::default()
        },
    )
}

/// A hub served from this process within `limits`.
pub fn hub_with_limits(database: &str, limits: understudy_hub::Limits) -> InProcessHub {
    let rt = runtime();
    let url = rt.block_on(async {
        let pool = understudy_hub::db::open(database)
            .await
            .expect("the hub opens its database");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            understudy_hub::serve_listener(
                listener,
                understudy_hub::router(pool, limits.max_body_bytes),
                limits,
                std::future::pending(),
            )
            .await;
        });
        format!("http://{addr}")
    });
    InProcessHub { url, _runtime: rt }
}

/// A hub as a child process (`understudy-hub`), killed when dropped.
pub struct HubProcess {
    pub child: Child,
}

impl HubProcess {
    pub fn start(database: &str, addr: SocketAddr) -> HubProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_understudy-hub"))
            .args(["--database", database, "--listen", &addr.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the hub starts");
        let stdout = child.stdout.take().expect("its stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the hub prints its address");
        assert!(line.contains("listening on"), "the hub said {line:?}");
        HubProcess { child }
    }

    /// SIGKILL: no shutdown, requests in flight are cut.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A hub process on a free port, its address (to start it again on) and
/// its URL.
pub fn hub_on_a_port(database: &str) -> (HubProcess, SocketAddr, String) {
    let addr = free_port();
    (
        HubProcess::start(database, addr),
        addr,
        format!("http://{addr}"),
    )
}

pub fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// A person with a token, added straight on the database.
pub fn person(database: &str, login: &str, role: Role) -> String {
    runtime().block_on(async {
        people::bootstrap_add(
            database,
            &NewPerson {
                login: login.into(),
                name: format!("{login} (test)"),
                role,
                password: None,
            },
        )
        .await
        .expect("the person is added");
        people::bootstrap_token(database, login, "test")
            .await
            .expect("a token")
    })
}

pub fn client(url: &str, token: &str) -> Hub {
    Hub::new(url, token).expect("a client")
}

pub fn mini_dir() -> PathBuf {
    understudy_testkit::mini_dir()
}

/// A local store in a temporary folder.
pub fn local_store() -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = Arc::new(Store::open(dir.path().join("store.db")).expect("a store"));
    (dir, store)
}

/// Records `n` episodes of the mini world's `pay-back` task as `expert`:
/// three steps each (a lookup, a transfer, a message), the first one's
/// second step undone and redone, every other one submitted.
pub fn record(store: &Arc<Store>, expert: &str, n: usize) -> Vec<String> {
    store
        .ensure_expert(expert, Some(&format!("Expert {expert}")))
        .expect("the expert");
    let world = understudy_testkit::mini();
    let mut ids = Vec::new();
    for i in 0..n {
        let mut rec = understudy::recorder::Recorder::start(
            Arc::clone(store),
            Arc::clone(&world),
            "pay-back",
            Actor::Expert { id: expert.into() },
            i as u64,
        )
        .expect("the episode starts");
        let step =
            |rec: &mut understudy::recorder::Recorder, v: serde_json::Value, why: Option<&str>| {
                rec.step(
                    understudy::Action::from_json(&v).expect("an action"),
                    why.map(String::from),
                )
                .expect("the step is recorded");
            };
        step(
            &mut rec,
            serde_json::json!({"tool": "view_accounts", "args": {"search": "ada"}}),
            Some("find Ada first"),
        );
        let transfer = serde_json::json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}});
        step(&mut rec, transfer.clone(), None);
        if i == 0 {
            rec.undo().expect("undo");
            step(&mut rec, transfer, Some("again, after checking"));
        }
        step(
            &mut rec,
            serde_json::json!({"message": "Done: 25 sent to Charles."}),
            None,
        );
        if i % 2 == 0 {
            rec.submit(Some("Done: 25 sent to Charles.".into()))
                .expect("submit");
        }
        ids.push(rec.record().id.clone());
    }
    ids
}

/// Steps in a local store.
pub fn local_steps(store: &Store) -> usize {
    store
        .episodes(&Default::default())
        .expect("episodes")
        .iter()
        .map(|e| store.steps(&e.id).expect("steps").len())
        .sum()
}

/// Retries `f` while it fails transiently (the hub down, a cut
/// connection), up to `limit`; panics on any other failure.
pub fn retry<T>(
    what: &str,
    limit: Duration,
    mut f: impl FnMut() -> Result<T, understudy_hub::HubError>,
) -> (T, usize) {
    let started = Instant::now();
    let mut failures = 0;
    loop {
        match f() {
            Ok(v) => return (v, failures),
            Err(e) if e.is_transient() && started.elapsed() < limit => {
                failures += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// A TCP proxy in front of a hub that injects faults: it cuts the first
/// `cuts` connections after forwarding `cut_after` bytes of the client's
/// request, and calls `on_bytes` once when `trigger_at` client bytes have
/// passed in all.
pub struct FaultProxy {
    pub addr: SocketAddr,
    pub cut: Arc<AtomicUsize>,
}

pub struct Faults {
    pub upstream: SocketAddr,
    pub cuts: usize,
    pub cut_after: usize,
    pub trigger_at: usize,
    pub on_bytes: Option<Box<dyn FnOnce() + Send>>,
}

impl FaultProxy {
    pub fn start(faults: Faults) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let addr = listener.local_addr().expect("an address");
        let cut = Arc::new(AtomicUsize::new(0));
        let total = Arc::new(AtomicUsize::new(0));
        let upstream = faults.upstream;
        let cuts = faults.cuts;
        let cut_after = faults.cut_after;
        let trigger_at = faults.trigger_at;
        let on_bytes = Arc::new(Mutex::new(faults.on_bytes));
        let cut2 = Arc::clone(&cut);
        let started = Instant::now();
        std::thread::spawn(move || {
            let mut n = 0usize;
            for client in listener.incoming() {
                // Bounded: the proxy stops accepting after two minutes.
                if started.elapsed() > Duration::from_secs(120) {
                    break;
                }
                let Ok(client) = client else { continue };
                let this = n;
                n += 1;
                let Ok(server) = TcpStream::connect(upstream) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let limit = (this < cuts).then_some(cut_after);
                let (cut, total, on_bytes) =
                    (Arc::clone(&cut2), Arc::clone(&total), Arc::clone(&on_bytes));
                let (c2, s2) = (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                );
                std::thread::spawn(move || pipe(s2, c2, None, None));
                std::thread::spawn(move || {
                    pipe(
                        client,
                        server,
                        limit.map(|l| (l, cut)),
                        Some((total, trigger_at, on_bytes)),
                    )
                });
            }
        });
        FaultProxy { addr, cut }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

type Trigger = (
    Arc<AtomicUsize>,
    usize,
    Arc<Mutex<Option<Box<dyn FnOnce() + Send>>>>,
);

fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    cut: Option<(usize, Arc<AtomicUsize>)>,
    trigger: Option<Trigger>,
) {
    let mut buf = [0u8; 4096];
    let mut sent = 0usize;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut n = n;
        if let Some((limit, _)) = &cut {
            n = n.min(limit.saturating_sub(sent));
        }
        if n > 0 && to.write_all(&buf[..n]).is_err() {
            break;
        }
        sent += n;
        if let Some((total, at, f)) = &trigger {
            let before = total.fetch_add(n, Ordering::SeqCst);
            if before < *at && before + n >= *at {
                if let Some(f) = f.lock().expect("the trigger").take() {
                    f();
                }
            }
        }
        if let Some((limit, count)) = &cut {
            if sent >= *limit {
                count.fetch_add(1, Ordering::SeqCst);
                break;
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

/// A score of the mini world's `pay-back` task for `episode`: pending
/// (no value) when `value` is `None`; `pass` goes in its detail.
pub fn score_of(
    episode: &str,
    value: Option<f64>,
    pass: Option<bool>,
) -> understudy::store::ScoreRecord {
    understudy::store::ScoreRecord {
        episode_id: Some(episode.to_string()),
        task_id: "pay-back".into(),
        world_id: "mini".into(),
        world_version: "1".into(),
        world_hash: "h".into(),
        task_hash: "t".into(),
        rubric_version: "1".into(),
        rubric_hash: "r".into(),
        value,
        range: [value.unwrap_or(0.0), value.unwrap_or(1.0)],
        pending: usize::from(value.is_none()),
        detail: match pass {
            Some(p) => serde_json::json!({ "pass": p }).to_string(),
            None => "{}".into(),
        },
    }
}

/// A raw request: the status and the JSON answer.
pub fn raw(
    method: &str,
    url: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (u16, serde_json::Value) {
    let http = reqwest::blocking::Client::new();
    let mut req = http
        .request(method.parse().expect("a method"), url)
        .body(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(c) = content_type {
        req = req.header("content-type", c);
    }
    let resp = req.send().expect("an answer");
    let status = resp.status().as_u16();
    (status, resp.json().expect("a JSON answer"))
}

pub fn assert_error(answer: (u16, serde_json::Value), status: u16, code: &str, says: &str) {
    let (s, body) = answer;
    assert_eq!(s, status, "{body}");
    assert_eq!(body["code"], code, "{body}");
    let message = body["message"].as_str().expect("a message");
    assert!(message.contains(says), "{message:?} should say {says:?}");
}
