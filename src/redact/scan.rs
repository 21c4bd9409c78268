//! The pipeline for one line: keyword prefilter, then only the rules it woke, then the
//! replacement of merged spans.
//!
//! The prefilter finds every rule's keywords in one scan (`keywords.rs`). A line with no
//! keyword is never lexed or matched against a regex; that is what keeps harmless
//! text both fast and byte-for-byte unchanged. Each rule's regex is compiled on first use
//! (a `OnceLock` per rule), so a process that redacts a few lines compiles a few regexes:
//! compiling all of them costs more than the whole start-up budget.

use std::cell::RefCell;
use std::sync::{LazyLock, OnceLock};

use regex::bytes::Regex;

use super::assign::{code_assign, colon, equals};
use super::formats::{aws_prompt, database, netrc, php_define, xml};
use super::gate::{Gate, LineFacts, token_gate};
use super::heredoc::{self, Bodies, Body, FileSyntax, Form};
use super::keywords::Keywords;
use super::memo::Lines;
use super::pair::{Pair, Step};
use super::pem::{pem_before_body, pem_body_line, pem_inline, pem_opens_block};
use super::prose::prose;
use super::report::Report;
use super::rules::{Engine, Matcher, RULES, Rule};
use super::span::{Nested, Reading, Span, ascii_regex};
use super::web::{cookie, header, url};
use super::yaml::{Below, Block};
use crate::lok::REDACTED;

struct Prefilter {
    finder: Keywords,
    /// Pattern id → the rules it wakes, grouped by gate: `(gate, mask of rules)`. A
    /// keyword shared by several rules (a secret's name words wake four) is found and
    /// judged once per occurrence.
    wakes: Vec<Vec<(Gate, u128)>>,
}

static PREFILTER: LazyLock<Prefilter> = LazyLock::new(|| {
    let (pats, wakes) = keyword_list();
    let finder = Keywords::new(&pats);
    Prefilter { finder, wakes }
});

/// A rule's gate, with a token pattern's decided from the pattern.
fn rule_gate(rule: &Rule) -> Gate {
    match (rule.gate, rule.matcher) {
        (Gate::Token, Matcher::Token(pattern)) => token_gate(pattern),
        (gate, _) => gate,
    }
}

/// Every rule's keywords, case variants included, each once, with what it wakes.
fn keyword_list() -> (Vec<String>, Vec<Vec<(Gate, u128)>>) {
    assert!(RULES.len() <= 128, "rule masks are u128");
    let mut wakes: std::collections::BTreeMap<String, Vec<(Gate, u128)>> = Default::default();
    for (i, r) in RULES.iter().enumerate() {
        let gate = rule_gate(r);
        for kw in r.keywords {
            let mut variants = vec![kw.to_string()];
            if matches!(r.matcher, Matcher::Context(_)) {
                variants.push(kw.to_ascii_uppercase());
                let mut cap = kw.to_string();
                if let Some(f) = cap.get_mut(0..1) {
                    f.make_ascii_uppercase();
                }
                variants.push(cap);
            }
            for v in variants {
                let groups = wakes.entry(v).or_default();
                match groups.iter_mut().find(|(g, _)| *g == gate) {
                    Some((_, mask)) => *mask |= 1u128 << i,
                    None => groups.push((gate, 1u128 << i)),
                }
            }
        }
    }
    wakes.into_iter().unzip()
}

/// Every keyword the prefilter looks for, case variants included.
#[cfg(test)]
pub(crate) fn keywords() -> Vec<String> {
    keyword_list().0
}

/// Every line of `chunk` (complete lines) that holds a keyword whose gate it passes, with
/// the rules it wakes: `(start, end, mask)`, in order, into `hits`. One pass over the
/// bytes serves both the decision to copy a stretch untouched and the choice of rules for
/// the other lines.
///
/// The whole chunk is scanned before any line is processed: interleaving the two let
/// the rule engines evict the automaton's tables from the cache between hits, which made
/// the scan ten times slower on history where most lines hold a keyword.
///
/// Returns whether any keyword was found, its gate passed or not.
pub(crate) fn keyword_lines(chunk: &[u8], hits: &mut Vec<(usize, usize, u128)>) -> bool {
    hits.clear();
    let mut seen = false;
    let p = &*PREFILTER;
    // The line of the last hit, whether or not any of its hits passed.
    let mut line = (0, 0, 0u128);
    let mut facts = LineFacts::default();
    p.finder.each(chunk, |start, end, id| {
        seen = true;
        // Keywords hold no newline: a match ending by the line's end is on the line.
        if end > line.1 {
            if line.2 != 0 {
                hits.push(line);
            }
            let line_start = memchr::memrchr(b'\n', &chunk[..start]).map_or(0, |i| i + 1);
            let line_end = memchr::memchr(b'\n', &chunk[end..]).map_or(chunk.len(), |i| end + i + 1);
            line = (line_start, line_end, 0);
            facts = LineFacts::default();
        }
        for &(gate, rules) in &p.wakes[id] {
            if line.2 & rules != rules
                && gate.passes(&chunk[line.0..line.1], start - line.0, end - line.0, &mut facts)
            {
                line.2 |= rules;
            }
        }
    });
    if line.2 != 0 {
        hits.push(line);
    }
    seen
}

