//! A local stand-in of an agent's HTTP API on 127.0.0.1: every request is kept (method,
//! path, body) and answered by the test's own function, so a test can see which earlier
//! turns a real CLI sends after a move.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: String,
}

/// An answer: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl Reply {
    pub fn json(body: String) -> Reply {
        Reply { status: 200, content_type: "application/json", body }
    }

    pub fn events(body: String) -> Reply {
        Reply { status: 200, content_type: "text/event-stream", body }
    }

    pub fn not_found() -> Reply {
        Reply { status: 404, content_type: "application/json", body: "{}".into() }
    }
}

type Answer = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct StandIn {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StandIn {
    pub fn start(answer: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let answer: Arc<Answer> = Arc::new(answer);
        let thread = {
            let (requests, stop) = (Arc::clone(&requests), Arc::clone(&stop));
            std::thread::spawn(move || {
                // Bounded: the server gives up after ten minutes whatever happens.
                let deadline = Instant::now() + Duration::from_secs(600);
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (requests, answer) = (Arc::clone(&requests), Arc::clone(&answer));
                            std::thread::spawn(move || {
                                let _ = serve(stream, &requests, &*answer);
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        };
        StandIn { port, requests, stop, thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The bodies of the requests whose path contains `part`.
    pub fn bodies(&self, part: &str) -> Vec<String> {
        self.requests().into_iter().filter(|r| r.path.contains(part)).map(|r| r.body).collect()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One HTTP/1.1 connection: requests until the client closes it.
fn serve(stream: TcpStream, requests: &Mutex<Vec<Request>>, answer: &Answer) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    for _ in 0..100 {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        let mut chunked = false;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut chunk = vec![0; n + 2];
                reader.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else {
            body.resize(length, 0);
            reader.read_exact(&mut body)?;
        }
        let mut parts = request_line.split_whitespace();
        let request = Request {
            method: parts.next().unwrap_or("").to_string(),
            path: parts.next().unwrap_or("").to_string(),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        let reply = answer(&request);
        requests.lock().unwrap().push(request);
        let reason = if reply.status == 200 { "OK" } else { "Not Found" };
        write!(
            out,
            "HTTP/1.1 {} {reason}\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n{}",
            reply.status,
            reply.content_type,
            reply.body.len(),
            reply.body
        )?;
        out.flush()?;
    }
    Ok(())
}

/// What every stand-in model answers.
pub const REPLY: &str = "STAND-IN-REPLY";
/// A prompt holding this is answered by [`messages_api`] after 8 s.
pub const SLOW: &str = "SLOW-ANSWER-PLEASE";

/// An OpenAI-compatible chat-completions API: every chat call gets one short answer,
/// streamed or not; every other call a 404.
pub fn chat_completions() -> StandIn {
    StandIn::start(|request| {
        if !request.path.ends_with("/chat/completions") {
            return Reply::not_found();
        }
        let streamed = serde_json::from_str::<serde_json::Value>(&request.body)
            .is_ok_and(|b| b["stream"] == serde_json::Value::Bool(true));
        if !streamed {
            return Reply::json(
                serde_json::json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "mock-model",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
                .to_string(),
            );
        }
        let chunks = [
            serde_json::json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "mock-model",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": null}]}),
            serde_json::json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "mock-model",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}),
        ];
        Reply::events(
            chunks.iter().map(|c| format!("data: {c}\n\n")).collect::<String>() + "data: [DONE]\n\n",
        )
    })
}

/// The Messages API of Claude Code: every message call gets one short streamed answer
/// (a plain one when not streamed), token counts a small number, anything else a 404.
pub fn messages_api() -> StandIn {
    StandIn::start(|request| {
        // A slow answer keeps the CLI alive past the 5 s after which it runs its
        // retention cleanup (which a quick `-p` run exits before).
        if request.body.contains(SLOW) {
            std::thread::sleep(Duration::from_secs(8));
        }
        if request.path.contains("count_tokens") {
            return Reply::json(serde_json::json!({"input_tokens": 10}).to_string());
        }
        if !request.path.starts_with("/v1/messages") {
            return Reply::not_found();
        }
        let streamed = serde_json::from_str::<serde_json::Value>(&request.body)
            .is_ok_and(|b| b["stream"] == serde_json::Value::Bool(true));
        if !streamed {
            return Reply::json(
                serde_json::json!({"id": "msg_standin", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": REPLY}],
                    "stop_reason": "end_turn", "stop_sequence": null,
                    "usage": {"input_tokens": 10, "output_tokens": 5}})
                .to_string(),
            );
        }
        let events = [
            (
                "message_start",
                serde_json::json!({"type": "message_start", "message": {"id": "msg_standin",
                "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                serde_json::json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                serde_json::json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": REPLY}}),
            ),
            ("content_block_stop", serde_json::json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                serde_json::json!({"type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", serde_json::json!({"type": "message_stop"})),
        ];
        Reply::events(events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect())
    })
}
