//! Hub throughput, in steps/s: a push from one client and from 16 at once
//! (each into an empty hub copy: new episode ids every iteration); a push
//! and pull round (experts push finished episodes, then as many
//! reviewers' apps sync and pull them into their stores); and an export
//! from the hub beside the same export from a local store. And the same
//! push and pull round on a small hub beside one that already holds
//! `LARGE_HUB` episodes: a sync reads the hub's change feeds after its
//! cursor, so the two should cost the same.
//!
//! Needs a PostgreSQL server: `scripts/bench` starts one (scripts/hub.sh)
//! and sets `UNDERSTUDY_HUB_TEST_DATABASE`; without it the benchmarks are
//! skipped with a note. Not part of CI.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use understudy::export::{self, ExportOptions, Source};
use understudy::store::{Actor, Store};
use understudy::trajectory::Trajectory;
use understudy_hub::client::{EpisodeQuery, Hub, PushOptions};
use understudy_hub::outbox::Outbox;
use understudy_hub::people::{self, NewPerson};
use understudy_hub::Role;

const EPISODES: usize = 200;
/// The mini world's `pay-back` task allows five steps.
const STEPS: usize = 5;
const CLIENTS: usize = 16;
/// Episodes already on the hub in the large-hub case.
const LARGE_HUB: usize = 2000;
/// Finished episodes one expert pushes per round in the hub-size cases.
const PER_ROUND: usize = 20;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// One recorded episode of the mini world with `STEPS` steps, as a
/// template; `submitted`: finished, so reviewers' apps pull it.
fn template(expert: &str, submitted: bool) -> Trajectory {
    let dir = tempfile::tempdir().expect("a folder");
    let store = Arc::new(Store::open(dir.path().join("t.db")).expect("a store"));
    store.ensure_expert(expert, None).expect("the expert");
    let world = Arc::new(understudy::World::load(understudy_testkit::mini_dir()).expect("mini"));
    let mut rec = understudy::recorder::Recorder::start(
        Arc::clone(&store),
        world,
        "pay-back",
        Actor::Expert { id: expert.into() },
        0,
    )
    .expect("an episode");
    for i in 0..STEPS {
        let v = if i % 2 == 0 {
            serde_json::json!({"tool": "view_accounts", "args": {"search": "ada"}})
        } else {
            serde_json::json!({"tool": "get_account", "args": {"account_id": "A-1"}})
        };
        rec.step(
            understudy::Action::from_json(&v).expect("an action"),
            Some("why".into()),
        )
        .expect("a step");
    }
    if submitted {
        rec.submit(Some("Done.".into())).expect("submitted");
    }
    rec.trajectory().clone()
}

/// A local store holding `EPISODES` copies of `t` under new ids.
fn store_of(t: &Trajectory, expert: &str) -> (tempfile::TempDir, Store) {
    store_with(t, expert, EPISODES)
}

/// A local store holding `n` copies of `t` under new ids.
fn store_with(t: &Trajectory, expert: &str, n: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a folder");
    let store = Store::open(dir.path().join("s.db")).expect("a store");
    store.ensure_expert(expert, None).expect("the expert");
    let copies: Vec<Trajectory> = (0..n)
        .map(|_| {
            let mut c = t.clone();
            c.record.id = understudy::store::new_uuid();
            c
        })
        .collect();
    store.import(&copies).expect("the copies");
    (dir, store)
}

struct Setup {
    url: String,
    /// The admin's, then each expert's.
    tokens: Vec<String>,
    /// Each reviewer's.
    reviewers: Vec<String>,
    templates: Vec<Trajectory>,
    finished: Vec<Trajectory>,
    _rt: tokio::runtime::Runtime,
}

fn setup(server: &str) -> Setup {
    setup_named(server, &format!("hub_bench_{}", std::process::id()))
}

