//! Accounts and roles: password sign-in, what an expert sees (their
//! assignments, their episodes) and what only admins do.

use understudy_hub::client::{sign_in, EpisodeQuery, PushOptions};
use understudy_hub::people::NewPerson;
use understudy_hub::wire::NewAssignment;
use understudy_hub::Role;

use crate::support::*;

#[test]
fn people_sign_in_and_see_only_what_their_role_allows() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = client(&hub.url, &person(&db, "admin", Role::Admin));
    let grace_person = admin
        .add_person(&NewPerson {
            login: "grace".into(),
            name: "Grace Hopper".into(),
            role: Role::Expert,
            password: Some("correct horse battery".into()),
        })
        .expect("an expert is added");
    assert_eq!(grace_person.role, Role::Expert);
    let short = admin
        .add_person(&NewPerson {
            login: "bob".into(),
            name: "Bob".into(),
            role: Role::Expert,
            password: Some("short".into()),
        })
        .expect_err("a short password");
    assert!(
        short.to_string().contains("at least 10 characters"),
        "{short}"
    );
    let taken = admin
        .add_person(&NewPerson {
            login: "grace".into(),
            name: "Another".into(),
            role: Role::Expert,
            password: None,
        })
        .expect_err("a login is taken");
    assert_eq!(taken.code(), Some("conflict"));

    let wrong = sign_in(&hub.url, "grace", "wrong password!").expect_err("a wrong password");
    assert_eq!(wrong.code(), Some("unauthorized"));
    let unknown =
        sign_in(&hub.url, "nobody", "correct horse battery").expect_err("an unknown login");
    assert_eq!(
        unknown.to_string(),
        wrong.to_string(),
        "the same answer for both"
    );
    let issued = sign_in(&hub.url, "grace", "correct horse battery").expect("a sign-in");
    let grace = client(&hub.url, &issued.token);
    assert_eq!(grace.me().expect("me").login, "grace");
    let stored_hash: i64 = count(
        &db,
        "SELECT count(*) FROM passwords WHERE hash LIKE '$argon2id$%'",
    );
    assert_eq!(stored_hash, 1, "the password is kept as an Argon2id hash");

    let ada = client(&hub.url, &person(&db, "ada", Role::Expert));
    let world = admin.add_world(&mini_dir()).expect("the world uploads");
    let made = admin
        .assign(&NewAssignment {
            world_hash: world.hash.clone(),
            task_id: "pay-back".into(),
            experts: vec!["ada".into(), "grace".into()],
            due_at: Some("2026-03-04T17:00:00+01:00".into()),
        })
        .expect("an assignment with overlap");
    assert_eq!(made.len(), 2);
    assert!(made.iter().all(|a| a.overlap == 2));
    assert_eq!(made[0].due_at.as_deref(), Some("2026-03-04T16:00:00Z"));
    let bad_task = admin
        .assign(&NewAssignment {
            world_hash: world.hash.clone(),
            task_id: "no-such-task".into(),
            experts: vec!["ada".into()],
            due_at: None,
        })
        .expect_err("an unknown task");
    assert!(
        bad_task
            .to_string()
            .contains("declares no task `no-such-task`"),
        "{bad_task}"
    );
    let by_expert = ada
        .assign(&NewAssignment {
            world_hash: world.hash.clone(),
            task_id: "pay-back".into(),
            experts: vec!["ada".into()],
            due_at: None,
        })
        .expect_err("experts do not assign");
    assert_eq!(by_expert.code(), Some("forbidden"));
    let queue = ada.assignments().expect("ada's queue");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0].expert, "ada");
    assert_eq!(admin.assignments().expect("everyone's").len(), 2);

    // Each expert sees only their own episodes.
    let (_a, ada_store) = local_store();
    record(&ada_store, "x-ada", 2);
    ada.push(&ada_store, PushOptions::default())
        .expect("ada pushes");
    let (_g, grace_store) = local_store();
    record(&grace_store, "x-grace", 1);
    grace
        .push(&grace_store, PushOptions::default())
        .expect("grace pushes");
    assert_eq!(
        ada.episodes(&EpisodeQuery::default()).expect("ada's").len(),
        2
    );
    assert_eq!(
        grace
            .episodes(&EpisodeQuery::default())
            .expect("grace's")
            .len(),
        1
    );
    assert_eq!(
        grace
            .export_bundles(&EpisodeQuery::default())
            .expect("grace's export")
            .len(),
        1
    );
    assert_eq!(
        admin.episodes(&EpisodeQuery::default()).expect("all").len(),
        3
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM episodes e JOIN people p ON p.id = e.changed_by WHERE p.login = 'ada'"),
        2,
        "every pushed episode is attributed to its pusher"
    );
    let token_for_other = ada
        .issue_token("grace", "x")
        .expect_err("only admins issue others' tokens");
    assert_eq!(token_for_other.code(), Some("forbidden"));
    ada.issue_token("ada", "laptop")
        .expect("a token of one's own");
}
