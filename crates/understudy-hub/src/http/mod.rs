//! The hub's HTTP API (see `docs/hub.md`): JSON over HTTP/1.1, every route
//! but health and sign-in behind a bearer token, every error a
//! `{code, message}` body with a status.

mod extract;
mod limits;

use std::future::Future;
use std::net::SocketAddr;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use deadpool_postgres::Pool;
use serde::Deserialize;
use understudy::export::{self, ExportOptions, Format, Source};
use understudy::store::Review;

use crate::episodes;
use crate::error::{codes, ApiError, HubError};
use crate::people::{self, NewPerson, Person};
use crate::roles::Role;
use crate::wire::*;
use extract::{Body, Caller, SignedIn};
pub use limits::{
    serve_listener, Limits, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS,
};

/// What a hub server needs.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// `postgres://user[:password]@host[:port]/dbname`.
    pub database_url: String,
    /// Where to listen, e.g. `127.0.0.1:8600` or `0.0.0.0:8600`.
    pub listen: SocketAddr,
    /// Body size, header read time and connection limits.
    pub limits: Limits,
}

/// What every handler gets.
#[derive(Clone)]
pub(crate) struct AppState {
    pub pool: Pool,
    pub max_body_bytes: usize,
}

/// The API's routes over a database pool.
pub fn router(pool: Pool, max_body_bytes: usize) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/sessions", post(sign_in))
        .route("/v1/me", get(me))
        .route("/v1/people", post(add_person))
        .route("/v1/sessions/current/revoke", post(sign_out))
        .route(
            "/v1/people/{login}/tokens",
            get(list_tokens).post(issue_token),
        )
        .route("/v1/tokens/{id}/revoke", post(revoke_token))
        .route("/v1/rubrics", get(list_rubrics).post(add_rubric))
        .route("/v1/sync/grades", post(push_grades))
        .route("/v1/scores", get(list_scores))
        .route("/v1/judgments", get(list_judgments))
        .route("/v1/overrides", get(list_overrides))
        .route("/v1/grades", get(grades_after))
        .route("/v1/sync/runs", get(run_changes))
        .route("/v1/sync/grading", get(grading_changes))
        .route("/v1/sync/reviews", get(review_changes))
        .route("/v1/sync/grading/runs", post(grading_of_runs))
        .route("/v1/worlds", get(list_worlds).post(upload_world))
        .route("/v1/worlds/{hash}", get(world_files))
        .route("/v1/assignments", get(list_assignments).post(assign))
        .route("/v1/sync/state", post(sync_state))
        .route("/v1/sync/push", post(push))
        .route("/v1/episodes", get(list_episodes))
        .route("/v1/episodes/{id}/reviews", post(review))
        .route("/v1/reviews", get(list_reviews))
        .route("/v1/export", get(export_native))
        .route("/v1/export/episodes", post(export_by_id))
        .fallback(|| async { ApiError::not_found("no such route; see docs/hub.md") })
        .with_state(AppState {
            pool,
            max_body_bytes,
        })
}

/// Migrates the database, listens on `config.listen`, prints
/// `understudy hub listening on http://ADDR` to standard output, and serves
/// until `shutdown` completes.
pub async fn serve(
    config: &HubConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), HubError> {
    let pool = crate::db::open(&config.database_url).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| HubError::Io {
            what: format!("listening on {}", config.listen),
            source: e,
        })?;
    let bound = listener.local_addr().map_err(|e| HubError::Io {
        what: "the bound address".into(),
        source: e,
    })?;
    println!("understudy hub listening on http://{bound}");
    serve_listener(
        listener,
        router(pool, config.limits.max_body_bytes),
        config.limits,
        shutdown,
    )
    .await;
    Ok(())
}

type Answer<T> = Result<Json<T>, ApiError>;

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "ok": true }))
}

async fn sign_in(State(s): State<AppState>, Body(b): Body<SignIn>) -> Answer<Issued> {
    let db = s.pool.get().await?;
    let person = people::sign_in(&db, &b.login, &b.password).await?;
    let (token, token_id) = people::issue_token(&db, person.id, "sign-in", Some(person.id)).await?;
    Ok(Json(Issued {
        token,
        token_id,
        person,
    }))
}

async fn me(Caller(p): Caller) -> Json<Person> {
    Json(p)
}

fn admin_only(p: &Person, what: &str) -> Result<(), ApiError> {
    if p.role == Role::Admin {
        Ok(())
    } else {
        Err(p.refused(&format!("only admins {what}")))
    }
}

