//! MCP's stdio framing, bounded: one JSON-RPC message per line.
//!
//! rmcp's own stdio transport reads a line of any length into memory and
//! drops lines that are not JSON without a word. This one holds a line to
//! [`crate::stdio::MAX_LINE`] bytes (the limit of the JSON-lines protocol):
//! a longer line is skipped to its end and answered with an
//! `Invalid Request` error; a line that is not JSON gets `Parse error`,
//! and JSON that is not an MCP message `Invalid Request` (its `id` echoed),
//! each with `id: null` when it has none. Notifications MCP does not know
//! are ignored, as JSON-RPC requires (nothing answers a notification).

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// A line read, or one that was too long.
enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// The transport over a reader and a writer (standard input and output).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read. Kept across calls: rmcp drops a `receive` in
    /// progress whenever it has something to send, and a partly read line
    /// must not be lost.
    line: Vec<u8>,
    /// The current line passed the limit: discard it up to its newline.
    skipping: bool,
    max_line: usize,
    write: Arc<Mutex<W>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W, max_line: usize) -> Self {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
            max_line,
            write: Arc::new(Mutex::new(write)),
        }
    }

    /// The next whole line (without its newline), or `None` at the end of
    /// input. Cancellation-safe: everything read is kept in `self`.
    async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let buf = self.read.fill_buf().await?;
            if buf.is_empty() {
                // End of input; an unterminated last line is still a line.
                if self.skipping {
                    self.skipping = false;
                    return Ok(Some(Line::TooLong));
                }
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Text(std::mem::take(&mut self.line))));
            }
            let (chunk, used, ends) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if !self.skipping {
                if self.line.len() + chunk.len() > self.max_line {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            self.read.consume(used);
            if ends {
                if std::mem::take(&mut self.skipping) {
                    return Ok(Some(Line::TooLong));
                }
                return Ok(Some(Line::Text(std::mem::take(&mut self.line))));
            }
        }
    }

    /// Answers a line that carried no message, without holding up reading.
    fn answer(&self, error: ErrorData, id: Option<RequestId>) {
        let reply = ServerJsonRpcMessage::error(error, id);
        let write = Arc::clone(&self.write);
        // Spawned so that a `receive` dropped midway cannot cut the line.
        tokio::spawn(async move {
            if let Err(e) = write_message(&write, &reply).await {
                tracing::debug!("cannot answer a bad MCP line: {e}");
            }
        });
    }
}

/// The error a line is answered with, and the `id` it echoes.
pub type Refusal = Box<(ErrorData, Option<RequestId>)>;

/// What a line holds: a message (`None` for nothing to act on), or the
/// error to answer it with.
pub fn parse_line(line: &[u8]) -> Result<Option<ClientJsonRpcMessage>, Refusal> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        Box::new((
            ErrorData::parse_error(format!("Parse error: the line is not JSON: {e}"), None),
            None,
        ))
    })?;
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let is_notification = value.get("method").is_some() && value.get("id").is_none();
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(m) => Ok(Some(m)),
        Err(_) if is_notification => Ok(None),
        Err(e) => Err(Box::new((
            ErrorData::invalid_request(
                format!("Invalid Request: not a JSON-RPC 2.0 message of MCP: {e}"),
                None,
            ),
            id,
        ))),
    }
}

async fn write_message<W: AsyncWrite + Unpin>(
    write: &Mutex<W>,
    message: &ServerJsonRpcMessage,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    let mut w = write.lock().await;
    w.write_all(&bytes).await?;
    w.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move { write_message(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.next_line().await {
                Ok(Some(l)) => l,
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!("cannot read MCP input: {e}");
                    return None;
                }
            };
            match line {
                Line::TooLong => self.answer(
                    ErrorData::invalid_request(
                        format!(
                            "Invalid Request: a message line is longer than {} bytes",
                            self.max_line
                        ),
                        None,
                    ),
                    None,
                ),
                Line::Text(text) => match parse_line(&text) {
                    Ok(Some(m)) => return Some(m),
                    Ok(None) => {}
                    Err(refusal) => {
                        let (error, id) = *refusal;
                        self.answer(error, id)
                    }
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}
