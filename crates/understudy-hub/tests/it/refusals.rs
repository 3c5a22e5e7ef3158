//! Bad tokens, wrong roles, malformed and oversized bodies, a step whose
//! content changed, and a world the hub does not have: each gets a clear
//! `{code, message}` error, and nothing is stored.

use understudy_hub::client::PushOptions;
use understudy_hub::wire::{PushBatch, PushEpisode};
use understudy_hub::Role;

use crate::support::*;

fn batch_of(store: &understudy::store::Store) -> PushBatch {
    let mut episodes = Vec::new();
    for r in store.episodes(&Default::default()).expect("episodes") {
        let t = store.trajectory(&r.id).expect("a trajectory");
        episodes.push(PushEpisode {
            digest: "d".into(),
            record: t.record,
            steps: t.steps,
        });
    }
    PushBatch {
        experts: store.experts().expect("experts"),
        episodes,
    }
}

fn stored(db: &str) -> (i64, i64) {
    (
        count(db, "SELECT count(*) FROM episodes"),
        count(db, "SELECT count(*) FROM steps"),
    )
}

#[test]
fn bad_tokens_roles_and_bodies_are_refused_with_nothing_stored() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, 64 * 1024);
    let admin = person(&db, "admin", Role::Admin);
    let expert = person(&db, "ada", Role::Expert);
    let engineer = person(&db, "eng", Role::Engineer);
    client(&hub.url, &admin)
        .add_world(&mini_dir())
        .expect("the world uploads");
    let (_dir, store) = local_store();
    record(&store, "x-ada", 2);
    let push_url = format!("{}/v1/sync/push", hub.url);
    let body = serde_json::to_vec(&batch_of(&store)).expect("JSON");
    let json = Some("application/json");

    let me_url = format!("{}/v1/me", hub.url);
    let people_url = format!("{}/v1/people", hub.url);
    let nowhere = format!("{}/v1/nowhere", hub.url);
    let person_json =
        |role: &str| format!(r#"{{"login": "eve", "name": "Eve", "role": "{role}"}}"#).into_bytes();
    // (what, method, url, token, content type, body, status, code, the message says)
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        &str,
        &str,
        &str,
        Option<&str>,
        Option<&str>,
        Vec<u8>,
        u16,
        &str,
        &str,
    )> = vec![
        (
            "no token",
            "POST",
            &push_url,
            None,
            json,
            body.clone(),
            401,
            "unauthorized",
            "Authorization: Bearer",
        ),
        (
            "a bad token",
            "POST",
            &push_url,
            Some("ush_not-a-token"),
            json,
            body.clone(),
            401,
            "unauthorized",
            "not one this hub issued",
        ),
        (
            "an empty token",
            "GET",
            &me_url,
            Some(""),
            None,
            vec![],
            401,
            "unauthorized",
            "Bearer",
        ),
        (
            "an engineer pushing",
            "POST",
            &push_url,
            Some(&engineer),
            json,
            body.clone(),
            403,
            "forbidden",
            "only experts and admins push",
        ),
        (
            "not JSON",
            "POST",
            &push_url,
            Some(&expert),
            Some("text/plain"),
            body.clone(),
            415,
            "unsupported_media_type",
            "application/json",
        ),
        (
            "cut-off JSON",
            "POST",
            &push_url,
            Some(&expert),
            json,
            b"{\"experts\": [], \"episodes\": [".to_vec(),
            400,
            "bad_request",
            "line 1",
        ),
        (
            "an unknown field",
            "POST",
            &push_url,
            Some(&expert),
            json,
            b"{\"experts\": [], \"episodes\": [], \"extra\": 1}".to_vec(),
            400,
            "bad_request",
            "unknown field `extra`",
        ),
        (
            "too large",
            "POST",
            &push_url,
            Some(&expert),
            json,
            vec![b' '; 100 * 1024],
            413,
            "payload_too_large",
            "65536 bytes",
        ),
        (
            "an expert adding people",
            "POST",
            &people_url,
            Some(&expert),
            json,
            person_json("admin"),
            403,
            "forbidden",
            "only admins add people",
        ),
        (
            "an unknown role",
            "POST",
            &people_url,
            Some(&admin),
            json,
            person_json("boss"),
            400,
            "bad_request",
            "unknown variant `boss`",
        ),
        (
            "no such route",
            "GET",
            &nowhere,
            Some(&expert),
            None,
            vec![],
            404,
            "not_found",
            "no such route",
        ),
    ];
    for (what, method, url, token, content_type, body, status, code, says) in cases {
        let (s, answer) = raw(method, url, token, content_type, body);
        assert_eq!(
            (s, answer["code"].as_str()),
            (status, Some(code)),
            "{what}: {answer}"
        );
        let message = answer["message"].as_str().expect("a message");
        assert!(
            message.contains(says),
            "{what}: {message:?} should say {says:?}"
        );
    }
    assert_eq!(stored(&db), (0, 0), "nothing was stored");
    assert_eq!(
        count(&db, "SELECT count(*) FROM people"),
        3,
        "no one was added"
    );

    // The expert's push lands; a second expert cannot overwrite it.
    client(&hub.url, &expert)
        .push(&store, PushOptions::default())
        .expect("the push");
    let after_push = stored(&db);
    let other = person(&db, "grace", Role::Expert);
    assert_error(
        raw("POST", &push_url, Some(&other), json, body.clone()),
        403,
        "forbidden",
        "pushed by someone else",
    );

    // A step whose content changed under the same id refuses the whole
    // batch, with a new episode in it.
    let mut changed = batch_of(&store);
    changed.episodes[1].steps[0]
        .observation
        .text
        .push_str(" (edited)");
    let (_d2, fresh) = local_store();
    record(&fresh, "x-ada", 1);
    changed.episodes.extend(batch_of(&fresh).episodes);
    let answer = raw(
        "POST",
        &push_url,
        Some(&expert),
        json,
        serde_json::to_vec(&changed).expect("JSON"),
    );
    assert_error(answer, 409, "step_conflict", "step 0 of episode");
    assert_eq!(
        stored(&db),
        after_push,
        "nothing of the refused batch was stored"
    );

    // An undo is never taken back.
    let mut undone = batch_of(&store);
    let first = &mut undone.episodes[0];
    let retracted = first
        .steps
        .iter()
        .position(|s| s.retracted)
        .expect("a retracted step");
    first.steps[retracted].retracted = false;
    first.steps[retracted].retracted_at = None;
    let answer = raw(
        "POST",
        &push_url,
        Some(&expert),
        json,
        serde_json::to_vec(&undone).expect("JSON"),
    );
    assert_error(answer, 409, "step_conflict", "undone in an earlier push");
    assert_eq!(stored(&db), after_push);
}

