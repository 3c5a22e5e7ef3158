//! Agent API round trips against the real `understudy serve` process: one
//! step request out, its response back, including the durable commit of
//! the step. Measured over stdio (JSON lines) and HTTP on loopback (a
//! minimal keep-alive HTTP/1.1 client, so the client's own overhead stays
//! out of the figure), with the store's default durability (`full`, an
//! fsync per step) and `--durability fast` (synchronous=NORMAL: durable
//! against a process crash, not power loss).
//!
//! Run with `cargo bench --bench serve`. Targets: stdio step <= 50 us
//! median, HTTP step <= 200 us median, and (issue 13) >= 2,000 steps/s for
//! 64 concurrent HTTP episodes at full durability, where group commit lets
//! the sessions share fsyncs (`http 64 episodes/durability full`, read as
//! criterion's throughput; the per-request p50/p99 are printed after it as
//! `percentiles <name>: n=<count> p50=<us> p99=<us>`).
//!
//! The step is a read tool of the support desk (`get_ticket`); the episode
//! is reset, untimed, before it reaches its step limit.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};

const TASK: &str = "duplicate-charge";
/// Steps per episode before an untimed reset; under the task's limit (20).
const STEPS_PER_EPISODE: u64 = 15;

fn repo() -> PathBuf {
    understudy_testkit::repo()
}

fn step_action() -> Value {
    json!({"tool": "get_ticket", "args": {"ticket_id": "T-1042"}})
}

fn spawn(args: &[&str], store: &std::path::Path) -> Child {
    spawn_capped(args, store, 4)
}

/// The server binary: this build's, or `SERVE_BENCH_BIN` (an earlier
/// build, to measure before and after in one run).
fn server_binary() -> PathBuf {
    std::env::var_os("SERVE_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_understudy")))
}

fn spawn_capped(args: &[&str], store: &std::path::Path, max_concurrent: usize) -> Child {
    Command::new(server_binary())
        .arg("serve")
        .args(args)
        .arg("--world")
        .arg(repo().join("fixtures/worlds/support-desk"))
        .arg("--store")
        .arg(store)
        .arg("--max-concurrent")
        .arg(max_concurrent.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start understudy serve")
}

struct StdioClient {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
}

impl StdioClient {
    fn call(&mut self, request: &[u8]) -> &str {
        self.input.write_all(request).expect("write");
        self.input.flush().expect("flush");
        self.line.clear();
        self.output.read_line(&mut self.line).expect("read");
        assert!(
            !self.line.contains("\"error\""),
            "request failed: {}",
            self.line
        );
        &self.line
    }

    fn reset(&mut self, previous: Option<&str>) -> String {
        if let Some(id) = previous {
            let req = format!("{}\n", json!({"op": "close", "episode_id": id}));
            self.call(req.as_bytes());
        }
        let req = format!(
            "{}\n",
            json!({"op": "reset", "task_id": TASK, "model": "bench"})
        );
        let v: Value = serde_json::from_str(self.call(req.as_bytes())).expect("json");
        v["result"]["episode_id"].as_str().expect("id").to_string()
    }
}

fn bench_stdio(c: &mut Criterion, durability: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = spawn(
        &["--stdio", "--durability", durability],
        &dir.path().join("s.sqlite"),
    );
    let input = child.stdin.take().expect("stdin");
    let output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut s = StdioClient {
        child,
        input,
        output,
        line: String::new(),
    };
    let mut id = s.reset(None);
    let mut left = STEPS_PER_EPISODE;
    let mut request = format!(
        "{}\n",
        json!({"op": "step", "episode_id": id, "action": step_action()})
    );
    c.bench_function(&format!("stdio step, durability {durability}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if left == 0 {
                    id = s.reset(Some(&id));
                    request = format!(
                        "{}\n",
                        json!({"op": "step", "episode_id": id, "action": step_action()})
                    );
                    left = STEPS_PER_EPISODE;
                }
                let t = Instant::now();
                s.call(request.as_bytes());
                total += t.elapsed();
                left -= 1;
            }
            total
        })
    });
    drop(s.input);
    let _ = s.child.wait();
}

/// Keep-alive HTTP/1.1 over one socket.
struct Http {
    stream: BufReader<TcpStream>,
    host: String,
    body: Vec<u8>,
}

impl Http {
    fn post(&mut self, path: &str, json: &str) -> &[u8] {
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}",
            self.host,
            json.len()
        );
        self.stream
            .get_mut()
            .write_all(req.as_bytes())
            .expect("send");
        let mut length = 0usize;
        let mut status = String::new();
        self.stream.read_line(&mut status).expect("status line");
        assert!(status.contains(" 200 "), "request failed: {status}");
        let mut header = String::new();
        loop {
            header.clear();
            self.stream.read_line(&mut header).expect("header");
            let h = header.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().expect("length");
                }
            }
        }
        self.body.resize(length, 0);
        self.stream.read_exact(&mut self.body).expect("body");
        &self.body
    }

    fn reset(&mut self, previous: Option<&str>) -> String {
        if let Some(id) = previous {
            self.post("/close", &json!({"episode_id": id}).to_string());
        }
        let body = json!({"task_id": TASK, "model": "bench"}).to_string();
        let v: Value = serde_json::from_slice(self.post("/reset", &body)).expect("json");
        v["episode_id"].as_str().expect("id").to_string()
    }
}

/// The address `understudy serve --http` printed it listens on.
fn listening_on(child: &mut Child) -> String {
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    out.read_line(&mut first).expect("listening line");
    first
        .trim()
        .strip_prefix("listening on http://")
        .expect("`listening on URL`")
        .to_string()
}