/// The rules the keywords in `line` wake, gates passed.
pub(crate) fn woken(line: &[u8]) -> u128 {
    let p = &*PREFILTER;
    let mut mask = 0u128;
    let mut facts = LineFacts::default();
    p.finder.each(line, |start, end, id| {
        for &(gate, rules) in &p.wakes[id] {
            if mask & rules != rules && gate.passes(line, start, end, &mut facts) {
                mask |= rules;
            }
        }
    });
    mask
}

static COMPILED: [OnceLock<Regex>; 128] = [const { OnceLock::new() }; 128];

pub(crate) fn rule_regex(i: usize) -> Option<&'static Regex> {
    match RULES[i].matcher {
        Matcher::Token(p) => Some(COMPILED[i].get_or_init(|| ascii_regex(p))),
        Matcher::Context(_) => None,
    }
}

/// A token match that is really a placeholder: `ghp_xxxx…`, `…EXAMPLE`, `sk-1111…`.
fn placeholder_token(m: &[u8]) -> bool {
    if m.windows(7).any(|w| w.eq_ignore_ascii_case(b"example")) {
        return true;
    }
    let mut seen = [false; 256];
    let mut distinct = 0;
    for &b in m {
        if !seen[b as usize] {
            seen[b as usize] = true;
            distinct += 1;
        }
    }
    distinct < 10
}

/// Every span any woken rule finds in `line`, unmerged.
/// The mask bit of the rule that reads an entry's name and value as two keys (`pair.rs`).
static ENV_PAIR: LazyLock<u128> =
    LazyLock::new(|| RULES.iter().position(|r| r.id == "env-pair").map_or(0, |i| 1u128 << i));

/// Rules woken by a secret's *name* (`NAME_WORDS`) rather than by a command or a format.
const NAME_RULES: &[&str] = &["assign", "flag", "query", "kv", "env-pair"];

pub(crate) fn find_spans(line: &[u8]) -> Vec<Span> {
    find_spans_depth(line, 0)
}

pub(crate) fn find_spans_depth(line: &[u8], depth: u8) -> Vec<Span> {
    find_spans_masked(line, woken(line), depth)
}

/// The whole pipeline again, on text a reading made: what [`Nested`] and a YAML scalar
/// folded from its lines are read with.
fn rescan(text: &[u8], depth: u8, reading: Reading) -> Vec<Span> {
    find_spans_read(text, woken(text), depth, reading)
}

/// [`find_spans`] when the prefilter has already said which rules `line` wakes.
pub(crate) fn find_spans_masked(line: &[u8], mask: u128, depth: u8) -> Vec<Span> {
    find_spans_read(line, mask, depth, Reading::Any)
}

/// [`find_spans_masked`], reading the line as `reading` says.
pub(crate) fn find_spans_read(line: &[u8], mask: u128, depth: u8, reading: Reading) -> Vec<Span> {
    if mask == 0 {
        return Vec::new();
    }
    thread_local! {
        static SEEN: RefCell<Lines<(u128, u8, Reading), Vec<Span>>> = RefCell::new(Lines::new(128));
    }
    // What the engines find depends on these alone. (Ungated, as a test runs them, a
    // line read again below wakes other rules: not remembered.)
    let remember = line.len() <= super::memo::LINE_MAX && !super::gate::ungated();
    let tag = (mask, depth, reading);
    if remember && let Some(spans) = SEEN.with_borrow(|m| m.get(line, tag)) {
        return spans;
    }
    let spans = engines(line, mask, depth, reading);
    if remember {
        SEEN.with_borrow_mut(|m| m.put(line, tag, spans.clone()));
    }
    spans
}

