//! The change feeds a sync pulls with: a sync reads only the runs changed
//! since the last one (the cursor kept in the store), and a run whose
//! transaction commits after a later-numbered one was read is not passed
//! over (the sequence-gap race); the same for reviewers' decisions
//! reaching the expert's app.

use understudy::store::{Decision, EpisodeStatus};
use understudy_hub::client::PushOptions;
use understudy_hub::outbox::Outbox;
use understudy_hub::pull::{REVIEWS_FEED, RUNS_FEED};
use understudy_hub::wire::ChangeCursor;
use understudy_hub::Role;

use crate::support::*;

/// The runs-feed cursor `store` keeps for `who` on `url`.
fn cursor_of(
    store: &understudy::store::Store,
    url: &str,
    who: &understudy_hub::client::Hub,
) -> ChangeCursor {
    let account = format!("{url}#{}", who.me().expect("me").id);
    let text = store
        .hub_cursor(&account, RUNS_FEED)
        .expect("read")
        .expect("a cursor after a sync");
    serde_json::from_str(&text).expect("a cursor")
}

/// A connection to `db` inside a transaction that ran `sql` and stays
/// open (commit it with `COMMIT`): a writer that commits late.
fn held_open(rt: &tokio::runtime::Runtime, db: &str, sql: &str) -> tokio_postgres::Client {
    rt.block_on(async {
        let (c, conn) = tokio_postgres::connect(db, tokio_postgres::NoTls)
            .await
            .expect("a connection");
        tokio::spawn(conn);
        c.batch_execute(&format!("BEGIN; {sql}"))
            .await
            .expect("written, not committed");
        c
    })
}

/// A fresh hub holding the mini world, and an expert Ada on it: the
/// database's URL, the hub, and Ada's token. `None`: no test server.
fn hub_with_ada() -> Option<(String, InProcessHub, String)> {
    let db = fresh_database(&server_url()?);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    client(&hub.url, &person(&db, "admin", Role::Admin))
        .add_world(&mini_dir())
        .expect("the world");
    let ada_token = person(&db, "ada", Role::Expert);
    Some((db, hub, ada_token))
}

#[test]
fn a_sync_reads_only_the_runs_changed_since_the_last_and_none_is_passed_over_by_a_late_commit() {
    let Some((db, hub, ada_token)) = hub_with_ada() else {
        return;
    };
    let (_ada_dir, ada_store) = local_store();
    // Four runs: the first and third finished, the others open.
    let ids = record(&ada_store, "x-ada", 4);
    let ada = client(&hub.url, &ada_token);
    ada.push(&ada_store, PushOptions::default())
        .expect("pushed");

    let gus_token = person(&db, "gus", Role::Reviewer);
    let gus_hub = client(&hub.url, &gus_token);
    let (gus_dir, gus_store) = local_store();
    let gus = Outbox::open(gus_dir.path()).expect("settings");
    gus.sign_in_with_token(&hub.url, &gus_token).expect("in");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(gus_store.pulled_episode_ids().expect("pulled").len(), 2);

    // Nothing changed: the feed after the store's cursor is empty, the
    // open runs included (they come when they change).
    let at = cursor_of(&gus_store, &hub.url, &gus_hub);
    let page = gus_hub.run_changes(&at).expect("a page");
    assert!(page.runs.is_empty() && !page.more, "{page:?}");
    assert_eq!(page.next, at);
    // Ada pushes two more runs (one finished): only that one is read.
    let more = record(&ada_store, "x-ada", 2);
    ada.push(&ada_store, PushOptions::default())
        .expect("pushed");
    let page = gus_hub.run_changes(&at).expect("a page");
    assert_eq!(page.runs, [more[0].clone()], "only what changed");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(gus_store.pulled_episode_ids().expect("pulled").len(), 3);

    // The race: run X is submitted by a transaction that stays open while
    // run Y's submission commits and Gus syncs; X's commits after.
    let (x, y) = (&ids[1], &ids[3]);
    let rt = runtime();
    let slow = held_open(
        &rt,
        &db,
        &format!("UPDATE episodes SET status = 'submitted' WHERE id = '{x}'"),
    );
    assert_eq!(
        count(&db, &format!("WITH u AS (UPDATE episodes SET status = 'submitted' WHERE id = '{y}' RETURNING 1) SELECT count(*) FROM u")),
        1
    );
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    let pulled = gus_store.pulled_episode_ids().expect("pulled");
    assert!(pulled.contains(y) && !pulled.contains(x), "{pulled:?}");
    rt.block_on(slow.batch_execute("COMMIT"))
        .expect("X committed");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    let pulled = gus_store.pulled_episode_ids().expect("pulled");
    assert!(pulled.contains(x), "X arrives on the next sync: {pulled:?}");
    assert_eq!(pulled.len(), 5);

    // A sync cut off before its cursor was saved reads again and stores
    // nothing twice.
    let account = format!("{}#{}", hub.url, gus_hub.me().expect("me").id);
    gus_store
        .save_hub_cursor(&understudy::store::HubCursor {
            account: &account,
            feed: RUNS_FEED,
            cursor: "{\"seq\":0}",
        })
        .expect("rolled back");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(gus_store.pulled_episode_ids().expect("pulled").len(), 5);
    // A cursor that is not one is named, not guessed at.
    gus_store
        .save_hub_cursor(&understudy::store::HubCursor {
            account: &account,
            feed: RUNS_FEED,
            cursor: "yesterday",
        })
        .expect("damaged");
    let s = gus.sync(&gus_store).expect("a sync");
    let e = s.last_error.expect("refused");
    assert!(
        e.contains("hub_cursors") && e.contains("`yesterday`"),
        "{e}"
    );
}

