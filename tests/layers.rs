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

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level modules a source text names through `crate::`.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = text[at..].find("crate::") {
        let start = at + i + "crate::".len();
        at = start;
        if start > "crate::".len() && (bytes[start - 8].is_ascii_alphanumeric() || bytes[start - 8] == b'_') {
            continue; // `lokust_crate::` or the like
        }
        if text[start..].starts_with('{') {
            // `use crate::{a, b::c};`
            let end = text[start..].find('}').map_or(text.len(), |e| start + e);
            for part in text[start + 1..end].split(',') {
                let name: String =
                    part.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String =
                text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
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

#[test]
fn every_dependency_points_down_and_no_layer_has_a_cycle() {
    let graph = edges();
    let mut problems = Vec::new();
    for (from, tos) in &graph {
        let Some(lf) = layer_of(from) else {
            problems.push(format!("src/{from} has no layer in tests/layers.rs"));
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
        visit(node, &graph, &mut Vec::new(), &mut done, &mut problems);
    }
    assert!(problems.is_empty(), "the dependency graph is off:\n  {}", problems.join("\n  "));
}

#[test]
fn the_check_sees_names_in_every_form() {
    let text = "use crate::{a, b::c};\nuse crate::d::e;\nlet x = crate::f::g(); // lokust_crate::h";
    let names: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(names, ["a", "b", "d", "f"]);
}