/// [`setup`] on a database of its own called `name`.
fn setup_named(server: &str, name: &str) -> Setup {
    let rt = runtime();
    let (base, _) = server.rsplit_once('/').expect("a URL with a database");
    let db = format!("{base}/{name}");
    let url = rt.block_on(async {
        let (c, conn) = tokio_postgres::connect(server, tokio_postgres::NoTls)
            .await
            .expect("the server");
        let conn = tokio::spawn(conn);
        // Two calls: one string of both would run as one transaction,
        // which DROP DATABASE refuses.
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await
            .expect("the old database dropped");
        c.batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("a database");
        drop(c);
        let _ = conn.await;
        let pool = understudy_hub::db::open(&db)
            .await
            .expect("the hub's database");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            understudy_hub::serve_listener(
                listener,
                understudy_hub::router(pool, understudy_hub::DEFAULT_MAX_BODY_BYTES),
                understudy_hub::Limits::default(),
                std::future::pending(),
            )
            .await;
        });
        format!("http://{addr}")
    });
    let mut tokens = Vec::new();
    let mut reviewers = Vec::new();
    for i in 0..=2 * CLIENTS {
        let login = format!("p{i}");
        let role = match i {
            0 => Role::Admin,
            i if i <= CLIENTS => Role::Expert,
            _ => Role::Reviewer,
        };
        let token = rt.block_on(async {
            people::bootstrap_add(
                &db,
                &NewPerson {
                    login: login.clone(),
                    name: login.clone(),
                    role,
                    password: None,
                },
            )
            .await
            .expect("a person");
            people::bootstrap_token(&db, &login, "bench")
                .await
                .expect("a token")
        });
        if role == Role::Reviewer {
            reviewers.push(token);
        } else {
            tokens.push(token);
        }
    }
    Hub::new(&url, &tokens[0])
        .expect("a client")
        .add_world(&understudy_testkit::mini_dir())
        .expect("the world");
    let templates = (1..=CLIENTS)
        .map(|i| template(&format!("x{i}"), false))
        .collect();
    let finished = (1..=CLIENTS)
        .map(|i| template(&format!("x{i}"), true))
        .collect();
    Setup {
        url,
        tokens,
        reviewers,
        templates,
        finished,
        _rt: rt,
    }
}

/// Pushes `stores[i]` as expert `i + 1`, all at once.
fn push_all(s: &Setup, stores: &[(tempfile::TempDir, Store)]) {
    std::thread::scope(|scope| {
        for (i, (_, store)) in stores.iter().enumerate() {
            let (url, token) = (&s.url, &s.tokens[i + 1]);
            scope.spawn(move || {
                Hub::new(url, token)
                    .expect("a client")
                    .push(store, PushOptions::default())
                    .expect("a push");
            });
        }
    });
}

/// Pushes a fresh store from each of the first `clients` experts at once;
/// the time of the pushes only.
fn timed_push(s: &Setup, clients: usize) -> Duration {
    let stores: Vec<_> = (0..clients)
        .map(|i| store_of(&s.templates[i], &format!("x{}", i + 1)))
        .collect();
    let started = Instant::now();
    push_all(s, &stores);
    started.elapsed()
}

/// A reviewer's app: its data folder (hub.json), its store, its outbox,
/// signed in.
struct ReviewerApp {
    _dir: tempfile::TempDir,
    store: Store,
    outbox: Outbox,
}

fn reviewer_app(url: &str, token: &str) -> ReviewerApp {
    let dir = tempfile::tempdir().expect("a folder");
    let store = Store::open(dir.path().join("s.db")).expect("a store");
    let outbox = Outbox::open(dir.path()).expect("the settings");
    outbox.sign_in_with_token(url, token).expect("signed in");
    // Everything on the hub so far, so the rounds pull only their own.
    outbox.sync(&store).expect("a first sync");
    ReviewerApp {
        _dir: dir,
        store,
        outbox,
    }
}

/// One push and pull round: the first `apps.len()` experts each push
/// `per` fresh finished episodes at once, then every reviewer's app syncs
/// at once and pulls them all. The time of the pushes and syncs only.
fn timed_push_pull(s: &Setup, apps: &[ReviewerApp], per: usize) -> Duration {
    let stores: Vec<_> = (0..apps.len())
        .map(|i| store_with(&s.finished[i], &format!("x{}", i + 1), per))
        .collect();
    let started = Instant::now();
    push_all(s, &stores);
    std::thread::scope(|scope| {
        for app in apps {
            scope.spawn(move || {
                let status = app.outbox.sync(&app.store).expect("a sync");
                assert_eq!(status.last_error, None, "the pull failed");
            });
        }
    });
    started.elapsed()
}

