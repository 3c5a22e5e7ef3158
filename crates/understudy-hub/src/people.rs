//! People, their passwords and their tokens: the admin's bootstrap
//! (`understudy hub user add`, `understudy hub token`) and what the API's
//! sign-in and bearer check read.
//!
//! Passwords are kept as Argon2id hashes; tokens as the SHA-256 of the
//! token (256 random bits, shown once when issued).

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_postgres::Client;

use crate::error::{ApiError, HubError};
use crate::roles::{self, Role};
use crate::wire::TokenInfo;

/// Every issued token starts with this, so a leaked one is recognisable.
pub const TOKEN_PREFIX: &str = "ush_";

/// Someone with an account on the hub.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    pub id: i64,
    pub login: String,
    pub name: String,
    pub role: Role,
}

impl Person {
    fn from_row(r: &tokio_postgres::Row) -> Result<Person, ApiError> {
        let role: String = r.get("role");
        Ok(Person {
            id: r.get("id"),
            login: r.get("login"),
            name: r.get("name"),
            role: Role::parse(&role).ok_or_else(|| {
                ApiError::new(
                    500,
                    crate::codes::DATABASE,
                    format!("unknown role `{role}` in the database"),
                )
            })?,
        })
    }
}

impl Person {
    /// `403`: "{login} is an {role}; {rule}", for a role that may not do
    /// something (`rule` says who may, e.g. "only admins assign tasks").
    pub fn refused(&self, rule: &str) -> ApiError {
        let role = self.role.as_str();
        let article = if role.starts_with(['a', 'e']) {
            "an"
        } else {
            "a"
        };
        ApiError::forbidden(format!("{} is {article} {role}; {rule}", self.login))
    }
}

/// What an admin gives to add a person.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewPerson {
    pub login: String,
    pub name: String,
    pub role: Role,
    /// Optional: a person without one signs in with tokens only.
    #[serde(default)]
    pub password: Option<String>,
}

/// Passwords shorter than this are refused.
pub const MIN_PASSWORD_CHARS: usize = 10;

