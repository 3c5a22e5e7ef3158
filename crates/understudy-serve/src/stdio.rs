//! JSON lines over standard input and output: one request per line, one
//! response per line, in order. The cheapest way for a training process to
//! drive environments: no sockets, no ports, one child process.
//!
//! Request: `{"id": <any>, "op": "step", ...fields}`. Response:
//! `{"id": <same>, "result": {...}}` or
//! `{"id": <same>, "error": {"code", "message", "status"}}`. `id` is echoed
//! as given and may be left out.
//!
//! Requests are handled one at a time on the calling thread, which must not
//! be an async worker: a step blocks on the engine and on the store.

use std::io::{BufRead, Write};

use serde::Serialize;
use serde_json::Value;

use super::protocol::{codes, ApiError, Fields, Op};
use super::service::{Reply, Server};

/// The longest request line accepted; longer ones are answered with an
/// error and skipped, so one bad line cannot exhaust memory.
pub const MAX_LINE: usize = 16 << 20;

#[derive(Serialize)]
struct Response<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Reply>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

/// Serves requests from `input` until it ends. The caller closes the
/// sessions afterwards (see [`Server::close_all`]): a client that goes away
/// mid-episode leaves its episodes abandoned, every step kept.
pub fn serve_lines(
    server: &Server,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut input, MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let response = if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
            skip_rest_of_line(&mut input)?;
            error_line(
                None,
                &ApiError::invalid_request(format!(
                    "the request line is longer than {MAX_LINE} bytes"
                )),
            )
        } else {
            let line = trim_line(&buf);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            handle_line(server, line)
        };
        output.write_all(&response)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

fn trim_line(buf: &[u8]) -> &[u8] {
    let mut line = buf;
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    line
}

fn skip_rest_of_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let (done, used) = {
            let chunk = input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(());
            }
            match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, chunk.len()),
            }
        };
        input.consume(used);
        if done {
            return Ok(());
        }
    }
}

/// Handles one request line and returns the response line (no newline).
pub fn handle_line(server: &Server, line: &[u8]) -> Vec<u8> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return error_line(
                None,
                &ApiError::invalid_json(format!("the request line is not valid JSON: {e}")),
            )
        }
    };
    let Value::Object(mut map) = value else {
        return error_line(
            None,
            &ApiError::invalid_request("a request must be a JSON object with an `op`"),
        );
    };
    let id = map.remove("id");
    let op = match map.remove("op") {
        Some(Value::String(name)) => match Op::parse(&name) {
            Some(op) => op,
            None => {
                return error_line(
                    id.as_ref(),
                    &ApiError::new(
                        400,
                        codes::UNKNOWN_OP,
                        format!("unknown op {name:?}; expected one of {}", op_list()),
                    ),
                )
            }
        },
        _ => {
            return error_line(
                id.as_ref(),
                &ApiError::invalid_request(format!(
                    "every request needs `op` as text: one of {}",
                    op_list()
                )),
            )
        }
    };
    let result = Fields::from_value(op, Value::Object(map)).and_then(|f| server.handle(op, f));
    match result {
        Ok(reply) => to_line(&Response {
            id: id.as_ref(),
            result: Some(reply),
            error: None,
        }),
        Err(e) => error_line(id.as_ref(), &e),
    }
}

fn op_list() -> String {
    Op::ALL.map(Op::name).join(", ")
}

fn error_line(id: Option<&Value>, e: &ApiError) -> Vec<u8> {
    to_line(&Response {
        id,
        result: None,
        error: Some(e.to_json()),
    })
}

fn to_line(r: &Response<'_>) -> Vec<u8> {
    serde_json::to_vec(r).unwrap_or_else(|e| {
        format!(
            "{{\"error\":{{\"code\":\"internal\",\"message\":\"cannot encode the response: {}\",\"status\":500}}}}",
            e.to_string().replace('"', "'")
        )
        .into_bytes()
    })
}
