//! Three experts syncing at once while connections are cut mid-push and
//! the hub is killed mid-sync: nothing is lost or stored twice, the hub's
//! copy exports byte for byte as each expert's own store does, and the
//! next sync has nothing left to send.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use understudy::export::{self, ExportOptions, Source};
use understudy::store::Store;
use understudy_hub::client::{EpisodeQuery, PushOptions};
use understudy_hub::Role;

use crate::support::*;

const EXPERTS: [&str; 3] = ["ada", "grace", "linus"];

struct Expert {
    login: &'static str,
    token: String,
    _dir: tempfile::TempDir,
    store: Arc<Store>,
}

/// Every expert pushes through `url` at once, retrying transient failures;
/// returns how many failures each saw.
fn push_all(experts: &[Expert], url: &str) -> Vec<usize> {
    std::thread::scope(|s| {
        let handles: Vec<_> = experts
            .iter()
            .map(|x| {
                s.spawn(move || {
                    let hub = client(url, &x.token);
                    let (_, failures) = retry(
                        &format!("{} pushes", x.login),
                        Duration::from_secs(60),
                        || {
                            hub.push(
                                &x.store,
                                PushOptions {
                                    max_steps_per_batch: 4,
                                },
                            )
                        },
                    );
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a pusher"))
            .collect()
    })
}

fn native(source: &Source<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    export::write_jsonl(source, None, &ExportOptions::default(), &mut out, &|| {})
        .expect("an export");
    out
}

/// What the hub holds for each expert is exactly their store: same
/// episodes, same steps, byte for byte.
fn assert_hub_matches(db: &str, url: &str, experts: &[Expert]) {
    for x in experts {
        let hub_copy = client(url, &x.token)
            .export_bundles(&EpisodeQuery::default())
            .expect("the expert's export");
        let local = native(&Source::Store(&x.store));
        let remote = native(&Source::Episodes(&hub_copy));
        assert_eq!(
            String::from_utf8_lossy(&remote),
            String::from_utf8_lossy(&local),
            "{}: the hub's copy differs from the local store",
            x.login
        );
    }
    let local_steps: usize = experts.iter().map(|x| local_steps(&x.store)).sum();
    let local_episodes: usize = experts
        .iter()
        .map(|x| {
            x.store
                .episodes(&Default::default())
                .expect("episodes")
                .len()
        })
        .sum();
    assert_eq!(
        count(db, "SELECT count(*) FROM steps") as usize,
        local_steps
    );
    assert_eq!(
        count(db, "SELECT count(*) FROM episodes") as usize,
        local_episodes
    );
}

#[test]
fn three_experts_sync_through_cut_connections_and_a_killed_hub() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let admin = person(&db, "admin", Role::Admin);
    let addr = free_port();
    let hub = Arc::new(Mutex::new(HubProcess::start(&db, addr)));
    let direct = format!("http://{addr}");
    client(&direct, &admin)
        .add_world(&mini_dir())
        .expect("the world uploads");
    let experts: Vec<Expert> = EXPERTS
        .iter()
        .map(|login| {
            let token = person(&db, login, Role::Expert);
            let (dir, store) = local_store();
            record(&store, &format!("x-{login}"), 10);
            Expert {
                login,
                token,
                _dir: dir,
                store,
            }
        })
        .collect();

    // Round 1: the first connections are cut in the middle of a request.
    let cutter = FaultProxy::start(Faults {
        upstream: addr,
        cuts: 6,
        cut_after: 900,
        trigger_at: usize::MAX,
        on_bytes: None,
    });
    let failures = push_all(&experts, &cutter.url());
    assert!(
        cutter.cut.load(Ordering::SeqCst) >= 3,
        "connections were cut"
    );
    assert!(
        failures.iter().sum::<usize>() >= 3,
        "pushes failed and were retried: {failures:?}"
    );
    assert_hub_matches(&db, &direct, &experts);

    // Round 2: more work recorded offline, then the hub is killed partway
    // through the sync and started again.
    for x in &experts {
        record(&x.store, &format!("x-{}", x.login), 8);
    }
    let episodes_at_kill = Arc::new(AtomicI64::new(-1));
    let killer = {
        let (hub, db, at) = (Arc::clone(&hub), db.clone(), Arc::clone(&episodes_at_kill));
        Box::new(move || {
            hub.lock().expect("the hub").kill();
            at.store(
                count(&db, "SELECT count(*) FROM episodes"),
                Ordering::SeqCst,
            );
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                *hub.lock().expect("the hub") = HubProcess::start(&db, addr);
            });
        }) as Box<dyn FnOnce() + Send>
    };
    let proxy = FaultProxy::start(Faults {
        upstream: addr,
        cuts: 0,
        cut_after: 0,
        trigger_at: 15_000,
        on_bytes: Some(killer),
    });
    let failures = push_all(&experts, &proxy.url());
    let at_kill = episodes_at_kill.load(Ordering::SeqCst);
    assert!(at_kill >= 0, "the hub was killed during the sync");
    assert!(
        at_kill < 54,
        "the hub was killed before the sync finished ({at_kill} of 54 episodes in)"
    );
    assert!(
        failures.iter().sum::<usize>() >= 1,
        "pushes failed while the hub was down: {failures:?}"
    );
    assert_hub_matches(&db, &direct, &experts);

    // The next sync completes with nothing left to send.
    for x in &experts {
        let report = client(&direct, &x.token)
            .push(&x.store, PushOptions::default())
            .expect("a clean sync");
        assert_eq!(report.local_episodes, 18);
        assert_eq!(
            report.sent_episodes, 0,
            "{}: everything was already on the hub",
            x.login
        );
    }
    // A change made later (a rationale edited) is sent, and only that.
    let x = &experts[0];
    let first = x.store.episodes(&Default::default()).expect("episodes")[1]
        .id
        .clone();
    x.store
        .annotate_step(&first, 0, Some("looked Ada up by name"), Some("check"))
        .expect("annotate");
    let report = client(&direct, &x.token)
        .push(&x.store, PushOptions::default())
        .expect("a sync");
    assert_eq!(report.sent_episodes, 1);
    assert_eq!(report.stored.steps_added, 0);
    assert_eq!(report.stored.steps_updated, 1);
    assert_hub_matches(&db, &direct, &experts);
}
