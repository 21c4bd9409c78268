//! A property test of the placement policy, through the built binaries: elements of every
//! kind and the git work, made of hostile entries chosen by a seeded generator (paths that
//! climb out, absolute paths, links out and link chains, config names in any case, a
//! credential file, devices), are restored into a private HOME and target. Whatever the
//! exit status: nothing outside the declared roots changes; no name the policy withholds
//! is laid in the target; no link under the roots points out of them; a dry run changes
//! nothing at all, and what a restore writes in the agents' stores is what its dry run
//! listed. `LOKUST_PLACEMENT_RUNS` (default 40) and `LOKUST_PLACEMENT_SEED`
//! explore further.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::util::TestEnv;
use crate::util::archive::{Raw, element_of, gzip, raw_tar};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Names an element's entry may take: some each kind accepts, the rest hostile.
const NAMES: &[&str] = &[
    "../escape",
    "/etc/owned",
    "a/../../escape",
    "sessions/../../escape",
    ".CLAUDE/settings.json",
    ".Mcp.Json",
    "opencode.jsonc",
    ".envrc",
    "config.json",
    "auth.json",
    "session-store.db",
    "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b/events.jsonl",
    "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b/../../escape",
    "chats/session-x.json",
    "droid_s1.jsonl",
    "ses_0a0b0c0d0e0fStrangerSession.json",
    "2025-01-27T15-30-45Z_a1b2c3.jsonl",
    "sessions/2026/11/24/rollout-2026-11-24T06-32-04-01a20c41-21e5-7a13-9fc0-01834a64b0db.jsonl",
    "d",
    "d/d/escape",
];

/// Link targets: inside, out, absolute, a chain.
const TARGETS: &[&str] = &["/etc/passwd", "../../..", ".", "d/d/../../../etc/passwd", "sub/file", "/"];

/// Untracked entries of the git work.
const UNTRACKED: &[&str] = &[
    "untracked/.claude/settings.json",
    "untracked/.CLAUDE/settings.json",
    "untracked/x/.MCP.JSON",
    "untracked/.vscode/tasks.json",
    "untracked/notes.txt",
    "untracked/../escape",
    "untracked/.git/hooks/post-checkout",
    "untracked/d",
    "untracked/d/escape",
];

const KINDS: &[&str] = &[
    "codex-sessions",
    "gemini-project",
    "droid-sessions",
    "opencode-sessions",
    "codeloops-sessions",
    "copilot-sessions",
];

/// Every path under `root` with its kind and content (a link's target), links not followed.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let Ok(m) = fs::symlink_metadata(&p) else { continue };
            let what = if m.file_type().is_symlink() {
                format!("link {}", fs::read_link(&p).map(|t| t.display().to_string()).unwrap_or_default())
            } else if m.is_dir() {
                stack.push(p.clone());
                "dir".into()
            } else {
                format!("file {}", fs::read(&p).map(|b| b.len()).unwrap_or(0))
            };
            out.insert(p, what);
        }
    }
    out
}

