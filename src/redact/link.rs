//! A transcript's tool call and its result, which are records apart: Claude Code writes
//! the command in an assistant record's `tool_use` block (`{"type":"tool_use","id":
//! "toolu_…","name":"Bash","input":{"command":"cat ~/.vault_pass"}}`) and what it printed
//! in a later user record's `tool_result` block with the same `tool_use_id`, and again in
//! that record's `toolUseResult.stdout`. A secret a command prints alone has its name only
//! in the command, so the result's lines are read as a terminal's lines below a prompt
//! are (`below.rs`): when the command's words name a secret, its output is a value
//! position, judged by the same rules.
//!
//! [`Links`] is what a reader of a transcript carries from record to record: the calls
//! whose commands named a secret, by id. It is learned from the records in order (the
//! stream of `lokust-shell redact`), or from a chunk before the chunk is handed to a
//! redactor thread (the bundle, whose chunks are redacted in parallel: the calls are
//! learned in order by the thread that reads the file, which costs a search for `"Bash"`
//! in each chunk), or from a whole document before its lines are read.

use std::collections::{HashMap, VecDeque};

use super::below::{self, Named};

/// Calls remembered at most: a result follows its call within a few records, and only
/// calls whose commands named a secret are kept.
const MAX_CALLS: usize = 4096;

/// The tool calls of one transcript whose commands name what they print as a secret.
#[derive(Debug, Clone, Default)]
pub struct Links {
    named: HashMap<Box<str>, Named>,
    order: VecDeque<Box<str>>,
}

impl Links {
    /// Whether no call is known.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty()
    }

    /// Learns the calls in `text` (records, one a line) whose commands name a secret;
    /// returns whether there were any.
    pub fn learn(&mut self, text: &[u8]) -> bool {
        let calls = calls(text);
        let any = !calls.is_empty();
        for (id, named) in calls {
            if self.named.insert(id.clone(), named).is_none() {
                self.order.push_back(id);
            }
            if self.order.len() > MAX_CALLS
                && let Some(old) = self.order.pop_front()
            {
                self.named.remove(&old);
            }
        }
        any
    }

    /// What the call `id`'s command said of its output.
    pub(crate) fn get(&self, id: &str) -> Option<&Named> {
        self.named.get(id)
    }

    /// What the one call a record holds a result of said of its output: the context of
    /// the record's strings that hold that output apart from the result's block
    /// (`toolUseResult.stdout`). `None` when the record names no known call's id, or
    /// names several.
    pub(crate) fn of_record(&self, record: &[u8]) -> Option<Named> {
        if self.is_empty() {
            return None;
        }
        let mut ids = memchr::memmem::find_iter(record, b"\"tool_use_id\"").filter_map(|at| {
            let rest = &record[at + b"\"tool_use_id\"".len()..];
            let rest = rest.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start().strip_prefix(b"\"")?;
            let end = memchr::memchr2(b'"', b'\\', rest)?;
            std::str::from_utf8(&rest[..end]).ok()
        });
        let first = ids.next()?;
        if ids.any(|id| id != first) {
            return None;
        }
        self.get(first).cloned()
    }
}

/// The Bash calls in `text` whose commands name a secret, with what each said. Only lines
/// that hold `"Bash"` are parsed.
fn calls(text: &[u8]) -> Vec<(Box<str>, Named)> {
    let mut found = Vec::new();
    let mut last_line_end = 0;
    for at in memchr::memmem::find_iter(text, b"\"Bash\"") {
        if at < last_line_end {
            continue;
        }
        let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        last_line_end = end;
        let line = &text[start..end];
        if memchr::memmem::find(line, b"tool_use").is_none() {
            continue;
        }
        // Records written without a newline between them (`{…}{…}`) are read each.
        for record in serde_json::Deserializer::from_slice(line).into_iter::<serde_json::Value>() {
            let Ok(record) = record else { break };
            calls_in(&record, 0, &mut found);
        }
    }
    found
}

/// Nesting searched for a call: a sub-agent's progress record holds its message's blocks
/// a few levels down.
const MAX_DEPTH: usize = 16;