fn hash_password(password: &str) -> Result<String, ApiError> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ApiError::bad_request(format!(
            "password: at least {MIN_PASSWORD_CHARS} characters are needed"
        )));
    }
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
        .map_err(|e| ApiError::new(500, crate::codes::DATABASE, format!("salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ApiError::new(500, crate::codes::DATABASE, format!("hashing: {e}")))
}

fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Adds a person (and their password, if given), attributed to `by`
/// (`None` for the bootstrap admin made on the database directly).
pub async fn add(db: &mut Client, new: &NewPerson, by: Option<i64>) -> Result<Person, ApiError> {
    let login = new.login.trim();
    if login.is_empty() || login.chars().any(char::is_whitespace) {
        return Err(ApiError::bad_request(
            "login: expected a non-empty name without spaces",
        ));
    }
    if new.name.trim().is_empty() {
        return Err(ApiError::bad_request("name: must not be empty"));
    }
    let hash = new.password.as_deref().map(hash_password).transpose()?;
    let tx = db.transaction().await?;
    let row = tx
        .query_opt(
            "INSERT INTO people (login, name, role, changed_by) VALUES ($1, $2, $3, $4) ON CONFLICT (login) DO NOTHING RETURNING id, login, name, role",
            &[&login, &new.name.trim(), &new.role.as_str(), &by],
        )
        .await?
        .ok_or_else(|| ApiError::conflict(format!("login `{login}` is taken")))?;
    let person = Person::from_row(&row)?;
    if let Some(hash) = hash {
        tx.execute(
            "INSERT INTO passwords (person_id, hash, changed_by) VALUES ($1, $2, $3)",
            &[&person.id, &hash, &by],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(person)
}

/// The person with this login.
pub async fn by_login(
    db: &impl tokio_postgres::GenericClient,
    login: &str,
) -> Result<Person, ApiError> {
    let row = db
        .query_opt(
            "SELECT id, login, name, role FROM people WHERE login = $1",
            &[&login],
        )
        .await?
        .ok_or_else(|| ApiError::not_found(format!("there is no person with login `{login}`")))?;
    Person::from_row(&row)
}

/// Issues a new token for `person`, attributed to `by`; returns the token,
/// which is not stored and cannot be shown again, and its id.
pub async fn issue_token(
    db: &Client,
    person: i64,
    label: &str,
    by: Option<i64>,
) -> Result<(String, i64), ApiError> {
    let token = format!("{TOKEN_PREFIX}{}", hex::encode(rand::random::<[u8; 32]>()));
    let id: i64 = db
        .query_one(
            "INSERT INTO tokens (person_id, token_sha256, label, changed_by) VALUES ($1, $2, $3, $4) RETURNING id",
            &[&person, &token_sha256(&token), &label, &by],
        )
        .await?
        .get(0);
    Ok((token, id))
}

/// The person a bearer token belongs to, and the token's id. A revoked
/// token is refused with when and by whom, so its holder knows to sign in
/// again rather than suspect the hub.
pub async fn by_token(db: &Client, token: &str) -> Result<(Person, i64), ApiError> {
    let row = db
        .query_opt(
            "SELECT p.id, p.login, p.name, p.role, t.id AS token_id, to_char(t.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS revoked_at, r.login AS revoked_by
             FROM tokens t JOIN people p ON p.id = t.person_id LEFT JOIN people r ON r.id = t.changed_by WHERE t.token_sha256 = $1",
            &[&token_sha256(token)],
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(
                401,
                crate::codes::UNAUTHORIZED,
                "the bearer token is not one this hub issued; sign in again or ask an admin for a token",
            )
        })?;
    if let Some(at) = row.get::<_, Option<String>>("revoked_at") {
        let by: Option<String> = row.get("revoked_by");
        return Err(ApiError::new(
            401,
            crate::codes::TOKEN_REVOKED,
            format!(
                "this token was revoked at {at}{}; it no longer signs anyone in. Sign in again or ask an admin for a new token",
                by.map(|b| format!(" by {b}")).unwrap_or_default()
            ),
        ));
    }
    Ok((Person::from_row(&row)?, row.get("token_id")))
}

const TOKEN_COLUMNS: &str = "t.id, p.login, t.label, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), to_char(t.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

fn token_info(r: &tokio_postgres::Row) -> TokenInfo {
    TokenInfo {
        id: r.get(0),
        login: r.get(1),
        label: r.get(2),
        created_at: r.get(3),
        revoked_at: r.get(4),
    }
}

/// A person's tokens, oldest first (never the tokens themselves).
pub async fn tokens(db: &Client, person: i64) -> Result<Vec<TokenInfo>, ApiError> {
    Ok(db
        .query(
            &format!("SELECT {TOKEN_COLUMNS} FROM tokens t JOIN people p ON p.id = t.person_id WHERE t.person_id = $1 ORDER BY t.id"),
            &[&person],
        )
        .await?
        .iter()
        .map(token_info)
        .collect())
}

/// Revokes token `id`, attributed to `by`: an admin revokes anyone's, a
/// person their own. Revoking a revoked token again changes nothing.
pub async fn revoke_token(db: &Client, by: &Person, id: i64) -> Result<TokenInfo, ApiError> {
    let owner: i64 = db
        .query_opt("SELECT person_id FROM tokens WHERE id = $1", &[&id])
        .await?
        .ok_or_else(|| ApiError::not_found(format!("there is no token with id {id}")))?
        .get(0);
    if owner != by.id && by.role != Role::Admin {
        return Err(ApiError::forbidden(format!(
            "token {id} is someone else's; only admins revoke other people's tokens"
        )));
    }
    db.execute(
        "UPDATE tokens SET revoked_at = now(), changed_by = $2, changed_at = now() WHERE id = $1 AND revoked_at IS NULL",
        &[&id, &by.id],
    )
    .await?;
    Ok(token_info(
        &db.query_one(
            &format!("SELECT {TOKEN_COLUMNS} FROM tokens t JOIN people p ON p.id = t.person_id WHERE t.id = $1"),
            &[&id],
        )
        .await?,
    ))
}

/// Checks a login and password; the same answer whether the login is
/// unknown, has no password, or the password is wrong.
pub async fn sign_in(db: &Client, login: &str, password: &str) -> Result<Person, ApiError> {
    let wrong = || ApiError::new(401, crate::codes::UNAUTHORIZED, "wrong login or password");
    let row = db
        .query_opt(
            "SELECT p.id, p.login, p.name, p.role, w.hash FROM people p JOIN passwords w ON w.person_id = p.id WHERE p.login = $1",
            &[&login],
        )
        .await?;
    let Some(row) = row else {
        return Err(wrong());
    };
    let stored: String = row.get("hash");
    let parsed = PasswordHash::new(&stored).map_err(|_| wrong())?;
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .map_err(|_| wrong())?;
    Person::from_row(&row)
}

/// `understudy hub user add`: connects to `url`, migrates, adds the person.
pub async fn bootstrap_add(url: &str, new: &NewPerson) -> Result<Person, HubError> {
    let (mut client, conn) = connect(url).await?;
    let person = add(&mut client, new, None).await.map_err(HubError::from);
    drop(client);
    let _ = conn.await;
    person
}

/// `understudy hub token`: issues a token for the person with `login`.
pub async fn bootstrap_token(url: &str, login: &str, label: &str) -> Result<String, HubError> {
    let (client, conn) = connect(url).await?;
    let result = async {
        let person = by_login(&client, login).await?;
        issue_token(&client, person.id, label, None)
            .await
            .map(|(token, _)| token)
    }
    .await
    .map_err(HubError::from);
    drop(client);
    let _ = conn.await;
    result
}

/// Parses a role name, naming the accepted ones when it is wrong.
pub fn parse_role(parameter: &str, value: &str) -> Result<Role, HubError> {
    Role::parse(value).ok_or_else(|| {
        HubError::Invalid(format!(
            "{parameter}: `{value}` is not a role; expected one of {}",
            roles::names()
        ))
    })
}

async fn connect(url: &str) -> Result<(Client, tokio::task::JoinHandle<()>), HubError> {
    crate::db::migrate(url).await?;
    let config: tokio_postgres::Config = url.parse().map_err(|e| HubError::Database {
        url: crate::db::redact(url),
        message: format!("{e}"),
    })?;
    let (client, connection) =
        config
            .connect(tokio_postgres::NoTls)
            .await
            .map_err(|e| HubError::Database {
                url: crate::db::redact(url),
                message: e.to_string(),
            })?;
    let handle = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok((client, handle))
}