/// Every span the engines of the rules in `mask` find in `line`.
fn engines(line: &[u8], mask: u128, depth: u8, reading: Reading) -> Vec<Span> {
    let mut out = Vec::new();
    let mut engines = 0u32;
    let mut name_woken = false;
    // Made once, for the first token rule woken.
    let mut blanked: Option<Option<Vec<u8>>> = None;
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let rule = &RULES[i];
        match rule.matcher {
            Matcher::Token(_) => {
                let re = rule_regex(i).expect("token rule");
                // A token after `\n` or `%20` has a letter or a digit before it, so its
                // pattern's `\b` does not hold: the line is read again with each such
                // escape blanked, byte for byte, so the spans fall where they were.
                let blanked = blanked.get_or_insert_with(|| escapes_blanked(line));
                for text in std::iter::once(line).chain(blanked.as_deref()) {
                    for caps in re.captures_iter(text) {
                        let Some(m) = caps.name("s").or_else(|| caps.get(0)) else { continue };
                        if !placeholder_token(m.as_bytes()) {
                            out.push(Span { start: m.start(), end: m.end(), rule: rule.id });
                        }
                    }
                }
            }
            Matcher::Context(_) if NAME_RULES.contains(&rule.id) => name_woken = true,
            Matcher::Context(e) => engines |= 1 << e as u32,
        }
    }
    // A secret's name only matters next to a value: after `=` or `:`, as a flag, or as a
    // call's first argument. A
    // base64 blob in scrollback that happens to contain "key" has none of them, and
    // skipping it keeps long harmless lines cheap.
    // A call's arguments (`SetEnvironmentVariable("API_TOKEN", "…")`) pair them with a comma.
    // C's `#define NAME "…"` gives one by position.
    if name_woken
        && (memchr::memchr3(b'=', b':', b'-', line).is_some()
            || quoted_call_argument(line)
            || memchr::memmem::find(line, b"define").is_some()
            // A default after a reference (`process.env.API_KEY ?? "…"`, `|| "…"`, `or "…"`).
            || memchr::memmem::find(line, b"||").is_some()
            || memchr::memmem::find(line, b"??").is_some()
            || memchr::memmem::find(line, b" or ").is_some()
            // An element naming it and the next giving it (`<Key>Password</Key><Value>`).
            || memchr::memmem::find(line, b"</").is_some())
    {
        engines |= 1 << Engine::Shell as u32 | 1 << Engine::Colon as u32 | 1 << Engine::Pair as u32;
    }
    let on = |e: Engine| engines & (1 << e as u32) != 0;
    // The name-keyed rules share keywords; whichever woke, run both readings.
    if on(Engine::Shell) || on(Engine::Equals) {
        super::shell::scan(line, &mut out, Nested { depth, rescan }, reading != Reading::Any);
        equals(line, &mut out, reading);
        code_assign(line, &mut out);
        super::assign::setter_call(line, &mut out);
        super::assign::lisp_form(line, &mut out);
        super::declare::declarations(line, &mut out);
    }
    for (woken_by, read) in READERS {
        if woken_by.iter().any(|e| on(*e)) {
            read(line, &mut out);
        }
    }
    out
}

/// `line` with every escape that stands for a separator (`\n`, `\t`, `\r`, `%20`)
/// turned into as many spaces, or `None` when it has none.
fn escapes_blanked(line: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    for at in memchr::memchr2_iter(b'\\', b'%', line) {
        let len = if line[at] == b'\\' { 2 } else { 3 };
        if at + len <= line.len() && super::gate::after_escape(line, at + len) {
            out.get_or_insert_with(|| line.to_vec())[at..at + len].fill(b' ');
        }
    }
    out
}

/// `f("NAME", …)` or `f( 'NAME'`: a call whose first argument is quoted, which pairs a
/// name with a value without `=` or `:`.
fn quoted_call_argument(line: &[u8]) -> bool {
    memchr::memchr_iter(b'(', line).any(|i| {
        line[i + 1..].iter().find(|b| !matches!(b, b' ' | b'\t')).is_some_and(|b| matches!(b, b'"' | b'\''))
    })
}

/// Finds an engine's spans in a line.
type Reader = fn(&[u8], &mut Vec<Span>);

/// The context engines that read a line on their own, each woken by its rules' keywords:
/// a reader runs once when any of its engines woke.
const READERS: [(&[Engine], Reader); 19] = [
    (&[Engine::Colon], colon),
    (&[Engine::Colon], super::expansion::spans),
    // Guzzle's `['Authorization' => 'Bearer …']` wakes the header's rule alone.
    (&[Engine::Colon, Engine::Header], super::arrow::spans),
    (&[Engine::Pair], super::pair::spans),
    (&[Engine::Url], url),
    (&[Engine::Header], header),
    (&[Engine::Cookie], cookie),
    (&[Engine::Pem], pem_inline),
    (&[Engine::AwsPrompt], aws_prompt),
    (&[Engine::Partner], super::formats::partner),
    (&[Engine::Netrc], netrc),
    (&[Engine::PhpDefine], php_define),
    (&[Engine::Prose], prose),
    (&[Engine::Xml], xml),
    (&[Engine::Database], database),
    (&[Engine::Generated], super::literal::spans),
    (&[Engine::Mnemonic], super::mnemonic::spans),
    (&[Engine::Ipsec], super::formats::ipsec_secret),
    (&[Engine::RedisAcl], super::formats::redis_acl),
];