#[test]
fn an_episode_recorded_against_a_world_the_hub_lacks_is_refused() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = person(&db, "admin", Role::Admin);
    let expert = person(&db, "ada", Role::Expert);
    let (_dir, store) = local_store();
    record(&store, "x-ada", 2);
    let ada = client(&hub.url, &expert);

    // The hub has another version of the world, not the recorded one.
    let changed = understudy_testkit::copy_world(&mini_dir());
    understudy_testkit::replace(changed.path(), "policy.md", "", "A changed policy.\n");
    let newer = client(&hub.url, &admin)
        .add_world(changed.path())
        .expect("the world uploads");
    let err = ada
        .push(&store, PushOptions::default())
        .expect_err("an unknown world hash");
    assert_eq!(err.code(), Some("unknown_world"));
    let message = err.to_string();
    let recorded = understudy_testkit::mini().content_hash.clone();
    assert_ne!(newer.hash, recorded);
    assert!(message.contains(&recorded), "{message}");
    assert!(message.contains("understudy hub world add"), "{message}");
    assert!(message.contains("nothing was stored"), "{message}");
    assert_eq!(stored(&db), (0, 0));

    // Experts cannot upload worlds; an engineer or admin can, then the
    // push goes through.
    let refused = ada
        .add_world(&mini_dir())
        .expect_err("experts do not upload worlds");
    assert_eq!(refused.code(), Some("forbidden"));
    let uploaded = client(&hub.url, &admin)
        .add_world(&mini_dir())
        .expect("the world uploads");
    assert_eq!(uploaded.hash, recorded);
    let again = client(&hub.url, &admin)
        .add_world(&mini_dir())
        .expect("uploading twice is fine");
    assert_eq!(again, uploaded);
    let report = ada.push(&store, PushOptions::default()).expect("the push");
    assert_eq!(report.stored.episodes_added, 2);

    // A folder that is not a world is refused by the hub too.
    let http = reqwest::blocking::Client::new();
    let resp = http
        .post(format!("{}/v1/worlds", hub.url))
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(r#"{"files": [{"path": "world.toml", "hex": "6964203d"}]}"#)
        .send()
        .expect("an answer");
    assert_eq!(resp.status().as_u16(), 422);
    let resp = http
        .post(format!("{}/v1/worlds", hub.url))
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(r#"{"files": [{"path": "../escape.toml", "hex": ""}]}"#)
        .send()
        .expect("an answer");
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(count(&db, "SELECT count(*) FROM worlds"), 2);
}
