//! The desktop app's offline-first sync (`outbox`): what waits, sending it,
//! the hub going away and coming back, and a revoked token, each told in
//! plain words; nothing lost or sent twice.

use understudy_hub::outbox::Outbox;
use understudy_hub::people::NewPerson;
use understudy_hub::wire::NewAssignment;
use understudy_hub::Role;

use crate::support::*;

#[test]
fn the_app_counts_what_waits_sends_it_when_the_hub_is_back_and_keeps_the_queue() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let (mut process, addr, url) = hub_on_a_port(&db);
    let admin = client(&url, &person(&db, "admin", Role::Admin));
    admin
        .add_person(&NewPerson {
            login: "ada".into(),
            name: "Ada Lovelace".into(),
            role: Role::Expert,
            password: Some("correct horse battery".into()),
        })
        .expect("ada");
    let world = admin.add_world(&mini_dir()).expect("the world");
    admin
        .assign(&NewAssignment {
            world_hash: world.hash.clone(),
            task_id: "pay-back".into(),
            experts: vec!["ada".into()],
            due_at: None,
        })
        .expect("an assignment");

    let (dir, store) = local_store();
    record(&store, "x-ada", 2);
    let outbox = Outbox::open(dir.path()).expect("no settings");
    let e = outbox
        .sign_in_with_password(&url, "ada", "wrong password")
        .expect_err("a wrong password");
    assert!(e.to_string().contains("do not match an account"), "{e}");
    assert!(!outbox.signed_in());
    outbox
        .sign_in_with_password(&url, "ada", "correct horse battery")
        .expect("ada signs in");
    let before = outbox.status(&store).expect("status");
    assert_eq!(before.waiting, 2);
    assert_eq!(
        before.account.as_ref().map(|a| a.name.as_str()),
        Some("Ada Lovelace")
    );
    let after = outbox.sync(&store).expect("a sync");
    assert_eq!(after.last_error, None);
    assert_eq!(after.waiting, 0);
    assert!(after.last_synced_at.is_some());
    assert_eq!(after.assignments.len(), 1);
    assert_eq!(after.assignments[0].task_id, "pay-back");
    assert_eq!(count(&db, "SELECT count(*) FROM episodes"), 2);

    // The hub goes away; the app keeps recording; the failure is plain.
    process.kill();
    record(&store, "x-ada", 1);
    let offline = outbox.sync(&store).expect("a failed sync is a status");
    assert_eq!(offline.waiting, 1);
    let said = offline.last_error.clone().expect("an error");
    assert!(
        said.contains("cannot be reached") && said.contains("saved on this computer"),
        "{said}"
    );
    assert_eq!(
        offline.assignments.len(),
        1,
        "the last queue is kept offline"
    );
    // The settings survive a restart of the app.
    let reopened = Outbox::open(dir.path()).expect("the saved settings");
    assert_eq!(reopened.status(&store).expect("status").waiting, 1);

    // Back: the next sync sends the rest, nothing twice.
    let _process = HubProcess::start(&db, addr);
    let back = reopened.sync(&store).expect("a sync");
    assert_eq!((back.waiting, back.last_error.clone()), (0, None));
    assert_eq!(count(&db, "SELECT count(*) FROM episodes"), 3);
    assert_eq!(
        count(&db, "SELECT count(*) FROM steps") as usize,
        local_steps(&store)
    );

    // Access withdrawn: told so, in words for the expert.
    let tokens = admin.tokens("ada").expect("ada's tokens");
    for t in tokens {
        admin.revoke_token(t.id).expect("revoked");
    }
    record(&store, "x-ada", 1);
    let refused = reopened.sync(&store).expect("a status");
    assert!(
        refused
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("access to the hub was withdrawn")),
        "{refused:?}"
    );
    assert_eq!(refused.waiting, 1);
    reopened.sign_out().expect("signs out");
    assert_eq!(reopened.status(&store).expect("status").account, None);
    assert_eq!(count(&db, "SELECT count(*) FROM episodes"), 3);
}
