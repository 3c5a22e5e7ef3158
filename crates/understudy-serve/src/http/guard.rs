//! Who may drive the HTTP server: the checks every request passes before
//! any route runs.
//!
//! The server listens on loopback, but loopback is not a trust boundary
//! against a browser: any web page the user opens can send requests to
//! `127.0.0.1`, and through DNS rebinding (a name of the attacker's that
//! resolves to `127.0.0.1`) even read the answers. So:
//!
//! - **Host** must name the address the server is bound to (its IP, or
//!   `localhost` when bound to loopback, or a name given with
//!   `--allow-host`), with the bound port: a rebound name is refused.
//! - **Origin**, when present, must be loopback (`http://localhost:…`,
//!   `http://127.0.0.1:…`, `http://[::1]:…`): browsers send it on every
//!   cross-site request; agents' HTTP libraries do not send it at all.
//! - **Content-Type** of a POST must be `application/json`: a page can
//!   send `text/plain` or a form without asking, but `application/json`
//!   from another origin needs a CORS preflight, which this server never
//!   grants.
//! - **Authorization: Bearer TOKEN**, when the server was given a token.

use std::net::{IpAddr, SocketAddr};

use axum::http::{header, request, Method};

use crate::protocol::{codes, ApiError};

/// The checks, for one bound address.
#[derive(Debug, Clone)]
pub struct Guard {
    port: u16,
    /// The IP literal a `Host` may name; `None` when bound to every
    /// address (`0.0.0.0`, `::`), where any IP literal will do.
    ip: Option<IpAddr>,
    /// Names a `Host` may carry besides IP literals, lowercase.
    names: Vec<String>,
    token: Option<String>,
}

impl Guard {
    /// Checks for a server bound to `bound`, with an optional bearer
    /// `token` and extra host names (`--allow-host`).
    pub fn new(bound: SocketAddr, token: Option<String>, extra_hosts: &[String]) -> Guard {
        let ip = bound.ip();
        let mut names: Vec<String> = extra_hosts
            .iter()
            .map(|h| normalize_name(h))
            .filter(|h| !h.is_empty())
            .collect();
        if ip.is_loopback() || ip.is_unspecified() {
            names.push("localhost".into());
        }
        Guard {
            port: bound.port(),
            ip: (!ip.is_unspecified()).then_some(ip),
            names,
            token: token.filter(|t| !t.is_empty()),
        }
    }

    /// Whether requests need a bearer token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// `Ok` when the request may go on to its route.
    pub fn check(&self, parts: &request::Parts) -> Result<(), ApiError> {
        self.check_host(parts)?;
        check_origin(parts)?;
        self.check_token(parts)?;
        if parts.method == Method::POST {
            check_content_type(parts)?;
        }
        Ok(())
    }

    fn check_host(&self, parts: &request::Parts) -> Result<(), ApiError> {
        let refuse = |why: String| {
            ApiError::new(
                403,
                codes::FORBIDDEN_HOST,
                format!("{why}; this server answers only requests addressed to it (see `Host` in docs/agent-api.md)"),
            )
        };
        let Some(value) = parts.headers.get(header::HOST) else {
            return Err(refuse("the request has no `Host` header".into()));
        };
        let text = value
            .to_str()
            .map_err(|_| refuse("the `Host` header is not text".into()))?;
        let (host, port) =
            split_host(text).ok_or_else(|| refuse(format!("`Host: {text}` is not a host")))?;
        if port.unwrap_or(80) != self.port {
            return Err(refuse(format!("`Host: {text}` names another port")));
        }
        let allowed = match host.parse::<IpAddr>() {
            Ok(ip) => match self.ip {
                None => true,
                Some(bound) => ip == bound || (bound.is_loopback() && ip.is_loopback()),
            },
            Err(_) => self.names.contains(&normalize_name(host)),
        };
        if allowed {
            Ok(())
        } else {
            Err(refuse(format!("`Host: {text}` is not this server")))
        }
    }

    fn check_token(&self, parts: &request::Parts) -> Result<(), ApiError> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            });
        match given {
            Some(g) if same_secret(g.as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(ApiError::new(
                401,
                codes::UNAUTHORIZED,
                "the bearer token is wrong",
            )),
            None => Err(ApiError::new(
                401,
                codes::UNAUTHORIZED,
                "this server needs `Authorization: Bearer <token>` (the token given to `serve --token` or $UNDERSTUDY_TOKEN)",
            )),
        }
    }
}

fn check_origin(parts: &request::Parts) -> Result<(), ApiError> {
    let Some(value) = parts.headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let text = value.to_str().unwrap_or("");
    if is_loopback_origin(text) {
        return Ok(());
    }
    Err(ApiError::new(
        403,
        codes::FORBIDDEN_ORIGIN,
        format!("requests from web pages are refused (`Origin: {text}`); only loopback origins may call this server"),
    ))
}