impl Http {
    fn connect(addr: &str) -> Http {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Http {
            stream: BufReader::new(stream),
            host: addr.to_string(),
            body: Vec::new(),
        }
    }
}

fn bench_http(c: &mut Criterion, durability: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = spawn(
        &["--http", "127.0.0.1:0", "--durability", durability],
        &dir.path().join("s.sqlite"),
    );
    let addr = listening_on(&mut child);
    let mut http = Http::connect(&addr);
    let mut id = http.reset(None);
    let mut left = STEPS_PER_EPISODE;
    let mut request = json!({"episode_id": id, "action": step_action()}).to_string();
    c.bench_function(&format!("http step, durability {durability}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if left == 0 {
                    id = http.reset(Some(&id));
                    request = json!({"episode_id": id, "action": step_action()}).to_string();
                    left = STEPS_PER_EPISODE;
                }
                let t = Instant::now();
                http.post("/step", &request);
                total += t.elapsed();
                left -= 1;
            }
            total
        })
    });
    let _ = child.kill();
    let _ = child.wait();
}

/// Episodes stepping at once over HTTP, one client thread and keep-alive
/// connection each, against one server and store: steps per second through
/// the whole server. Resets (every [`STEPS_PER_EPISODE`] steps) fall inside
/// the timed span, so the figure is slightly pessimistic.
fn bench_http_concurrent(c: &mut Criterion, durability: &str, clients: usize) {
    use std::sync::mpsc;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = spawn_capped(
        &["--http", "127.0.0.1:0", "--durability", durability],
        &dir.path().join("s.sqlite"),
        clients,
    );
    let addr = listening_on(&mut child);
    let (done_tx, done_rx) = mpsc::channel::<Vec<Duration>>();
    let workers: Vec<mpsc::Sender<u64>> = (0..clients)
        .map(|_| {
            let (tx, rx) = mpsc::channel::<u64>();
            let (addr, done) = (addr.clone(), done_tx.clone());
            std::thread::spawn(move || {
                let mut http = Http::connect(&addr);
                let mut id = http.reset(None);
                let mut left = STEPS_PER_EPISODE;
                while let Ok(steps) = rx.recv() {
                    let mut latencies = Vec::with_capacity(steps as usize);
                    for _ in 0..steps {
                        if left == 0 {
                            id = http.reset(Some(&id));
                            left = STEPS_PER_EPISODE;
                        }
                        let request = json!({"episode_id": id, "action": step_action()});
                        let t = Instant::now();
                        http.post("/step", &request.to_string());
                        latencies.push(t.elapsed());
                        left -= 1;
                    }
                    if done.send(latencies).is_err() {
                        break;
                    }
                }
            });
            tx
        })
        .collect();
    let mut latencies: Vec<Duration> = Vec::new();
    let name = format!("http {clients} episodes/durability {durability}");
    let mut group = c.benchmark_group(format!("http {clients} episodes"));
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("durability {durability}"), |b| {
        b.iter_custom(|iters| {
            let per_client = iters.div_ceil(clients as u64);
            let t = Instant::now();
            for w in &workers {
                w.send(per_client).expect("worker alive");
            }
            for _ in 0..clients {
                latencies.extend(done_rx.recv().expect("worker finished"));
            }
            // Every client ran `per_client` steps: scale to `iters`.
            let ran = per_client * clients as u64;
            t.elapsed().mul_f64(iters as f64 / ran as f64)
        })
    });
    group.finish();
    drop(workers);
    latencies.sort_unstable();
    if !latencies.is_empty() {
        let at =
            |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
        println!(
            "percentiles {name}: n={} p50={:.1} p99={:.1}",
            latencies.len(),
            at(0.5).as_secs_f64() * 1e6,
            at(0.99).as_secs_f64() * 1e6
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The same step without a transport: `Server::handle` in this process,
/// so the transports' share of the round trip can be read off.
fn bench_in_process(c: &mut Criterion, durability: &str) {
    use std::sync::Arc;
    use understudy::store::{Durability, Store};
    use understudy_serve::{Fields, Op, ServeConfig, Server};
    let dir = tempfile::tempdir().expect("tempdir");
    let d = if durability == "fast" {
        Durability::Fast
    } else {
        Durability::Full
    };
    let store = Arc::new(Store::open_with(dir.path().join("s.sqlite"), d).expect("store"));
    let world = Arc::new(
        understudy::World::load(repo().join("fixtures/worlds/support-desk")).expect("world"),
    );
    let server = Server::new(
        vec![world],
        store,
        ServeConfig {
            durability: d,
            ..ServeConfig::default()
        },
    )
    .expect("server");
    let call = |op: Op, body: Value| {
        server
            .handle(op, Fields::from_value(op, body).expect("fields"))
            .expect("ok")
            .into_value()
    };
    let reset = |previous: Option<&str>| {
        if let Some(id) = previous {
            call(Op::Close, json!({"episode_id": id}));
        }
        call(Op::Reset, json!({"task_id": TASK, "model": "bench"}))["episode_id"]
            .as_str()
            .expect("id")
            .to_string()
    };
    let mut id = reset(None);
    let mut left = STEPS_PER_EPISODE;
    c.bench_function(&format!("in-process step, durability {durability}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if left == 0 {
                    id = reset(Some(&id));
                    left = STEPS_PER_EPISODE;
                }
                let body = json!({"episode_id": id, "action": step_action()});
                let t = Instant::now();
                call(Op::Step, body);
                total += t.elapsed();
                left -= 1;
            }
            total
        })
    });
}

fn serve(c: &mut Criterion) {
    bench_http_concurrent(c, "full", 64);
    for durability in ["full", "fast"] {
        bench_in_process(c, durability);
        bench_stdio(c, durability);
        bench_http(c, durability);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = serve
}
criterion_main!(benches);