/// A well-formed element of `kind` made in `/old/p`: what a hostile entry is added to.
fn valid_entries(kind: &str) -> Vec<(String, Vec<u8>)> {
    let line = |v: serde_json::Value| format!("{v}\n").into_bytes();
    match kind {
        "copilot-sessions" => {
            let id = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
            let start = serde_json::json!({"type": "session.start", "id": "1d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
                "timestamp": "2026-11-24T06:32:04.935Z", "data": {"sessionId": id, "context": {"cwd": "/old/p"}}});
            vec![
                (format!("{id}/events.jsonl"), line(start)),
                (format!("{id}/workspace.yaml"), b"cwd: /old/p/sub\ngit_root: /old/p\n".to_vec()),
            ]
        }
        "droid-sessions" => {
            let id = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
            let start = serde_json::json!({"type": "session_start", "id": id, "cwd": "/old/p"});
            let msg = serde_json::json!({"type": "message", "id": "m1", "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}});
            let settings = serde_json::json!({"model": "m", "autonomyLevel": "high"});
            vec![
                (format!("{id}.jsonl"), [line(start), line(msg)].concat()),
                (format!("{id}.settings.json"), line(settings)),
            ]
        }
        "codeloops-sessions" => {
            let start = serde_json::json!({"type": "session_start", "timestamp": "2025-01-27T15:30:45Z", "prompt": "x",
                "working_dir": "/old/p", "actor_agent": "a", "critic_agent": "c"});
            vec![("2025-01-27T15-30-45Z_a1b2c3.jsonl".into(), line(start))]
        }
        "codex-sessions" => {
            let id = "01a20c41-21e5-7a13-9fc0-01834a64b0db";
            let meta = serde_json::json!({"timestamp": "2026-11-24T06:32:04.935Z", "type": "session_meta",
                "payload": {"id": id, "cwd": "/old/p"}});
            vec![(format!("sessions/2026/11/24/rollout-2026-11-24T06-32-04-{id}.jsonl"), line(meta))]
        }
        _ => {
            let header = serde_json::json!({"sessionId": "5e55-f0zz", "projectHash": "x", "startTime": "2026-11-24T00:00:00Z",
                "lastUpdated": "2026-11-24T00:00:00Z", "kind": "main"});
            let turn = serde_json::json!({"id": "m1", "type": "user", "content": [{"text": "hi"}]});
            vec![(
                "chats/session-2026-11-24T00-00-5e55f0zz.jsonl".into(),
                [line(header), line(turn)].concat(),
            )]
        }
    }
}

/// A tar of `n` hostile entries from `names`, some of them links or devices.
fn hostile_tar(rng: &mut Rng, kind: &str, names: &[&str], n: usize) -> Vec<u8> {
    let mut entries: Vec<(String, u8, Vec<u8>, String)> = Vec::new();
    // Half the elements start well-formed, so what is laid is tested, not only what is refused.
    let mut n = n;
    if rng.below(2) == 0 {
        entries.extend(valid_entries(kind).into_iter().map(|(n, d)| (n, b'0', d, String::new())));
        // And half of those stay well-formed, so every kind's placements are compared
        // with their plan.
        n *= rng.below(2);
    }
    for _ in 0..n {
        let name = rng.pick(names).to_string();
        let kind = match rng.below(6) {
            0 => b'2',
            1 if rng.below(4) == 0 => b'3',
            _ => b'0',
        };
        let target = if kind == b'2' { rng.pick(TARGETS).to_string() } else { String::new() };
        let data = if kind == b'0' { b"{\"hooks\":{}}\n".to_vec() } else { Vec::new() };
        entries.push((name, kind, data, target));
    }
    let raws: Vec<Raw<'_>> = entries
        .iter()
        .map(|(n, k, d, t)| Raw { name: n.as_bytes(), kind: *k, data: d, link: t.as_bytes() })
        .collect();
    raw_tar(&raws)
}

/// The paths below `home` that a restore's output names.
fn named_paths(home: &Path, out: &[u8]) -> Vec<PathBuf> {
    let text = String::from_utf8_lossy(out);
    let prefix = home.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for (at, _) in text.match_indices(prefix.as_str()) {
        let end = text[at..]
            .find(|c: char| c.is_whitespace() || c == ':' || c == ',')
            .map_or(text.len(), |e| at + e);
        found.push(PathBuf::from(&text[at..end]));
    }
    found
}

/// What the agents' placements changed below `home` is what the dry run listed, and what
/// the dry run said it would write is there: the plan and the file system agree. Claude
/// Code's project (placed by `restore/`) and lokust's own state are not placements.
fn same_as_planned(
    run: usize,
    home: &Path,
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
    dry: &[u8],
    real: &[u8],
) {
    // Each placement's own line, not the headers that name a whole store.
    let lines: Vec<&str> =
        std::str::from_utf8(dry).unwrap().lines().filter(|l| !l.contains(" would go to ")).collect();
    let planned = named_paths(home, lines.join("\n").as_bytes());
    let placement = |p: &Path| {
        p.strip_prefix(home).is_ok_and(|r| {
            !r.as_os_str().is_empty()
                && !r.to_string_lossy().starts_with(".claude")
                && !r.starts_with(".local/state")
        })
    };
    for (path, what) in after.iter().filter(|(p, w)| placement(p) && before.get(*p) != Some(*w)) {
        let listed = planned.iter().any(|n| path.starts_with(n) || (what == "dir" && n.starts_with(path)));
        assert!(
            listed,
            "run {run}: {} ({what}) was written but the dry run did not list it:\n{}",
            path.display(),
            String::from_utf8_lossy(dry)
        );
    }
    let refused = String::from_utf8_lossy(real).contains("refused");
    for line in String::from_utf8_lossy(dry).lines().filter(|l| l.contains(" → ")) {
        let Some(path) = named_paths(home, line.as_bytes()).into_iter().next() else { continue };
        assert!(
            refused || after.contains_key(&path),
            "run {run}: the dry run said {} would be written, and it is not there:\n{}",
            path.display(),
            String::from_utf8_lossy(real)
        );
    }
}

#[test]
fn hostile_placements_never_leave_their_roots_nor_lay_what_the_policy_withholds() {
    let runs: usize = std::env::var("LOKUST_PLACEMENT_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(40);
    let seed: u64 =
        std::env::var("LOKUST_PLACEMENT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1ace);
    let env = TestEnv::new();
    // A real file to start from: a Claude project and the git work of a checkout.
    let (_origin, work) = crate::util::work::scenario(env.root.path());
    let _ = fs::remove_file(work.join("deploy.env"));
    crate::util::claude::make_project(&env, &work);
    let (base, _) = crate::util::claude::snapshot(&env, &work, &[]);
    let base_doc: serde_json::Value = serde_json::from_slice(&fs::read(&base).unwrap()).unwrap();
    let worktree = base_doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "git-worktree")
        .cloned()
        .expect("the git work");
    let policy = lokust::agent::policy();
    let mut rng = Rng(seed);
    // How many runs laid something in the target or an agent's home: a generator whose
    // every file is refused would test nothing.
    let mut laid = 0;
    for run in 0..runs {
        let case = env.root.path().join(format!("case{run}"));
        let home = case.join("home");
        let target = case.join("target");
        fs::create_dir_all(&home).unwrap();
        // A checkout for the git work to land on, half the time.
        if rng.below(2) == 0 {
            crate::util::run_ok(
                std::process::Command::new("git").arg("clone").arg("-q").arg(&_origin).arg(&target),
            );
        }
        let mut bundles = Vec::new();
        for _ in 0..1 + rng.below(3) {
            if rng.below(3) == 0 {
                let mut e = worktree.clone();
                let mut list = crate::util::element::entries(&e);
                for _ in 0..1 + rng.below(3) {
                    let name = rng.pick(UNTRACKED).to_string();
                    let link = (rng.below(3) == 0).then(|| rng.pick(TARGETS).to_string());
                    list.push(crate::util::element::Entry { name, data: b"x\n".to_vec(), link, mode: 0o644 });
                }
                // Written byte by byte: a careful tar writer refuses `..`.
                let raws: Vec<Raw<'_>> = list
                    .iter()
                    .map(|x| Raw {
                        name: x.name.as_bytes(),
                        kind: if x.link.is_some() { b'2' } else { b'0' },
                        data: if x.link.is_some() { &[] } else { &x.data },
                        link: x.link.as_deref().unwrap_or("").as_bytes(),
                    })
                    .collect();
                let tar = raw_tar(&raws);
                let data = base64::engine::general_purpose::STANDARD.encode(gzip(&tar));
                e["uncompressed_bytes"] = tar.len().into();
                e["base64_bytes"] = data.len().into();
                e["data"] = data.into();
                bundles.push(e);
            } else {
                let kind = rng.pick(KINDS);
                let n = rng.below(3);
                bundles.push(element_of(kind, &hostile_tar(&mut rng, kind, NAMES, n), Some("/old/p")));
            }
        }
        let mut doc = base_doc.clone();
        doc["bundles"] = serde_json::Value::Array(bundles);
        let lok = case.join("hostile.lok");
        fs::write(&lok, serde_json::to_vec(&doc).unwrap()).unwrap();
        let restore = |extra: &[&str]| {
            env.cmd("lokust-shell-restore")
                .env("HOME", &home)
                .env("XDG_STATE_HOME", home.join(".local/state"))
                .arg(&lok)
                .arg("--to")
                .arg(&target)
                .args(extra)
                .output()
                .unwrap()
        };
        let outside = |root: &Path| {
            let mut t = tree(root);
            t.retain(|p, _| !p.starts_with(&home) && !p.starts_with(&target) && p != &lok);
            t
        };
        let before_all = tree(&case);
        let before_root = outside(env.root.path());
        let dry = restore(&["--dry-run"]);
        assert!(dry.status.code().is_some(), "run {run}: the dry run died");
        let after_dry = tree(&case);
        let changed: Vec<String> = after_dry
            .iter()
            .filter(|(p, w)| before_all.get(*p) != Some(*w))
            .map(|(p, w)| format!("{} {w}", p.display()))
            .chain(
                before_all
                    .keys()
                    .filter(|p| !after_dry.contains_key(*p))
                    .map(|p| format!("{} gone", p.display())),
            )
            .collect();
        assert!(
            changed.is_empty(),
            "run {run}: the dry run wrote {changed:?}\n{}",
            String::from_utf8_lossy(&dry.stderr)
        );
        let out = restore(&[]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code().is_some() && !said.contains("panicked"), "run {run}: {said}");
        same_as_planned(run, &home, &before_all, &tree(&case), &dry.stdout, &out.stdout);
        assert_eq!(
            outside(env.root.path()),
            before_root,
            "run {run}: something outside the roots changed: {said}"
        );
        // What the hostile elements laid: in the checkout, or in an agent's home other than
        // Claude Code's (whose bundle every run carries).
        let grown = tree(&case)
            .into_iter()
            .filter(|(p, _)| !before_all.contains_key(p) && p != &lok)
            .filter(|(p, _)| {
                p.strip_prefix(&target).is_ok_and(|r| !r.as_os_str().is_empty() && !r.starts_with(".git"))
                    || p.strip_prefix(&home).is_ok_and(|r| {
                        !r.to_string_lossy().starts_with(".claude") && !r.starts_with(".local/state")
                    })
            })
            .collect::<Vec<_>>();
        if run < 3 {
            println!(
                "run {run} laid {:?}",
                grown.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>()
            );
        }
        laid += usize::from(!grown.is_empty());
        let canon_roots =
            [fs::canonicalize(&home).unwrap(), fs::canonicalize(&target).unwrap_or(target.clone())];
        for (path, what) in tree(&case) {
            if what.starts_with("link") && (path.starts_with(&home) || path.starts_with(&target)) {
                let resolved = fs::canonicalize(&path);
                assert!(
                    resolved.is_err()
                        || canon_roots.iter().any(|r| resolved.as_ref().unwrap().starts_with(r)),
                    "run {run}: {} points out ({what})",
                    path.display()
                );
            }
            if let Ok(rel) = path.strip_prefix(&target)
                && !before_all.contains_key(&path)
                && !rel.starts_with(".git")
            {
                let rel = rel.to_string_lossy();
                assert!(policy.matches(&rel).is_none(), "run {run}: {rel} was laid without --trust-config");
            }
        }
    }
    println!("{runs} hostile files, {laid} of which laid something");
    assert!(laid * 10 >= runs, "only {laid} of {runs} runs laid anything: the generator tests too little");
}