async fn add_person(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<NewPerson>,
) -> Answer<Person> {
    admin_only(&p, "add people")?;
    let mut db = s.pool.get().await?;
    Ok(Json(people::add(&mut db, &b, Some(p.id)).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenRequest {
    #[serde(default)]
    label: String,
}

async fn issue_token(
    State(s): State<AppState>,
    Caller(p): Caller,
    Path(login): Path<String>,
    Body(b): Body<TokenRequest>,
) -> Answer<Issued> {
    if p.login != login {
        admin_only(&p, "issue tokens for other people")?;
    }
    let db = s.pool.get().await?;
    let person = people::by_login(&**db, &login).await?;
    let (token, token_id) = people::issue_token(&db, person.id, &b.label, Some(p.id)).await?;
    Ok(Json(Issued {
        token,
        token_id,
        person,
    }))
}

async fn list_tokens(
    State(s): State<AppState>,
    Caller(p): Caller,
    Path(login): Path<String>,
) -> Answer<Vec<TokenInfo>> {
    if p.login != login {
        admin_only(&p, "list other people's tokens")?;
    }
    let db = s.pool.get().await?;
    let person = people::by_login(&**db, &login).await?;
    Ok(Json(people::tokens(&db, person.id).await?))
}

async fn revoke_token(
    State(s): State<AppState>,
    Caller(p): Caller,
    Path(id): Path<i64>,
) -> Answer<TokenInfo> {
    let db = s.pool.get().await?;
    Ok(Json(people::revoke_token(&db, &p, id).await?))
}

/// Revokes the token the call was made with: the app's "sign out".
async fn sign_out(State(s): State<AppState>, who: SignedIn) -> Answer<TokenInfo> {
    let db = s.pool.get().await?;
    Ok(Json(
        people::revoke_token(&db, &who.person, who.token_id).await?,
    ))
}

async fn list_rubrics(
    State(s): State<AppState>,
    Caller(_): Caller,
    q: Result<Query<RubricQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<understudy::store::RubricVersion>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::rubrics(&db, &q).await?))
}

async fn add_rubric(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<RubricUpload>,
) -> Answer<understudy::store::RubricVersion> {
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::add_rubric(&db, &p, &b).await?))
}

async fn push_grades(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<GradesBatch>,
) -> Answer<GradesSummary> {
    let mut db = s.pool.get().await?;
    Ok(Json(crate::grades::push(&mut db, &p, &b).await?))
}

async fn list_scores(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<episodes::Query>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<understudy::store::StoredScore>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::scores(&db, &p, &q).await?))
}

async fn list_judgments(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<episodes::Query>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<EpisodeJudgment>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::judgments(&db, &p, &q).await?))
}

async fn list_overrides(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<episodes::Query>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<EpisodeOverride>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::overrides(&db, &p, &q).await?))
}

async fn grades_after(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<GradesAfter>, axum::extract::rejection::QueryRejection>,
) -> Answer<NewGrades> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::after(&db, &p, &q).await?))
}

async fn run_changes(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<ChangeCursor>, axum::extract::rejection::QueryRejection>,
) -> Answer<RunChanges> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut db = s.pool.get().await?;
    Ok(Json(episodes::changes(&mut db, &p, q).await?))
}

async fn review_changes(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<ChangeCursor>, axum::extract::rejection::QueryRejection>,
) -> Answer<ReviewChanges> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut db = s.pool.get().await?;
    Ok(Json(episodes::review_changes(&mut db, &p, q).await?))
}

async fn grading_changes(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<ChangeCursor>, axum::extract::rejection::QueryRejection>,
) -> Answer<GradingChanges> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut db = s.pool.get().await?;
    Ok(Json(crate::grades::changes(&mut db, &p, q).await?))
}

async fn grading_of_runs(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<EpisodeIds>,
) -> Answer<RunsGrading> {
    check_ids(&b.ids)?;
    let db = s.pool.get().await?;
    Ok(Json(crate::grades::of_runs(&db, &p, &b.ids).await?))
}

/// Refuses more ids than one request may name, or an empty one.
fn check_ids(ids: &[String]) -> Result<(), ApiError> {
    if ids.len() > MAX_EXPORT_IDS {
        return Err(ApiError::bad_request(format!(
            "ids: {} episodes asked for at once; ask for {MAX_EXPORT_IDS} at most",
            ids.len()
        )));
    }
    if let Some(n) = ids.iter().position(|id| id.trim().is_empty()) {
        return Err(ApiError::bad_request(format!(
            "ids[{n}]: an empty episode id"
        )));
    }
    Ok(())
}

