//! Revoking tokens: an admin revokes anyone's, a person their own (signing
//! out); a revoked token is refused with a message that says so.

use understudy_hub::Role;

use crate::support::*;

#[test]
fn a_revoked_token_is_refused_and_says_it_was_revoked() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = client(&hub.url, &person(&db, "admin", Role::Admin));
    let ada_first = person(&db, "ada", Role::Expert);
    let grace = client(&hub.url, &person(&db, "grace", Role::Expert));
    let laptop = admin.issue_token("ada", "laptop").expect("a second token");
    assert!(laptop.token_id > 0);
    let ada = client(&hub.url, &laptop.token);
    assert_eq!(ada.me().expect("the token works").login, "ada");

    let listed = admin.tokens("ada").expect("ada's tokens");
    assert_eq!(
        listed.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(),
        ["test", "laptop"]
    );
    assert!(listed.iter().all(|t| t.revoked_at.is_none()));
    let by_other = grace.tokens("ada").expect_err("grace lists ada's tokens");
    assert_eq!(by_other.code(), Some("forbidden"));
    let e = grace
        .revoke_token(laptop.token_id)
        .expect_err("grace revokes ada's");
    assert_eq!(e.code(), Some("forbidden"));
    assert!(e.to_string().contains("someone else's"), "{e}");
    assert_eq!(ada.me().expect("still works").login, "ada");
    let e = admin.revoke_token(987_654).expect_err("no such token");
    assert_eq!(e.code(), Some("not_found"));

    let revoked = admin
        .revoke_token(laptop.token_id)
        .expect("the admin revokes");
    assert!(revoked.revoked_at.is_some());
    let refused = ada.me().expect_err("a revoked token");
    assert_eq!(refused.code(), Some("token_revoked"), "{refused}");
    let text = refused.to_string();
    assert!(
        text.contains("was revoked at") && text.contains("by admin"),
        "{text}"
    );
    assert!(text.contains("Sign in again"), "{text}");
    assert_eq!(
        count(&db, "SELECT count(*) FROM tokens t JOIN people p ON p.id = t.changed_by WHERE t.revoked_at IS NOT NULL AND p.login = 'admin'"),
        1,
        "the revocation is attributed"
    );
    // Revoking again changes nothing.
    let twice = admin.revoke_token(laptop.token_id).expect("again");
    assert_eq!(twice.revoked_at, revoked.revoked_at);

    // Signing out revokes the token used, and only that one.
    let first = client(&hub.url, &ada_first);
    first.sign_out().expect("ada signs out");
    assert_eq!(
        first.me().expect_err("signed out").code(),
        Some("token_revoked")
    );
    assert_eq!(grace.me().expect("others are unaffected").login, "grace");
    // An unknown token is still told apart from a revoked one.
    let unknown = client(&hub.url, "ush_0000").me().expect_err("unknown");
    assert_eq!(unknown.code(), Some("unauthorized"));
}
