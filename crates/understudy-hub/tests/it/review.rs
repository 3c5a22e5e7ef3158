//! A reviewer approves and rejects through the hub, with the local
//! store's rules: only a submitted episode, once; a rejection needs its
//! comment; only reviewers (and admins) decide. The expert pulls the
//! verdicts, and a later push does not undo them.

use understudy::store::{Decision, EpisodeStatus};
use understudy_hub::client::{EpisodeQuery, PushOptions};
use understudy_hub::Role;

use crate::support::*;

#[test]
fn a_reviewer_approves_through_the_hub_and_the_decision_is_final() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = person(&db, "admin", Role::Admin);
    let reviewer = person(&db, "rita", Role::Reviewer);
    let expert = person(&db, "ada", Role::Expert);
    client(&hub.url, &admin)
        .add_world(&mini_dir())
        .expect("the world uploads");
    let (_dir, store) = local_store();
    let ids = record(&store, "x-ada", 3);
    let expert_hub = client(&hub.url, &expert);
    expert_hub
        .push(&store, PushOptions::default())
        .expect("the push");
    let rita = client(&hub.url, &reviewer);

    let queue = rita
        .episodes(&EpisodeQuery {
            status: Some(EpisodeStatus::Submitted),
            ..EpisodeQuery::default()
        })
        .expect("the review queue");
    assert_eq!(queue.len(), 2, "episodes 0 and 2 were submitted");
    assert_eq!(queue[0].owner, "ada");

    let approved = rita
        .review(&ids[0], Decision::Approve, "")
        .expect("an approval");
    assert_eq!(approved.reviewer, "rita (test)");
    let again = rita
        .review(&ids[0], Decision::Reject, "no")
        .expect_err("a decision is final");
    assert_eq!(again.code(), Some("conflict"));
    assert!(
        again
            .to_string()
            .contains("already approved by rita (test)"),
        "{again}"
    );
    let open = rita
        .review(&ids[1], Decision::Approve, "")
        .expect_err("not submitted");
    assert!(
        open.to_string().contains("only a submitted episode"),
        "{open}"
    );
    let bare = rita
        .review(&ids[2], Decision::Reject, " ")
        .expect_err("a comment is needed");
    assert_eq!(bare.code(), Some("bad_request"));
    let by_expert = expert_hub
        .review(&ids[2], Decision::Approve, "")
        .expect_err("experts do not review");
    assert_eq!(by_expert.code(), Some("forbidden"));
    let missing = rita
        .review("no-such-episode", Decision::Approve, "")
        .expect_err("no episode");
    assert_eq!(missing.code(), Some("not_found"));
    rita.review(
        &ids[2],
        Decision::Reject,
        "Check the balance before the transfer.",
    )
    .expect("a rejection");
    assert_eq!(count(&db, "SELECT count(*) FROM reviews"), 2);
    assert_eq!(
        count(&db, "SELECT count(*) FROM reviews r JOIN people p ON p.id = r.changed_by WHERE p.login = 'rita'"),
        2,
        "every review is attributed"
    );

    // The expert pulls the verdicts; a later push leaves them standing.
    let verdicts = expert_hub.reviews(0).expect("the reviews");
    assert_eq!(verdicts.len(), 2);
    assert_eq!(
        verdicts[1].comment,
        "Check the balance before the transfer."
    );
    assert!(expert_hub
        .reviews(verdicts[1].id)
        .expect("newer reviews")
        .is_empty());
    store
        .annotate_step(&ids[0], 0, Some("edited after review"), None)
        .expect("annotate");
    expert_hub
        .push(&store, PushOptions::default())
        .expect("a later push");
    let rows = rita
        .episodes(&EpisodeQuery::default())
        .expect("the episodes");
    let status = |id: &str| {
        rows.iter()
            .find(|r| r.record.id == id)
            .map(|r| r.record.status)
    };
    assert_eq!(status(&ids[0]), Some(EpisodeStatus::Approved));
    assert_eq!(status(&ids[2]), Some(EpisodeStatus::Rejected));
}