/// Writes `source` as native lines; how many bytes.
fn native_bytes(source: &Source<'_>) -> usize {
    let mut out = Vec::new();
    export::write_jsonl(source, None, &ExportOptions::default(), &mut out, &|| {})
        .expect("written");
    out.len()
}

fn bench(c: &mut Criterion) {
    let Ok(server) = std::env::var("UNDERSTUDY_HUB_TEST_DATABASE") else {
        eprintln!("skipped: the hub benchmarks need UNDERSTUDY_HUB_TEST_DATABASE (scripts/bench starts PostgreSQL)");
        return;
    };
    let s = setup(&server);
    let steps = (EPISODES * STEPS) as u64;
    let mut g = c.benchmark_group("hub");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for clients in [1, CLIENTS] {
        g.throughput(Throughput::Elements(steps * clients as u64));
        g.bench_function(format!("sync_{clients}_client(s)"), |b| {
            b.iter_custom(|n| (0..n).map(|_| timed_push(&s, clients)).sum())
        });
    }
    // Push and pull: as many reviewers' apps as experts, each pulling
    // every episode the experts pushed (about `EPISODES` in all a round).
    for clients in [1, CLIENTS] {
        let apps: Vec<ReviewerApp> = s.reviewers[..clients]
            .iter()
            .map(|t| reviewer_app(&s.url, t))
            .collect();
        let per = EPISODES / clients;
        let pushed = (per * clients * STEPS) as u64;
        g.throughput(Throughput::Elements(pushed * (1 + clients as u64)));
        g.bench_function(format!("push_pull_{clients}_client(s)"), |b| {
            b.iter_custom(|n| (0..n).map(|_| timed_push_pull(&s, &apps, per)).sum())
        });
    }
    // Export: one expert's episodes, from the hub and from their store.
    let (_dir, local) = store_of(&s.templates[0], "x1");
    let expert = Hub::new(&s.url, &s.tokens[1]).expect("a client");
    expert.push(&local, PushOptions::default()).expect("a push");
    let on_hub = expert
        .export_bundles(&EpisodeQuery::default())
        .expect("an export")
        .len();
    let exported_steps: u64 = (on_hub * STEPS) as u64;
    g.throughput(Throughput::Elements(exported_steps));
    g.bench_function("export_from_hub", |b| {
        b.iter(|| {
            // Episodes and their rewards, as `export --hub` fetches them.
            let (bundles, rewards) = expert
                .export_scored(&EpisodeQuery::default())
                .expect("an export");
            native_bytes(&Source::Scored(&bundles, &rewards))
        })
    });
    let (_d, only) = store_of(&s.templates[0], "x1");
    g.throughput(Throughput::Elements((EPISODES * STEPS) as u64));
    g.bench_function("export_local", |b| {
        b.iter(|| native_bytes(&Source::Store(&only)))
    });
    g.finish();
}

/// One push and pull round (an expert pushes `PER_ROUND` finished
/// episodes, a reviewer's app syncs and pulls them) on a hub that holds
/// nothing else, beside the same on a hub already holding `LARGE_HUB`
/// finished episodes (the app pulled them before the rounds).
fn bench_hub_size(c: &mut Criterion) {
    let Ok(server) = std::env::var("UNDERSTUDY_HUB_TEST_DATABASE") else {
        eprintln!("skipped: the hub benchmarks need UNDERSTUDY_HUB_TEST_DATABASE (scripts/bench starts PostgreSQL)");
        return;
    };
    let mut g = c.benchmark_group("hub_size");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements((PER_ROUND * STEPS) as u64 * 2));
    for (label, already) in [("small_hub", 0), ("large_hub", LARGE_HUB)] {
        let s = setup_named(
            &server,
            &format!("hub_bench_{}_{label}", std::process::id()),
        );
        if already > 0 {
            let (_dir, store) = store_with(&s.finished[0], "x1", already);
            push_all(&s, std::slice::from_ref(&(_dir, store)));
        }
        let apps = [reviewer_app(&s.url, &s.reviewers[0])];
        g.bench_function(format!("push_pull_1_client(s)_{label}"), |b| {
            b.iter_custom(|n| (0..n).map(|_| timed_push_pull(&s, &apps, PER_ROUND)).sum())
        });
    }
    g.finish();
}

criterion_group!(benches, bench, bench_hub_size);
criterion_main!(benches);