fn calls_in(v: &serde_json::Value, depth: usize, found: &mut Vec<(Box<str>, Named)>) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        serde_json::Value::Object(o) => {
            if o.get("type").and_then(|t| t.as_str()) == Some("tool_use")
                && o.get("name").and_then(|t| t.as_str()) == Some("Bash")
                && let Some(id) = o.get("id").and_then(|t| t.as_str())
                && let Some(command) = o.get("input").and_then(|i| i.get("command")).and_then(|c| c.as_str())
            {
                if let Some(named) = names_its_output(command) {
                    found.push((id.into(), named));
                }
                return;
            }
            for v in o.values() {
                calls_in(v, depth + 1, found);
            }
        }
        serde_json::Value::Array(a) => {
            for v in a {
                calls_in(v, depth + 1, found);
            }
        }
        _ => {}
    }
}

/// What a Bash call's command says of what it prints, as a terminal's command line says
/// it ([`below::names_of_command`]). A command of several lines (a script, a here-
/// document) is read a line at a time, its continued lines joined: the first line that
/// names a secret names the output.
pub(crate) fn names_its_output(command: &str) -> Option<Named> {
    let joined;
    let command = if command.contains("\\\n") {
        joined = command.replace("\\\n", " ");
        &joined
    } else {
        command
    };
    command.lines().map(str::trim).filter(|l| !l.is_empty()).find_map(|l| below::names_of_command(l, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::filter::{Kind, run_as};

    fn call(id: &str, command: &str) -> String {
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command, "description": "Run it"}}]}})
        .to_string()
    }

    /// A result as Claude Code writes it: the block's id first, its text again in
    /// `toolUseResult.stdout`.
    fn result(id: &str, out: &str) -> String {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": id, "type": "tool_result", "content": out, "is_error": false}]},
            "toolUseResult": {"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
        .to_string()
    }

    /// A transcript read as `lokust-shell redact` reads one.
    fn streamed(records: &[String]) -> String {
        let text = records.join("\n") + "\n";
        let mut out = Vec::new();
        run_as(Kind::Transcript, text.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_result_of_a_command_that_names_a_secret_is_its_output() {
        for (command, out, secret) in [
            ("cat ~/.vault_pass", "Ember!Orbit7537", "Ember!Orbit7537"),
            (
                "op item get \"Orders DB\" --fields label=password --reveal",
                "tundra.orbit.nectar.saffron14\n",
                "tundra.orbit.nectar.saffron14",
            ),
            (
                "security find-generic-password -s db -a prod -w",
                "LHE?N-opzLq?Vn#ld27p@s",
                "LHE?N-opzLq?Vn#ld27p@s",
            ),
            (
                "cd infra && aws ecr get-login-password --region eu-west-1",
                "eyJwYXlsb2FkIjoiSm9obiBEb2UifQ.dGVzdDEyMw\n",
                "eyJwYXlsb2FkIjoiSm9obiBEb2UifQ",
            ),
            ("gh auth token", "gho_notaformat8B7wYTUq49oV4U5jDfoK\n", "gho_notaformat8B7wYTUq49oV4U5jDfoK"),
            (
                "heroku auth:token",
                " ›   Warning: token will expire 04/18/2026\nHRKU-AA8i8ltf3AZLWc8Ce8E5qbmt3n8Lom7W3gzvp\n",
                "HRKU-AA8i8ltf3AZLWc8Ce8E5qbmt3n8Lom7W3gzvp",
            ),
            // A script: the line that names the secret names the output.
            (
                "set -e\ncat /etc/mongo/keyfile",
                "Kn7YzJsFb+KDOBSnb1ENh7pJHf+TQyM5X57yYSdsJAP6\n",
                "Kn7YzJsFb+KDOBSnb1ENh7pJHf+TQyM5X57yYSdsJAP6",
            ),
        ] {
            let records = [
                call("toolu_01Other", "ls"),
                call("toolu_01Named", command),
                result("toolu_01Other", "README.md\nsrc"),
                result("toolu_01Named", out),
            ];
            let red = streamed(&records);
            assert!(!red.contains(secret), "{command}: {red}");
            let last: serde_json::Value = serde_json::from_str(red.lines().last().unwrap()).unwrap();
            assert!(
                last["toolUseResult"]["stdout"].as_str().unwrap().contains("[REDACTED]"),
                "{command}: {red}"
            );
            // The call's own record and the other result are left.
            assert_eq!(
                red.lines().take(3).collect::<Vec<_>>(),
                records[..3].iter().map(String::as_str).collect::<Vec<_>>()
            );
        }
    }

    /// A result's content given as text blocks, and the block's id after its content.
    #[test]
    fn a_result_in_text_blocks_or_with_its_id_last_is_read_too() {
        let blocks = serde_json::json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": [{"type": "text", "text": "Ember!Orbit7537\n"}], "tool_use_id": "toolu_01V"}]}})
        .to_string();
        let red = streamed(&[call("toolu_01V", "cat .vault_pass"), blocks]);
        assert!(!red.contains("Ember!Orbit7537") && red.contains(r#""text":"[REDACTED]\n""#), "{red}");
    }

    /// Look-alikes: a command that names no secret, one that prints about a secret's
    /// file, a result that comes before its call or names another call, and a value
    /// that is no secret's shape printed by a command that names one.
    #[test]
    fn results_of_commands_that_name_nothing_are_left() {
        for records in [
            vec![call("toolu_01P", "cat package.json"), result("toolu_01P", "Kx9vQ2mZp4Lw8Rt7Yb3N\n")],
            vec![
                call("toolu_01H", "git rev-parse HEAD"),
                result("toolu_01H", "5d41402abc4b2a76b9719d911017c592aabbccdd\n"),
            ],
            vec![call("toolu_01N", "node -e 'console.log(1)'"), result("toolu_01N", "Ember!Orbit7537")],
            vec![call("toolu_01G", "grep -rl token src/"), result("toolu_01G", "src/TokenStore2.rs\n")],
            vec![call("toolu_01R", "cat .vault_pass > /tmp/copy"), result("toolu_01R", "Ember!Orbit7537")],
            vec![result("toolu_01B", "Ember!Orbit7537"), call("toolu_01B", "cat .vault_pass")],
            vec![call("toolu_01V", "cat .vault_pass"), result("toolu_01W", "Ember!Orbit7537")],
            vec![
                call("toolu_01L", "git log -1 --format=%H -- secrets.yaml"),
                result("toolu_01L", "5d41402abc4b2a76b9719d911017c592aabbccdd\n"),
            ],
            vec![
                call("toolu_01K", "cat ~/.vault_pass"),
                result("toolu_01K", "e6e30b29-cf0c-47da-8639-2dcd42a295b7\n"),
            ],
        ] {
            assert_eq!(streamed(&records), records.join("\n") + "\n");
        }
    }

    /// The same output in a record of no known call is read without the command, and
    /// calls of other tools or of no command teach nothing.
    #[test]
    fn only_bash_calls_that_name_a_secret_are_learned() {
        let mut links = Links::default();
        let other = serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "toolu_01X", "name": "Read", "input": {"file_path": "/home/u/.vault_pass"}},
            {"type": "tool_use", "id": "toolu_01Y", "name": "Bash", "input": {"description": "cat .vault_pass"}}]}})
        .to_string();
        assert!(!links.learn(other.as_bytes()));
        assert!(!links.learn(call("toolu_01Z", "ls -la").as_bytes()));
        assert!(links.learn(
            format!("{}\n{}", call("toolu_01Z", "ls"), call("toolu_01A", "pass show prod/db")).as_bytes()
        ));
        assert!(links.get("toolu_01A").is_some() && links.get("toolu_01Z").is_none());
        assert_eq!(
            links.of_record(result("toolu_01A", "x").as_bytes()).map(|n| n.rule),
            Some("key-file-shown")
        );
        assert!(links.of_record(result("toolu_01Z", "x").as_bytes()).is_none());
    }
}