#[test]
fn a_decision_whose_transaction_commits_late_still_reaches_the_experts_app() {
    let Some((db, hub, ada_token)) = hub_with_ada() else {
        return;
    };
    let (ada_dir, ada_store) = local_store();
    let ada = Outbox::open(ada_dir.path()).expect("settings");
    ada.sign_in_with_token(&hub.url, &ada_token).expect("in");
    // Four runs, the first and third finished: X and Y.
    let ids = record(&ada_store, "x-ada", 4);
    let (x, y) = (&ids[0], &ids[2]);
    assert_eq!(ada.sync(&ada_store).expect("a sync").last_error, None);
    let rita = client(&hub.url, &person(&db, "rita", Role::Reviewer));

    // The race: X's approval is written first (the lower row id) by a
    // transaction that stays open while Y's approval commits and Ada
    // syncs; X's commits after. Read by row id, X would be passed over.
    let rt = runtime();
    let slow = held_open(
        &rt,
        &db,
        &format!("INSERT INTO reviews (episode_id, reviewer, decision, comment, at) VALUES ('{x}', 'Rita', 'approve', 'Late.', '2026-12-02T00:00:00Z'); UPDATE episodes SET status = 'approved' WHERE id = '{x}'"),
    );
    rita.review(y, Decision::Approve, "Clean.")
        .expect("Y approved");
    assert_eq!(ada.sync(&ada_store).expect("a sync").last_error, None);
    let status = |id: &str| ada_store.episode(id).expect("here").status;
    assert_eq!(status(y), EpisodeStatus::Approved);
    assert_eq!(status(x), EpisodeStatus::Submitted, "not committed yet");
    rt.block_on(slow.batch_execute("COMMIT"))
        .expect("X committed");
    assert_eq!(ada.sync(&ada_store).expect("a sync").last_error, None);
    assert_eq!(
        status(x),
        EpisodeStatus::Approved,
        "X arrives on the next sync"
    );
    assert_eq!(ada_store.reviews(x).expect("reviews")[0].comment, "Late.");

    // Nothing is read again: the feed after Ada's cursor is empty.
    let ada_hub = client(&hub.url, &ada_token);
    let account = format!("{}#{}", hub.url, ada_hub.me().expect("me").id);
    let text = ada_store
        .hub_cursor(&account, REVIEWS_FEED)
        .expect("read")
        .expect("a cursor after a sync");
    let at: ChangeCursor = serde_json::from_str(&text).expect("a cursor");
    let page = ada_hub.review_changes(&at).expect("a page");
    assert!(page.reviews.is_empty() && !page.more, "{page:?}");
    assert_eq!(
        ada_store.reviews(y).expect("reviews").len(),
        1,
        "applied once"
    );
}
