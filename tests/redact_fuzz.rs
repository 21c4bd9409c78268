//! A bounded property test of the redactor, run in CI: inputs grown from the corpus, real
//! transcripts and random bytes, then cut, spliced and escaped. Whatever comes in, the
//! redactor never panics, redacting its own output changes nothing, a JSON line stays a
//! JSON line with the same shape, and a thinking block's signature is never touched.
//!
//! The inputs are fixed by the seed, so CI runs the same ones every time:
//! `LOKUST_FUZZ_RUNS` (default 12,000) and `LOKUST_FUZZ_SEED` explore further.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use lokust::redact::{self, Report};
use serde_json::Value;

use crate::util::fixtures;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Texts to grow inputs from: corpus lines, real transcript strings and fragments that
/// sit on the rules' edges.
fn seeds() -> Vec<String> {
    let mut out: Vec<String> = include_str!("../fixtures/redaction/corpus.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["line"].as_str().map(str::to_string))
        .collect();
    let root = fixtures().join("real/claude-code/entireio-cli/37/995ebed6e4/0/full.jsonl");
    let real = std::fs::read_to_string(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    out.extend(real.lines().map(str::to_string));
    out.extend(
        [
            "password=",
            "export TOKEN=",
            "Authorization: Bearer ",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "\\n",
            "\\\"",
            "\\u0070assword",
            "     3\u{2192}",
            "+",
            "-p",
            "'",
            "\"",
            "$'",
            "\u{e9}",
            "\u{65e5}",
            "ghp_",
            "AKIA",
            "sk-",
            "://u:p@h",
            "?api_key=",
            "`",
            "\\",
            "{\"password\":\"",
            "\"}",
            "[REDACTED]",
            "\t",
            ";",
            "&&",
            "|",
            "<<EOF",
        ]
        .map(str::to_string),
    );
    out
}

fn grow(r: &mut Rng, seeds: &[String]) -> String {
    let mut s = String::new();
    for _ in 0..1 + r.below(4) {
        let piece = &seeds[r.below(seeds.len())];
        // A cut on a character boundary, somewhere in the piece.
        let mut a = r.below(piece.len() + 1);
        let mut b = a + r.below(piece.len() + 1 - a);
        if r.below(3) == 0 {
            (a, b) = (0, piece.len());
        }
        while !piece.is_char_boundary(a) {
            a -= 1;
        }
        while !piece.is_char_boundary(b) {
            b += 1;
        }
        s.push_str(&piece[a..b]);
        if r.below(4) == 0 {
            s.push(char::from_u32(r.below(0x3000) as u32).unwrap_or('?'));
        }
    }
    s
}

#[test]
fn whatever_comes_in_the_redactor_keeps_its_promises() {
    let wanted: u64 = std::env::var("LOKUST_FUZZ_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(12_000);
    // A guard, not the bound: a slow machine still runs every input unless it is very slow.
    let budget = Duration::from_secs(300);
    let seed = std::env::var("LOKUST_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15u64);
    let seeds = seeds();
    let mut r = Rng(seed);
    let started = Instant::now();
    let mut runs = 0u64;
    while runs < wanted && started.elapsed() < budget {
        runs += 1;
        let text = grow(&mut r, &seeds);
        // As text: a second pass finds nothing more.
        let once = redact::redact(&text).into_owned();
        let mut again = Report::default();
        let twice = redact::redact_report(&once, &mut again);
        assert!(
            matches!(twice, Cow::Borrowed(_)),
            "not idempotent (seed {seed}, run {runs}):\n{text:?}\n-> {once:?}\n-> {twice:?}"
        );

        // As a JSON string value, and as the line itself when it is JSON.
        // A signature as the API writes it: base64 of a few hundred random bytes.
        let raw: Vec<u8> = (0..200 + r.below(400)).map(|_| r.next() as u8).collect();
        let signature = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(raw)
        };
        let line = serde_json::json!({"type": "user", "message": {"content": text},
            "thinking": {"signature": signature}})
        .to_string();
        for input in [line.as_str(), text.as_str()] {
            let Ok(before) = serde_json::from_str::<Value>(input) else { continue };
            let out = redact::redact_json_line(input, &mut Report::default()).into_owned();
            let after: Value = serde_json::from_str(&out).unwrap_or_else(|e| {
                panic!("JSON in, not JSON out ({e}) (seed {seed}, run {runs}):\n{input}\n-> {out}")
            });
            assert!(
                same_shape(&before, &after),
                "the record's shape changed (seed {seed}, run {runs}):\n{input}\n-> {out}"
            );
            if let (Some(a), Some(b)) =
                (before.pointer("/thinking/signature"), after.pointer("/thinking/signature"))
            {
                assert_eq!(a, b, "a signature was changed (seed {seed}, run {runs})");
            }
            let again = redact::redact_json_line(&out, &mut Report::default());
            assert!(
                matches!(again, Cow::Borrowed(_)),
                "JSON redaction not idempotent (seed {seed}, run {runs}):\n{input}\n-> {out}\n-> {again}"
            );
        }
    }
    assert_eq!(runs, wanted, "only {runs} inputs in {budget:?}");
    println!(
        "redactor property test: {runs} inputs in {:.1} s, seed {seed}",
        started.elapsed().as_secs_f64()
    );
}

/// The same keys, array lengths and kinds of value; only strings may differ.
fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_shape(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_shape(v, w))
        }
        (Value::String(_), Value::String(_)) => true,
        _ => a == b,
    }
}