async fn list_worlds(State(s): State<AppState>, Caller(_): Caller) -> Answer<Vec<WorldInfo>> {
    let db = s.pool.get().await?;
    Ok(Json(crate::worlds::list(&db).await?))
}

async fn upload_world(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<WorldUpload>,
) -> Answer<WorldInfo> {
    let mut db = s.pool.get().await?;
    Ok(Json(crate::worlds::upload(&mut db, &p, b).await?))
}

async fn world_files(
    State(s): State<AppState>,
    Caller(_): Caller,
    Path(hash): Path<String>,
) -> Answer<WorldUpload> {
    let db = s.pool.get().await?;
    Ok(Json(crate::worlds::files(&db, &hash).await?))
}

async fn list_assignments(State(s): State<AppState>, Caller(p): Caller) -> Answer<Vec<Assignment>> {
    let db = s.pool.get().await?;
    Ok(Json(crate::assignments::list(&db, &p).await?))
}

async fn assign(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<NewAssignment>,
) -> Answer<Vec<Assignment>> {
    let mut db = s.pool.get().await?;
    Ok(Json(crate::assignments::create(&mut db, &p, &b).await?))
}

async fn sync_state(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<SyncState>,
) -> Answer<Stale> {
    if !p.role.pushes() {
        return Err(p.refused("only experts and admins push episodes"));
    }
    let db = s.pool.get().await?;
    let ids: Vec<String> = b.episodes.iter().map(|e| e.id.clone()).collect();
    let have: std::collections::HashMap<String, String> = db
        .query(
            "SELECT id, digest FROM episodes WHERE id = ANY($1)",
            &[&ids],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(Json(Stale {
        stale: b
            .episodes
            .into_iter()
            .filter(|e| have.get(&e.id) != Some(&e.digest))
            .map(|e| e.id)
            .collect(),
    }))
}

async fn push(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<PushBatch>,
) -> Answer<PushSummary> {
    let mut db = s.pool.get().await?;
    Ok(Json(crate::push::push(&mut db, &p, &b).await?))
}

async fn list_episodes(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<episodes::Query>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<EpisodeRow>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(episodes::list(&db, &p, &q).await?))
}

async fn review(
    State(s): State<AppState>,
    Caller(p): Caller,
    Path(id): Path<String>,
    Body(b): Body<ReviewRequest>,
) -> Answer<Review> {
    let mut db = s.pool.get().await?;
    Ok(Json(episodes::add_review(&mut db, &p, &id, &b).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct After {
    #[serde(default)]
    after: i64,
}

async fn list_reviews(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<After>, axum::extract::rejection::QueryRejection>,
) -> Answer<Vec<Review>> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    Ok(Json(episodes::reviews(&db, &p, q.after).await?))
}

/// The episodes as `understudy.episode/1` lines, written by the engine's
/// own exporter: the client turns them into any format locally.
async fn export_native(
    State(s): State<AppState>,
    Caller(p): Caller,
    q: Result<Query<episodes::Query>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let db = s.pool.get().await?;
    let bundles = episodes::bundles(&db, &p, &q).await?;
    drop(db);
    native_lines(bundles).await
}

/// [`export_native`] of the episodes named (those the caller sees; ids
/// the hub lacks are left out): an app pulls only what it lacks.
async fn export_by_id(
    State(s): State<AppState>,
    Caller(p): Caller,
    Body(b): Body<EpisodeIds>,
) -> Result<Response, ApiError> {
    check_ids(&b.ids)?;
    let db = s.pool.get().await?;
    let bundles = episodes::bundles_by_id(&db, &p, &b.ids).await?;
    drop(db);
    native_lines(bundles).await
}

/// Native lines of `bundles`, written off the async threads.
async fn native_lines(bundles: Vec<export::EpisodeBundle>) -> Result<Response, ApiError> {
    let body = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, ApiError> {
        let mut out = Vec::new();
        let options = ExportOptions {
            format: Format::Native,
            ..ExportOptions::default()
        };
        export::write_jsonl(
            &Source::Episodes(&bundles),
            None,
            &options,
            &mut out,
            &|| {},
        )
        .map_err(|e| ApiError::new(500, codes::DATABASE, format!("writing the export: {e}")))?;
        Ok(out)
    })
    .await
    .map_err(|e| ApiError::new(500, codes::DATABASE, format!("writing the export: {e}")))??;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}
