//! The library's dependency graph has one direction: a module names only modules of its
//! own layer or below, and modules of one layer never form a cycle. A new module must be
//! given a layer here; ARCHITECTURE.md explains the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Lower layers first. Leaves name nothing of the crate but other leaves.
const LAYERS: &[&[&str]] = &[
    // Leaves: the format, the world as read, and small tools.
    &[
        "lok",
        "probe",
        "exec",
        "fsutil",
        "sanitize",
        "human",
        "interrupt",
        "shell",
        "exit",
        "clock",
        "policy",
        "place",
    ],
    // Readers of the machine and the redactor; sealing of a finished file.
    &["capture", "redact", "seal"],
    // A snapshot, and the bundle format in both directions.
    &["snapshot", "bundle", "worktree"],
    // The agents whose sessions travel, each behind one interface, in `bundles`.
    &["agent"],
    // Putting a bundle back on disk.
    &["restore"],
    // What people and shells see: summaries, hooks, the newest file, tmux.
    &["summary", "hook", "latest", "tmux", "doctor", "archive", "watch", "relocate"],
    // The command line.
    &["cli", "cmd"],
];

/// The top-level modules a source text names through `crate::`.
fn named_modules(text: &str) -> BTreeSet<String> {
    names_after(text, "crate::")
}

fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path == src.join("lib.rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let first = rel.components().next().unwrap().as_os_str().to_str().unwrap();
            let module = first.trim_end_matches(".rs").to_string();
            let text = fs::read_to_string(&path).unwrap();
            for named in named_modules(&text) {
                if named != module {
                    graph.entry(module.clone()).or_default().insert(named);
                }
            }
            graph.entry(module).or_default();
        }
    }
    graph
}

/// What is wrong with `graph` under `layers`: a module with no layer, an edge that points
/// up, a cycle.
fn problems(graph: &BTreeMap<String, BTreeSet<String>>, layers: &[&[&str]], place: &str) -> Vec<String> {
    let layer_of = |module: &str| layers.iter().position(|l| l.contains(&module));
    let mut problems = Vec::new();
    for (from, tos) in graph {
        let Some(lf) = layer_of(from) else {
            problems.push(format!("{place}{from} has no layer in tests/layers.rs"));
            continue;
        };
        for to in tos {
            match layer_of(to) {
                None => problems.push(format!("{from} names {to}, which has no layer")),
                Some(lt) if lt > lf => {
                    problems.push(format!("{from} (layer {lf}) names {to} (layer {lt}), above it"))
                }
                _ => {}
            }
        }
    }
    // Cycles among modules (within a layer, since edges only point down or across).
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        problems: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == node) {
            problems.push(format!("cycle: {} -> {node}", path[i..].join(" -> ")));
            return;
        }
        if !done.insert(node.to_string()) {
            return;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done, problems);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, graph, &mut Vec::new(), &mut done, &mut problems);
    }
    problems
}

#[test]
fn every_dependency_points_down_and_no_layer_has_a_cycle() {
    let problems = problems(&edges(), LAYERS, "src/");
    assert!(problems.is_empty(), "the dependency graph is off:\n  {}", problems.join("\n  "));
}

/// The redactor's own modules, lower layers first, by the same rule: readings find
/// candidates and share what they need from below; the pipeline that runs them sits
/// above them, and the entry points above the pipeline. `mod` is the module's root, the
/// public face: no module inside names it.
const REDACT_LAYERS: &[&[&str]] = &[
    // What every reading shares: spans and counts, the judge of names and values, the
    // keyword finder, and small pieces of syntax.
    &["span", "report", "value", "lex", "memo", "view", "keywords", "find", "yaml_syntax", "quoting"],
    // What a value is when it is no literal; a secret found once, found again.
    &["shape", "echo"],
    // The readings, each of one form of text.
    &[
        "arrow",
        "assign",
        "declare",
        "expansion",
        "formats",
        "heredoc",
        "literal",
        "mnemonic",
        "pair",
        "pem",
        "prose",
        "table",
        "web",
        "yaml",
        "shell",
        "below",
    ],
    // Which rules a line wakes.
    &["gate", "rules"],
    // The pipeline for a line, and for a text line by line.
    &["scan"],
    &["text"],
    // JSON and a transcript's tool calls, whose strings are texts.
    &["json", "link"],
    // Streams.
    &["filter"],
    &["mod"],
];

