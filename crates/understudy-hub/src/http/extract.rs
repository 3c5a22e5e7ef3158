//! The two extractors every route uses: [`Caller`], the person a bearer
//! token belongs to, and [`Body`], a JSON body read within the size limit.
//! Both answer `{code, message}` errors, and run before a handler stores
//! anything.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts};
use serde::de::DeserializeOwned;

use super::AppState;
use crate::error::{codes, ApiError};
use crate::people::{self, Person};

/// The signed-in person.
pub(crate) struct Caller(pub Person);

/// The signed-in person and the id of the token they called with (to sign
/// that token out).
pub(crate) struct SignedIn {
    pub person: Person,
    pub token_id: i64,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        let s = SignedIn::from_request_parts(parts, state).await?;
        Ok(Caller(s.person))
    }
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<SignedIn, ApiError> {
        let given = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| rest.trim().to_string())
            });
        let Some(token) = given.filter(|t| !t.is_empty()) else {
            return Err(ApiError::new(
                401,
                codes::UNAUTHORIZED,
                "this hub needs `Authorization: Bearer <token>`: sign in (POST /v1/sessions) or ask an admin for a token",
            ));
        };
        let db = state.pool.get().await?;
        let (person, token_id) = people::by_token(&db, &token).await?;
        Ok(SignedIn { person, token_id })
    }
}

/// A JSON body of type `T`.
pub(crate) struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Body<T>, ApiError> {
        let given = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let essence = given
            .as_deref()
            .and_then(|v| v.split(';').next())
            .map(str::trim)
            .unwrap_or("");
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(ApiError::new(
                415,
                codes::UNSUPPORTED_MEDIA_TYPE,
                match given {
                    Some(v) => format!(
                        "a body must be sent as `Content-Type: application/json`, not `{v}`"
                    ),
                    None => "a body must be sent as `Content-Type: application/json`".to_string(),
                },
            ));
        }
        let limit = state.max_body_bytes;
        let too_large = || {
            ApiError::new(
                413,
                codes::PAYLOAD_TOO_LARGE,
                format!("the body is larger than the {limit} bytes this hub accepts; push fewer episodes per batch"),
            )
        };
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let bytes = axum::body::to_bytes(req.into_body(), limit)
            .await
            .map_err(|_| too_large())?;
        // Through serde_path_to_error, so a wrong value is named by where it
        // is (`overrides[0].override.met`), not only by line and column.
        let mut json = serde_json::Deserializer::from_slice(&bytes);
        serde_path_to_error::deserialize(&mut json)
            .map(Body)
            .map_err(|e| {
                let at = e.path().to_string();
                let what = e.into_inner();
                ApiError::bad_request(if at.is_empty() || at == "." {
                    format!("the body is not the JSON this route expects: {what}")
                } else {
                    format!("the body is not the JSON this route expects: at `{at}`: {what}")
                })
            })
    }
}