fn check_content_type(parts: &request::Parts) -> Result<(), ApiError> {
    let given = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let essence = given
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    if essence.eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    Err(ApiError::new(
        415,
        codes::UNSUPPORTED_MEDIA_TYPE,
        match given {
            Some(v) => {
                format!("a POST body must be sent as `Content-Type: application/json`, not `{v}`")
            }
            None => "a POST body must be sent as `Content-Type: application/json`".to_string(),
        },
    ))
}

/// `http(s)://host[:port]` with a loopback host.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    match split_host(rest) {
        Some((host, _)) => match host.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback(),
            Err(_) => normalize_name(host) == "localhost",
        },
        None => false,
    }
}

/// `host[:port]` or `[v6][:port]` → the host (brackets removed) and port.
fn split_host(text: &str) -> Option<(&str, Option<u16>)> {
    let text = text.trim();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (host, port)
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    if host.is_empty() || host.contains(['/', '@', ' ', '[', ']']) {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    Some((host, port))
}

/// A host name as compared: lowercase, without a trailing dot.
fn normalize_name(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// Compares secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(method: &str, headers: &[(&str, &str)]) -> request::Parts {
        let mut b = Request::builder().method(method).uri("/step");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).expect("request").into_parts().0
    }

    fn code(g: &Guard, method: &str, headers: &[(&str, &str)]) -> Option<&'static str> {
        g.check(&parts(method, headers)).err().map(|e| e.code)
    }

    #[test]
    fn hosts_must_name_the_bound_address() {
        let g = Guard::new("127.0.0.1:8000".parse().unwrap(), None, &[]);
        let json = ("content-type", "application/json");
        for ok in [
            "127.0.0.1:8000",
            "localhost:8000",
            "LOCALHOST.:8000",
            "[::1]:8000",
        ] {
            assert_eq!(code(&g, "POST", &[("host", ok), json]), None, "{ok}");
        }
        for bad in [
            "attacker.example:8000",
            "127.0.0.1:9000",
            "127.0.0.1",
            "10.0.0.1:8000",
            "localhost:8000@evil",
            "",
        ] {
            assert_eq!(
                code(&g, "POST", &[("host", bad), json]),
                Some(codes::FORBIDDEN_HOST),
                "{bad}"
            );
        }
        assert_eq!(code(&g, "GET", &[]), Some(codes::FORBIDDEN_HOST));
        let any = Guard::new(
            "0.0.0.0:80".parse().unwrap(),
            None,
            &["Box.Internal".into()],
        );
        for ok in ["10.1.2.3", "10.1.2.3:80", "box.internal", "localhost"] {
            assert_eq!(code(&any, "GET", &[("host", ok)]), None, "{ok}");
        }
        assert_eq!(
            code(&any, "GET", &[("host", "rebind.example")]),
            Some(codes::FORBIDDEN_HOST)
        );
    }

    #[test]
    fn origins_must_be_loopback_and_posts_json() {
        let g = Guard::new("127.0.0.1:8000".parse().unwrap(), None, &[]);
        let host = ("host", "127.0.0.1:8000");
        let json = ("content-type", "application/json; charset=utf-8");
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1:8000",
            "https://[::1]",
        ] {
            assert_eq!(
                code(&g, "POST", &[host, json, ("origin", ok)]),
                None,
                "{ok}"
            );
        }
        for bad in [
            "http://evil.example",
            "null",
            "file://",
            "http://127.0.0.1.evil.example",
        ] {
            assert_eq!(
                code(&g, "GET", &[host, ("origin", bad)]),
                Some(codes::FORBIDDEN_ORIGIN),
                "{bad}"
            );
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            assert_eq!(
                code(&g, "POST", &[host, ("content-type", bad)]),
                Some(codes::UNSUPPORTED_MEDIA_TYPE)
            );
        }
        assert_eq!(
            code(&g, "POST", &[host]),
            Some(codes::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(code(&g, "GET", &[host]), None, "a GET has no body to type");
    }

    #[test]
    fn a_token_is_required_once_set() {
        let g = Guard::new(
            "127.0.0.1:8000".parse().unwrap(),
            Some("s3cret".into()),
            &[],
        );
        let host = ("host", "127.0.0.1:8000");
        assert_eq!(code(&g, "GET", &[host]), Some(codes::UNAUTHORIZED));
        assert_eq!(
            code(&g, "GET", &[host, ("authorization", "Bearer nope")]),
            Some(codes::UNAUTHORIZED)
        );
        assert_eq!(
            code(&g, "GET", &[host, ("authorization", "Basic s3cret")]),
            Some(codes::UNAUTHORIZED)
        );
        assert_eq!(
            code(&g, "GET", &[host, ("authorization", "bearer s3cret")]),
            None
        );
        assert!(!Guard::new("127.0.0.1:1".parse().unwrap(), Some(String::new()), &[]).has_token());
    }
}