/// The modules each module of `src/redact` names (`super::x`, `crate::redact::x`), its
/// tests left out: a test may drive the whole pipeline. Naming an item of the root counts
/// as naming `mod`.
fn redact_edges() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/redact");
    let mut modules = BTreeSet::new();
    for entry in fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(module) = name.strip_suffix(".rs")
            && module != "tests"
        {
            modules.insert(module.to_string());
        }
    }
    let root_items = root_items(&fs::read_to_string(dir.join("mod.rs")).unwrap());
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for module in &modules {
        let text = fs::read_to_string(dir.join(format!("{module}.rs"))).unwrap();
        // Test modules close every file (`#[cfg(test)] mod tests`).
        let code = text
            .match_indices("#[cfg(test)]\n")
            .find(|(at, m)| text[at + m.len()..].lines().next().is_some_and(|l| l.contains("mod ")))
            .map_or(&text[..], |(at, _)| &text[..at]);
        let mut named = BTreeSet::new();
        for prefix in ["super::", "crate::redact::"] {
            for name in names_after(code, prefix) {
                if name != *module && modules.contains(&name) {
                    named.insert(name);
                } else if root_items.contains(&name) {
                    named.insert("mod".to_string());
                }
            }
        }
        if module != "mod" {
            graph.insert(module.clone(), named);
        }
    }
    graph.insert("mod".to_string(), BTreeSet::new());
    graph
}

/// The names a source text gives after `prefix`, in `prefix::a` and `prefix::{a, b::c}`.
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident =
        |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue; // `super::super::x`, `lokust_crate::x`
        }
        let rest = &text[at + prefix.len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let list = &list[..list.find('}').unwrap_or(list.len())];
            out.extend(list.split(',').map(|part| ident(part.trim())).filter(|n| !n.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() && name != "super" {
                out.insert(name);
            }
        }
    }
    out
}

/// What the root of `src/redact` defines or re-exports.
fn root_items(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        let rest = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
        for kind in ["fn ", "struct ", "enum ", "const ", "static ", "type "] {
            if let Some(name) = rest.strip_prefix(kind) {
                out.insert(name.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect());
            }
        }
        if let Some(used) = rest.strip_prefix("use ") {
            let last = used.trim_end_matches(';').rsplit(['{', ',', ':', ' ']).next().unwrap_or("");
            out.insert(last.trim_end_matches('}').to_string());
            if let Some(list) = used.split_once('{').map(|(_, l)| l) {
                out.extend(
                    list.split(',')
                        .map(|p| p.trim().trim_end_matches("};").trim_end_matches('}').to_string()),
                );
            }
        }
    }
    out.remove("");
    out
}

#[test]
fn the_redactor_has_layers_too_and_no_cycle() {
    let problems = problems(&redact_edges(), REDACT_LAYERS, "src/redact/");
    assert!(problems.is_empty(), "the redactor's dependency graph is off:\n  {}", problems.join("\n  "));
}

#[test]
fn the_check_sees_names_in_every_form() {
    let text = "use crate::{a, b::c};\nuse crate::d::e;\nlet x = crate::f::g(); // lokust_crate::h";
    let names: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(names, ["a", "b", "d", "f"]);
}

#[test]
fn the_redactor_check_sees_names_in_every_form() {
    let text = "use super::{a, b::c};\nuse super::d::e;\nlet x = super::super::f(); crate::redact::g::h();";
    let names: Vec<String> = names_after(text, "super::").into_iter().collect();
    assert_eq!(names, ["a", "b", "d"]);
    assert_eq!(names_after(text, "crate::redact::").into_iter().collect::<Vec<_>>(), ["g"]);
    let root = root_items("pub use echo::{Echoes, collecting};\npub fn redact() {}\npub use report::Report;");
    assert_eq!(root.into_iter().collect::<Vec<_>>(), ["Echoes", "Report", "collecting", "redact"]);
}