/// Merges overlapping spans (the first one's rule wins) and keeps them on UTF-8
/// character boundaries, so that replacing them never splits a character, and inside the
/// quoting of their words (`quoting.rs`).
pub(crate) fn merge(line: &[u8], mut spans: Vec<Span>) -> Vec<Span> {
    for s in &mut spans {
        super::quoting::fit(line, s);
        while s.start > 0 && (line[s.start] & 0xC0) == 0x80 {
            s.start -= 1;
        }
        while s.end < line.len() && (line[s.end] & 0xC0) == 0x80 {
            s.end += 1;
        }
    }
    spans.retain(|s| s.start < s.end);
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start < last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// Writes `line` with `spans` replaced by the marker; counts into `report`.
pub(crate) fn apply(line: &[u8], spans: &[Span], out: &mut Vec<u8>, report: &mut Report) {
    let mut at = 0;
    for s in spans {
        out.extend_from_slice(&line[at..s.start]);
        out.extend_from_slice(REDACTED.as_bytes());
        super::echo::note(&line[s.start..s.end], s.rule);
        // A value that ran through a quote (`'word'more`) keeps its quotes after the
        // marker, escaped as they were: dropping one would pair the next quote on the
        // line with the wrong one, and the rest of the line would read differently the
        // next time round. A double-quoted string's whole content, its quotes all escaped
        // (JSON written into JSON), pairs none of them outside: it goes whole.
        if !super::quoting::is_whole_string(line, s.start, s.end) {
            super::quoting::keep_quotes(&line[s.start..s.end], out);
        }
        at = s.end;
        report.count(s.rule);
    }
    out.extend_from_slice(&line[at..]);
}

/// Line-by-line state: inside a multi-line PEM block, a command continued over lines, or
/// the body of a here-document.
#[derive(Debug, Default)]
pub(crate) struct LineScanner {
    in_pem: bool,
    /// No body line of the current block seen yet.
    pem_first: bool,
    /// The command so far when the last line ended with a continuation `\`: the next
    /// line is read after it, so that `mysql -u root \` / `  -phunter2` is still mysql.
    carry: Vec<u8>,
    /// The lines of that command, not written yet: what a later line says of the command
    /// can make an earlier word a secret (`echo X | \` / `  sudo -S …`).
    held: Vec<Held>,
    /// A continued command that a diff's removed line ended (`mysql -u root \` then
    /// `-  -pOLD`), as it stood before that line: the added lines right after it go on
    /// with it on the new side (`+  -pNEW`), so they are read after it too.
    ended_by_removed: Option<Vec<u8>>,
    /// How much of `carry` came from lines both sides of a diff have (context lines, or
    /// text that is no diff): only that part goes on after a removed line ends it, not a
    /// removed line that started the command (`-docker login -p \\`).
    carry_shared: usize,
    /// `carry` holds a diff's removed line: the added lines after it are the new side,
    /// which goes on from the shared part only (` sshpass -p \` / `-  OLD \` / `+  NEW \`).
    carry_removed: bool,
    /// Here-documents whose bodies follow.
    here: Bodies,
    /// A YAML block scalar under a secret's name whose lines follow.
    block: Option<Block>,
    /// The lines of a scalar below its key (`password:` then `  hunter2`), held until it
    /// ends: its value is judged whole, as YAML folds its lines into one.
    below: Vec<BelowLine>,
    /// Spans the scalar's judgement found in the line being written.
    forced: Vec<Span>,
    /// An entry whose naming key names a secret (`- name: DB_PASSWORD`), its value below.
    pair: Option<Pair>,
    /// A Markdown table whose header names a secret: its rows' cells are judged by column.
    table: Option<super::table::Table>,
    /// A key file a command shows (`cat ~/.pgpass`) whose lines follow, and how many
    /// have.
    shown: Option<(FileSyntax, usize)>,
    /// The whole text is about the file `shown` names (a record that names its path):
    /// every line its syntax reads is one of its lines.
    shows_whole_text: bool,
    /// The line before named a secret that the next non-blank line holds.
    named_above: Option<super::below::Named>,
    reading: Reading,
}

/// A line of a scalar below its key, kept until the scalar ends.
#[derive(Debug)]
struct BelowLine {
    /// The whole line, its ending included.
    line: Vec<u8>,
    /// Where its text starts, past its view's prefix or its diff's sign.
    at: usize,
    mask: Option<u128>,
}

/// A line of a continued command, kept until the command ends.
#[derive(Debug)]
struct Held {
    /// The whole line, its ending included.
    line: Vec<u8>,
    /// Where its view prefix ends and its ending starts.
    cut: usize,
    end: usize,
    /// How long the carried command was before this line: the context it is read in.
    after: usize,
    spans: Vec<Span>,
}

impl Held {
    /// Where this line's text starts in the carried command.
    fn at(&self) -> usize {
        self.after + usize::from(self.after > 0)
    }
}

/// Longest command kept as context for continuation lines.
const CARRY_MAX: usize = 4096;
/// How many times a redacted line is read again at most; one is nearly always enough.
const REREADS: usize = 3;

impl LineScanner {
    /// A scanner for text that starts with a key file's lines.
    pub fn showing(syntax: FileSyntax) -> LineScanner {
        LineScanner { shown: Some((syntax, 0)), shows_whole_text: true, ..LineScanner::default() }
    }

    /// A scanner for what a command printed whose words named a secret (`named`): its
    /// lines are the lines below that command.
    pub fn below(named: super::below::Named) -> LineScanner {
        LineScanner { named_above: Some(named), ..LineScanner::default() }
    }

    /// A scanner for text of a known kind.
    pub fn reading(reading: Reading) -> LineScanner {
        LineScanner { reading, ..LineScanner::default() }
    }

    /// Inside a multi-line PEM block, a command continued over lines or a here-document's
    /// body, where lines without keywords matter too.
    pub fn in_block(&self) -> bool {
        self.in_pem
            || !self.carry.is_empty()
            || !self.held.is_empty()
            || self.ended_by_removed.is_some()
            || self.here.active()
            || self.block.is_some()
            || !self.below.is_empty()
            || self.pair.is_some()
            || self.table.is_some()
            || self.shown.is_some()
            || self.named_above.is_some()
    }

    /// Whether a trailing `\` joins a line to the next (not in code, where it ends a
    /// macro's line or a string's).
    pub fn carries(&self) -> bool {
        self.reading == Reading::Any
    }

    /// Redacts one line (with or without its line ending) into `out`. Returns whether
    /// `out` is to be written instead of the line: a changed line, or nothing while the
    /// line is held as part of a continued command, or the held lines with this one.
    pub fn line(&mut self, line: &[u8], out: &mut Vec<u8>, report: &mut Report) -> bool {
        self.line_masked(line, None, out, report)
    }

    /// Writes into `out` the lines still held at the end of the text; returns whether
    /// there were any.
    pub fn finish(&mut self, out: &mut Vec<u8>, report: &mut Report) -> bool {
        let below = self.release_below(out, report);
        let any = below || !self.held.is_empty();
        self.release(out, report);
        self.carry.clear();
        self.carry_shared = 0;
        self.carry_removed = false;
        self.ended_by_removed = None;
        any
    }

    /// [`LineScanner::line`] with the prefilter's verdict on `line`, when known.
    pub fn line_masked(
        &mut self,
        line: &[u8],
        mask: Option<u128>,
        out: &mut Vec<u8>,
        report: &mut Report,
    ) -> bool {
        if self.here.active() {
            return self.here_body_line(line, mask, out, report);
        }
        if self.block.as_ref().is_some_and(|b| b.below().is_some()) {
            return self.below_line(line, mask, out, report);
        }
        let body = &line[..body_len(line)];
        let mut cut = self.view_cut(body).0;
        let mut kind = Body::Plain;
        if let Some(block) = &mut self.block {
            match block.line(body, cut) {
                Some(at) => (cut, kind) = (at, Body::BlockValue),
                None => self.block = None,
            }
        }
        if let Some(pair) = self.pair.as_mut().filter(|_| kind == Body::Plain) {
            match pair.line(body, cut) {
                // The entry goes on: a diff shows the old value and the new one.
                Step::Value(at, class) => {
                    if super::pair::opens_block(&body[at..]) {
                        self.block = Some(Block::under_key(body, cut, at));
                    } else if let Some(read_as) = super::pair::opens_below(&body[at..]) {
                        self.block = Block::below_key(body, cut, at, read_as, class);
                    }
                    (cut, kind) = (at, Body::PairValue(class));
                }
                Step::Within => {}
                Step::Ended => self.pair = None,
            }
        }
        let whole_text = self.shows_whole_text;
        if let Some((syntax, lines)) = &mut self.shown {
            *lines += 1;
            // `host:5432:db:…` is also what grep's `path:12:` looks like: the line is
            // the file's whole before it is a view's.
            // Fields counted from the line's start would count a view's line number too.
            let order = if matches!(syntax, FileSyntax::Fields(_)) { [cut, 0] } else { [0, cut] };
            let at = order.into_iter().find(|&at| heredoc::is_line_of(&body[at..], *syntax));
            match at.filter(|_| whole_text || *lines <= heredoc::MAX_BODY_LINES) {
                Some(at) => (cut, kind) = (at, Body::KeyFile(*syntax)),
                // A record about the file: its other lines (an `Edit` result's sentence
                // before the snippet) do not end it.
                None if whole_text => {}
                None => self.shown = None,
            }
        }
        let text = &body[cut..];
        let named = self.named_above.take();
        match named {
            // A line of a command's output, up to the next prompt, whose own command is
            // read anew.
            Some(named) if named.output > 0 => {
                let (value, ends) = super::below::output_line(text, &named);
                if let Some((start, end)) = value {
                    self.forced.push(Span { start, end, rule: named.rule });
                }
                self.named_above = if ends {
                    super::below::names_what_follows(text).filter(|_| kind == Body::Plain)
                } else {
                    (named.output > 1).then(|| super::below::Named { output: named.output - 1, ..named })
                };
            }
            Some(named) if text.trim_ascii().is_empty() && named.blanks > 0 => {
                self.named_above = Some(super::below::Named { blanks: named.blanks - 1, ..named });
            }
            Some(named) if let Some((start, end)) = super::below::value_below(text, &named) => {
                self.forced.push(Span { start, end, rule: named.rule });
            }
            _ if kind == Body::Plain => self.named_above = super::below::names_what_follows(text),
            _ => {}
        }
        self.text_line(line, cut, mask, kind, out, report)
    }

    /// A line after a bare key under a secret's name (`password:`): held while it is the
    /// scalar's below the key; when the scalar ends, its lines are judged and written,
    /// and the line is read as any other.
    fn below_line(
        &mut self,
        line: &[u8],
        mask: Option<u128>,
        out: &mut Vec<u8>,
        report: &mut Report,
    ) -> bool {
        let body = &line[..body_len(line)];
        let cut = self.view_cut(body).0;
        let Some(block) = self.block.as_mut() else { return false };
        match block.below_line(body, cut) {
            Below::Value(at) => {
                self.below.push(BelowLine { line: line.to_vec(), at, mask });
                true
            }
            Below::Before => {
                // A blank or comment line opens nothing: the key's scalar may come below it.
                let block = self.block.take();
                let changed = self.line_masked(line, mask, out, report);
                self.block = block;
                changed
            }
            Below::Ended => {
                let released = self.release_below(out, report);
                self.block = None;
                let from = out.len();
                let changed = self.line_masked(line, mask, out, report);
                if released && !changed {
                    out.truncate(from);
                    out.extend_from_slice(line);
                }
                released || changed
            }
        }
    }

    /// Judges the held lines of a scalar below its key as one value and writes them into
    /// `out`, each read as any line is besides; returns whether there were any.
    fn release_below(&mut self, out: &mut Vec<u8>, report: &mut Report) -> bool {
        let Some(block) = self.block.take_if(|b| b.below().is_some()) else { return false };
        let held = std::mem::take(&mut self.below);
        if held.is_empty() {
            return false;
        }
        let texts: Vec<(&[u8], Option<u8>)> =
            held.iter().map(|h| (&h.line[h.at..body_len(&h.line)], block.side(&h.line))).collect();
        let scalar = block.below().expect("a scalar below its key");
        let spans = scalar.judge(&texts, self.reading, rescan);
        for (h, spans) in held.iter().zip(spans) {
            self.forced = spans;
            self.text_line(&h.line, h.at, h.mask, Body::Plain, out, report);
        }
        true
    }

    /// Where a line's text starts, and whether what is before it is a view's prefix.
    fn view_cut(&self, body: &[u8]) -> (usize, bool) {
        // A continuation line's leading `-` is an option of the carried command, not a diff,
        // and its leading `> ` (zsh: `pipe> `…) is the shell's continuation prompt in
        // pasted scrollback.
        let prompt = if self.carry.is_empty() { 0 } else { super::view::continuation_prompt(body) };
        if prompt > 0 {
            (prompt, false)
        } else if self.carry.is_empty() || !body.starts_with(b"-") {
            let cut = super::view::prefix(body);
            (cut, cut > 0)
        } else if matches!(body.get(1), Some(b' ' | b'\t')) {
            // `-  X`: a diff's removed line (` sshpass -p \` then `-  OLD`), where a lone
            // `-` argument is rare; read as one, the value after the flag went unseen.
            (1, true)
        } else {
            (0, false)
        }
    }

    /// A line of a here-document's body, or its delimiter.
    fn here_body_line(
        &mut self,
        line: &[u8],
        mask: Option<u128>,
        out: &mut Vec<u8>,
        report: &mut Report,
    ) -> bool {
        let body_len = body_len(line);
        let body = &line[..body_len];
        let (cut, prompted) = self.here.cut(body);
        let text = &body[cut..];
        if self.here.ends(text, prompted) {
            return false;
        }
        let within_bound = self.here.count(prompted);
        // A private key's armour and body are the PEM rule's.
        let body_kind = if within_bound && !self.in_pem { self.here.body() } else { Body::Plain };
        self.here.after(text);
        // Past the bound, or not a body line after all: a line like any other.
        let cut = if within_bound { cut } else { self.view_cut(body).0 };
        self.text_line(line, cut, mask, body_kind, out, report)
    }

    /// A line read by the rules, `cut` bytes of prefix set aside, and as what it is when
    /// it is a here-document's body line (`body_kind`), which is no part of a command.
    fn text_line(
        &mut self,
        line: &[u8],
        cut: usize,
        mask: Option<u128>,
        body_kind: Body,
        out: &mut Vec<u8>,
        report: &mut Report,
    ) -> bool {
        let in_body = self.here.active();
        let body_len = body_len(line);
        let (view, body) = line[..body_len].split_at(cut);
        let eol = &line[body_len..];
        if self.in_pem && self.pem_first && pem_before_body(body) {
            // A span judged for this line's text is no span of the next one's.
            self.forced.clear();
            out.extend_from_slice(line);
            return true;
        }
        if self.in_pem {
            let long_enough = !self.pem_first || body.trim_ascii().len() >= 16;
            if long_enough && pem_body_line(body) {
                self.forced.clear();
                if self.pem_first {
                    // One value per block, however many lines its body has.
                    report.count("private-key");
                    self.pem_first = false;
                }
                let indent = body.len() - body.trim_ascii_start().len();
                out.extend_from_slice(view);
                out.extend_from_slice(&body[..indent]);
                out.extend_from_slice(REDACTED.as_bytes());
                // A line-continuation backslash is shell syntax, not key material.
                if body.trim_ascii_end().ends_with(b"\\") {
                    out.extend_from_slice(b" \\");
                }
                out.extend_from_slice(eol);
                report.lines += 1;
                return true;
            }
            self.in_pem = false;
        }
        let continued = body.trim_ascii_end().ends_with(b"\\");
        let side = line.first().copied().filter(|_| cut > 0 || !self.carry.is_empty());
        // git's `\ No newline at end of file` after a side's last line is no line of it:
        // after a continued removed line it waits in its place, the command unchanged
        // (held with no text, so no span of a later line falls on it).
        let marker = line.starts_with(b"\\ ") && (self.carry.is_empty() || self.carry_removed);
        if marker && !self.carry.is_empty() {
            self.held.push(Held {
                line: line.to_vec(),
                cut: body_len,
                end: body_len,
                after: self.carry.len(),
                spans: Vec::new(),
            });
            return true;
        }
        // The old side's lines end where the new side's start: what they held is read
        // and written as it stood, and the added line goes on from the shared part.
        let mut released = false;
        if side == Some(b'+') && self.carry_removed {
            released = !self.held.is_empty();
            self.release(out, report);
            self.carry.truncate(self.carry_shared);
            self.carry_removed = false;
        }
        // More removed lines (a blank one is a lone `-`) and the marker are still the old
        // side: the command a removed line ended goes on at the first added line.
        if !marker
            && line.first() != Some(&b'-')
            && let Some(before) = self.ended_by_removed.take()
            && side == Some(b'+')
            && self.carry.is_empty()
            && self.held.is_empty()
        {
            self.carry = before;
            self.carry_shared = self.carry.len();
        }
        let after = self.carry.len();
        let mut earlier = Vec::new();
        let mut spans = read(body, mask, self.reading, &self.carry, &mut earlier);
        spans.extend(super::table::read(&mut self.table, body));
        spans.extend(body_spans(body, body_kind, self.reading));
        spans.append(&mut self.forced);
        for s in earlier {
            for h in &mut self.held {
                let (at, len) = (h.at(), h.end - h.cut);
                let (start, end) = (s.start.max(at), s.end.min(at + len));
                if start < end {
                    h.spans.push(Span { start: start - at, end: end - at, rule: s.rule });
                }
            }
        }
        let opens_pem = pem_opens_block(body);
        let opens_here = !in_body && {
            let view = cut > 0 && super::view::prefix(&line[..body_len]) == cut;
            let diff = matches!(line, [b'+' | b'-' | b' ', b, ..] if !b.is_ascii_whitespace());
            self.open_here_documents(body, continued, Form { view, diff, ..Form::default() })
        };
        let mut carried = false;
        if continued && self.carries() && !in_body && after + body.len() < CARRY_MAX {
            if after > 0 {
                self.carry.push(b' ');
            }
            // zsh's history file writes a continued line's `\` before its own `\` at the
            // line's end (`sshpass \\`): every backslash there goes, or the next line's
            // first blank would be read as escaped and its option as part of a word.
            let t = body.trim_ascii_end();
            let kept = t.len() - t.iter().rev().take_while(|&&b| b == b'\\').count();
            self.carry.extend_from_slice(&t[..kept]);
            match side {
                Some(b'-') => self.carry_removed = true,
                Some(b'+') => {}
                _ => self.carry_shared = self.carry.len(),
            }
            // A quote left open (pasted scrollback, a cut command) would make every line
            // after it one quoted word, its options unseen: the command ends here.
            carried = !self.carry.is_empty() && !super::lex::lex(&self.carry).open_quote;
        }
        // A here-document's body is no part of the command.
        carried &= !opens_here;
        if body_kind == Body::Plain && !in_body {
            self.block = Block::opens(&line[..body_len], cut);
            // A naming key's line woke the rule, when the prefilter read it.
            if self.pair.is_none() && mask.is_none_or(|m| m & *ENV_PAIR != 0) {
                self.pair = Pair::opens(&line[..body_len], cut);
            }
            // What the command prints is the file's lines: in scrollback, the lines below.
            if !self.shows_whole_text {
                self.shown = super::shell::shown_key_file(body).map(|s| (s, 0));
            }
        }
        if carried && !opens_pem {
            self.held.push(Held { line: line.to_vec(), cut, end: body_len, after, spans });
            return true;
        }
        released |= !self.held.is_empty();
        self.release(out, report);
        let redacted = redact(body, spans, self.reading, &self.carry[..after], body_kind, report);
        if !carried {
            if after > 0 && side == Some(b'-') && !in_body && self.carry_shared > 0 {
                self.ended_by_removed = Some(self.carry[..self.carry_shared.min(after)].to_vec());
            }
            self.carry.clear();
            self.carry_shared = 0;
            self.carry_removed = false;
        }
        // In a key file's body, what the line is once redacted says whether a block opens:
        // an armour line the rules cut into is no PEM block, the next line the file's.
        let opens_pem = match &redacted {
            Some(text) if in_body => pem_opens_block(text),
            _ => opens_pem,
        };
        if opens_pem {
            self.in_pem = true;
            self.pem_first = true;
        }
        let Some(redacted) = redacted else {
            out.extend_from_slice(line);
            return released;
        };
        out.extend_from_slice(view);
        out.extend_from_slice(&redacted);
        out.extend_from_slice(eol);
        report.lines += 1;
        true
    }

    /// Follows the here-documents the command ending on this line (`body`, after the
    /// carried command) opens, when one is fed to a reader of secrets or into a key file:
    /// their bodies start on the next line. Returns whether it opened any.
    fn open_here_documents(&mut self, body: &[u8], continued: bool, form: Form) -> bool {
        let has = |t: &[u8]| memchr::memmem::find(t, b"<<").is_some();
        if !has(body) && !has(&self.carry) {
            return false;
        }
        let t = body.trim_ascii_end();
        // zsh's history file ends each line of a command but its last with `\`, and a
        // continued line with `\\`: after `<<EOF\`, the body follows.
        let zsh = continued && !t.ends_with(b"\\\\");
        if continued && !zsh {
            return false;
        }
        let mut command = self.carry.clone();
        if !command.is_empty() {
            command.push(b' ');
        }
        command.extend_from_slice(t);
        let docs = super::shell::here_documents(&command);
        if zsh {
            let before = &t[..t.len() - 1];
            let before = &before
                [..before.len() - before.iter().rev().take_while(|b| matches!(b, b'\'' | b'"')).count()];
            if !docs.last().is_some_and(|d| before.ends_with(&d.delimiter)) {
                return false;
            }
        }
        let prompted = super::shell::starts_with_prompt(&command);
        self.here.open(docs, Form { zsh, prompted, ..form });
        self.here.active()
    }

    /// Writes the held lines of a command into `out`, each redacted as read in the
    /// context it had.
    fn release(&mut self, out: &mut Vec<u8>, report: &mut Report) {
        for h in self.held.drain(..) {
            let body = &h.line[h.cut..h.end];
            match redact(body, h.spans, self.reading, &self.carry[..h.after], Body::Plain, report) {
                None => out.extend_from_slice(&h.line),
                Some(text) => {
                    out.extend_from_slice(&h.line[..h.cut]);
                    out.extend_from_slice(&text);
                    out.extend_from_slice(&h.line[h.end..]);
                    report.lines += 1;
                }
            }
        }
    }
}

/// The length of `line` without its line ending.
fn body_len(line: &[u8]) -> usize {
    line.len() - if line.ends_with(b"\r\n") { 2 } else { usize::from(line.ends_with(b"\n")) }
}

/// The spans of `body`, read on its own and, when it continues the command `before`,
/// also as the rest of that command; the spans that reading finds in `before` go into
/// `earlier`.
fn read(
    body: &[u8],
    mask: Option<u128>,
    reading: Reading,
    before: &[u8],
    earlier: &mut Vec<Span>,
) -> Vec<Span> {
    let mask = mask.unwrap_or_else(|| woken(body));
    let mut spans = find_spans_read(body, mask, 0, reading);
    if before.is_empty() {
        return spans;
    }
    // Whether this line is read as part of the one before depends on that line's text:
    // in scrollback the "continuation" may be a new command (`htpasswd -b … pw` after
    // `python -c '…' \`). Both readings count, so a secret never hides behind its
    // neighbour.
    let off = before.len() + 1;
    let mut joined = Vec::with_capacity(off + body.len());
    joined.extend_from_slice(before);
    joined.push(b' ');
    joined.extend_from_slice(body);
    for s in find_spans(&joined) {
        if s.end > off {
            spans.push(Span { start: s.start.max(off) - off, end: s.end - off, rule: s.rule });
        }
        if s.start < before.len() {
            earlier.push(Span { start: s.start, end: s.end.min(before.len()), rule: s.rule });
        }
    }
    spans
}

/// What a here-document's body line holds by what the body is, beyond what the rules
/// find: a reader's secret, a key file's content.
fn body_spans(text: &[u8], body_kind: Body, reading: Reading) -> Vec<Span> {
    match body_kind {
        Body::Plain => Vec::new(),
        Body::Secret { after_user } => heredoc::secret(text, after_user).into_iter().collect(),
        Body::BlockValue => {
            heredoc::secret(text, false).map(|s| Span { rule: "kv", ..s }).into_iter().collect()
        }
        Body::PairValue(class) => super::pair::value_line(text, class),
        Body::KeyFile(syntax) => heredoc::in_file(text, syntax).unwrap_or_else(|| {
            // The whole line only when the rules find nothing in it.
            let by_rules = read(text, None, reading, b"", &mut Vec::new());
            if by_rules.is_empty() { heredoc::whole(text).into_iter().collect() } else { Vec::new() }
        }),
    }
}

/// `body` with `spans` replaced, or `None` when there are none. A redaction can change
/// how the rest of its line reads (a quote or a path cut short, a name now beside a
/// marker): the result is read again, in the same context, until it stands, so that
/// redacting twice changes nothing.
fn redact(
    body: &[u8],
    spans: Vec<Span>,
    reading: Reading,
    before: &[u8],
    body_kind: Body,
    report: &mut Report,
) -> Option<Vec<u8>> {
    if spans.is_empty() {
        return None;
    }
    let mut text = Vec::with_capacity(body.len() + 16);
    apply(body, &merge(body, spans), &mut text, report);
    for _ in 0..REREADS {
        let mut again = read(&text, None, reading, before, &mut Vec::new());
        again.extend(body_spans(&text, body_kind, reading));
        if again.is_empty() {
            break;
        }
        let mut next = Vec::with_capacity(text.len() + 16);
        apply(&text, &merge(&text, again), &mut next, report);
        text = next;
    }
    Some(text)
}
