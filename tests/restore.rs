//! `lokust-shell-restore`: a bundled project comes back at a new path with its paths
//! rewritten and its extras in place; nothing is ever destroyed; hostile input is
//! refused whole with nothing written; an interruption leaves old or new state.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;

use crate::util::archive::{Raw, gzip, lok_doc, lok_of_tar, raw, raw_tar};
use crate::util::claude::{
    OLDER, SESSION, make_project, moved, new_slot, place_real_transcript, real_transcripts, snapshot,
};
use crate::util::{TestEnv, fixtures};
use crate::util::{stderr, stdout};

fn restore(env: &TestEnv, lok: &Path, to: &Path) -> assert_cmd::assert::Assert {
    env.cmd("lokust-shell-restore").arg(lok).arg("--to").arg(to).assert()
}

#[test]
fn restore_moves_the_project_to_a_path_with_a_dot_a_space_and_accents() {
    let env = TestEnv::new();
    let (lok, project) = moved(&env);
    let old = fs::canonicalize(project.parent().unwrap()).unwrap().join("proj");
    let old = old.to_str().unwrap();
    let target = env.root.path().join("new place/my.dir/naïve 日本");
    let a = restore(&env, &lok, &target).success();
    let out = stdout(&a);
    assert!(target.is_dir());
    let real = fs::canonicalize(&target).unwrap();
    let new = real.to_str().unwrap();
    assert!(out.contains(&format!("cd '{new}'")), "{out}");
    assert!(out.contains(&format!("claude --resume {SESSION}")), "{out}");

    let slot = new_slot(&env, &target);
    assert!(slot.file_name().unwrap().to_str().unwrap().ends_with("-new-place-my-dir-na-ve---"));
    let main = fs::read_to_string(slot.join(format!("{SESSION}.jsonl"))).unwrap();
    for line in main.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["cwd"], new);
        let n = &v["uuid"].as_str().unwrap()[2..];
        assert_eq!(v["toolUseResult"]["persistedOutputPath"], format!("{new}/.out/{n}.txt"));
        // A sibling directory sharing the prefix is left alone.
        assert_eq!(v["toolUseResult"]["other"].as_str().unwrap(), format!("{old}-2/x"));
    }
    assert!(!main.contains(&format!("\"{old}\"")));
    // Private files, and the newest conversation is "now" with the order kept.
    for f in [format!("{SESSION}.jsonl"), format!("{OLDER}.jsonl"), "memory/notes.md".into()] {
        assert_eq!(lokust::fsutil::mode(&slot.join(&f)).unwrap(), 0o600, "{f}");
    }
    let mtime = |p: PathBuf| fs::metadata(p).unwrap().mtime();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let newest = mtime(slot.join(format!("{SESSION}.jsonl")));
    assert!((now - newest).abs() < 120, "newest mtime {newest} vs now {now}");
    assert_eq!(newest - mtime(slot.join(format!("{OLDER}.jsonl"))), 3600);
    assert!(!slot.join(".lokust").exists());
    // The extras are where Claude Code looks for them.
    let config = env.home.join(".claude");
    assert!(config.join("file-history").join(SESSION).join("abc@v1").is_file());
    assert!(config.join("todos").join(format!("{SESSION}-agent-{SESSION}.json")).is_file());
    assert!(config.join("tasks").join(SESSION).join("1.json").is_file());
    let history = fs::read_to_string(config.join("history.jsonl")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(history.lines().next().unwrap()).unwrap();
    assert_eq!(entry["project"], new);
    let global: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(env.home.join(".claude.json")).unwrap()).unwrap();
    // Issue 10: only the inert keys of the sender's entry are installed by default.
    assert_eq!(global["projects"][new]["lastSessionId"], SESSION);
    for withheld in ["hasTrustDialogAccepted", "allowedTools", "mcpServers"] {
        assert!(global["projects"][new].get(withheld).is_none(), "{withheld} was installed");
    }
    assert_eq!(global["userID"], "u");
    // Nothing left in temp.
    assert_no_staging(&env);
}

fn assert_no_staging(env: &TestEnv) {
    let projects = env.home.join(".claude/projects");
    if let Ok(dir) = fs::read_dir(&projects) {
        for e in dir.flatten() {
            assert!(
                !e.file_name().to_string_lossy().starts_with(".lokust-restore-"),
                "left behind: {:?}",
                e.path()
            );
        }
    }
}

#[test]
fn restore_reads_standard_input_and_a_second_run_changes_nothing() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    env.cmd("lokust-shell-restore")
        .args(["-", "--to"])
        .arg(&target)
        .write_stdin(fs::read(&lok).unwrap())
        .assert()
        .success();
    let slot = new_slot(&env, &target);
    assert!(slot.join(format!("{SESSION}.jsonl")).is_file());
    let history = fs::read_to_string(env.home.join(".claude/history.jsonl")).unwrap();
    let a = restore(&env, &lok, &target).success();
    assert!(stdout(&a).contains("0 added, 7 unchanged, 0 replaced, 0 refused"), "{}", stdout(&a));
    // A dry run sees the same: every file would be unchanged, though its paths were rewritten.
    let dry = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).arg("-n").assert().success();
    let plan = stdout(&dry);
    assert!(plan.contains("same") && !plan.contains("conflict") && !plan.contains("add "), "{plan}");
    assert_eq!(fs::read_to_string(env.home.join(".claude/history.jsonl")).unwrap(), history);
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let env = TestEnv::new();
    let (lok, project) = moved(&env);
    let before = tree(env.root.path());
    let target = env.root.path().join("t/deeper");
    let a = env
        .cmd("lokust-shell-restore")
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--dry-run")
        .assert()
        .success();
    let out = stdout(&a);
    assert_eq!(tree(env.root.path()), before, "a dry run wrote something");
    let old = fs::canonicalize(project.parent().unwrap()).unwrap().join("proj");
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert!(out.contains(&format!("paths:     {} -> ", old.display())), "{out}");
    assert!(out.contains("add ") && out.contains(&format!("{SESSION}.jsonl")), "{out}");
}

#[test]
fn an_existing_transcript_with_other_content_is_kept_unless_forced() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("t");
    restore(&env, &lok, &target).success();
    let path = new_slot(&env, &target).join(format!("{SESSION}.jsonl"));
    fs::write(&path, "{\"type\":\"user\",\"mine\":true}\n").unwrap();
    let a = restore(&env, &lok, &target).code(2);
    assert!(stderr(&a).contains("were refused"), "{}", stderr(&a));
    assert!(
        stdout(&a).contains("refused:") && stdout(&a).contains(&format!("{SESSION}.jsonl")),
        "{}",
        stdout(&a)
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"type\":\"user\",\"mine\":true}\n");
    // The dry run ends as the restore would, and still changes nothing.
    let dry = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).arg("-n").assert().code(2);
    assert!(stdout(&dry).contains("conflict"), "{}", stdout(&dry));
    assert!(stderr(&dry).contains("would be refused"), "{}", stderr(&dry));
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"type\":\"user\",\"mine\":true}\n");

    let a =
        env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).arg("--force").assert().success();
    assert!(stdout(&a).contains("1 replaced"), "{}", stdout(&a));
    assert!(fs::read_to_string(&path).unwrap().contains("please fix the build"));
    let backups: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".lokust-backup-"))
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(fs::read_to_string(backups[0].path()).unwrap(), "{\"type\":\"user\",\"mine\":true}\n");
    assert_no_staging(&env);
}

#[test]
fn a_session_id_present_in_another_slot_is_reported() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let other = env.home.join(".claude/projects/-somewhere-else");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join(format!("{SESSION}.jsonl")), "{}\n").unwrap();
    let a = restore(&env, &lok, &env.root.path().join("t")).success();
    assert!(
        stdout(&a).contains(&format!("session {SESSION} also exists in -somewhere-else")),
        "{}",
        stdout(&a)
    );
}

#[test]
fn print_shell_emits_a_script_that_cds_there() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let target = env.root.path().join("it's here");
    let a = env
        .cmd("lokust-shell-restore")
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--print-shell")
        .assert()
        .success();
    let script = stdout(&a);
    assert!(stderr(&a).contains("Next:"), "{}", stderr(&a));
    let out = crate::util::run_ok(
        std::process::Command::new("sh").args(["-c", &format!("{script}\npwd; echo \"$LANG\"")]),
    );
    let real = fs::canonicalize(&target).unwrap();
    assert_eq!(out, format!("{}\nC.UTF-8\n", real.display()), "{script}");
}

#[test]
fn restore_tells_how_to_get_the_code_when_the_target_has_no_repository() {
    let env = TestEnv::new();
    let project = env.root.path().join("repo");
    crate::util::git_repo(&project);
    crate::util::git(&project, &["remote", "add", "origin", "https://example.invalid/team/repo.git"]);
    let slot = make_project(&env, &project);
    let (lok, _) = snapshot(&env, &project, &[]);
    fs::remove_dir_all(&slot).unwrap();
    let a = restore(&env, &lok, &env.root.path().join("elsewhere")).success();
    let out = stdout(&a);
    assert!(out.contains("git clone https://example.invalid/team/repo.git ."), "{out}");
    assert!(out.contains("git checkout main"), "{out}");
    let a = restore(&env, &lok, &project).success();
    assert!(stdout(&a).contains("as in the snapshot"), "{}", stdout(&a));
}

#[test]
fn temp_dirs_of_killed_runs_are_removed() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let stale = env.home.join(".claude/projects/.lokust-restore-999999999-dead");
    fs::create_dir_all(stale.join("tree")).unwrap();
    let a = restore(&env, &lok, &env.root.path().join("t")).success();
    assert!(!stale.exists());
    assert!(stdout(&a).contains("left by an interrupted run"), "{}", stdout(&a));
}

// ---------------------------------------------------------------------------
// Hostile input

/// Every file below `root` with its size, mode and content hash: "nothing written" means
/// this is unchanged.
fn tree(root: &Path) -> BTreeMap<PathBuf, (u64, u32, u32)> {
    let mut out = BTreeMap::new();
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (u64, u32, u32)>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let meta = fs::symlink_metadata(e.path()).unwrap();
            let crc = if meta.is_file() { crc32fast::hash(&fs::read(e.path()).unwrap()) } else { 0 };
            out.insert(e.path(), (if meta.is_dir() { 0 } else { meta.len() }, meta.mode(), crc));
            if meta.is_dir() {
                walk(&e.path(), out);
            }
        }
    }
    walk(root, &mut out);
    out
}

const GOOD: &[u8] = b"{\"cwd\":\"/old/proj\"}\n";

/// Runs a restore of `doc` (file and standard input) and checks it is refused with
/// `message` (for a file; `|` separates the one for standard input when it differs),
/// exit status 2, and that nothing changed anywhere below the test root.
fn assert_refused(doc: &[u8], message: &str, extra: &[&str]) {
    let (for_file, for_stdin) = message.split_once('|').unwrap_or((message, message));
    for via_stdin in [false, true] {
        let env = TestEnv::new();
        fs::create_dir_all(env.home.join(".claude/projects/-existing")).unwrap();
        fs::write(env.home.join(".claude/projects/-existing/a.jsonl"), "{}\n").unwrap();
        let path = env.write("bad.lok", doc);
        let before = tree(env.root.path());
        let target = env.root.path().join("target");
        let mut cmd = env.cmd("lokust-shell-restore");
        if via_stdin {
            cmd.arg("-").write_stdin(doc.to_vec());
        } else {
            cmd.arg(&path);
        }
        let a = cmd.arg("--to").arg(&target).args(extra).assert().code(2);
        let err = stderr(&a);
        let message = if via_stdin { for_stdin } else { for_file };
        assert!(err.starts_with("lokust: ") && err.contains(message), "want {message:?}, got: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(stdout(&a).is_empty(), "{}", stdout(&a));
        assert_eq!(
            tree(env.root.path()),
            before,
            "something was written for {message:?} (stdin: {via_stdin})"
        );
    }
}

#[test]
fn entries_outside_the_root_are_refused() {
    for (name, why) in [
        (&b"-old-proj/../../escape.jsonl"[..], "outside its root"),
        (b"/etc/evil.jsonl", "outside its root"),
        (b"-another-slot/a.jsonl", "outside its root"),
    ] {
        let tar = raw_tar(&[
            raw(b"-old-proj/", b'5', b""),
            raw(b"-old-proj/a.jsonl", b'0', GOOD),
            raw(name, b'0', GOOD),
        ]);
        assert_refused(&serde_json::to_vec(&lok_of_tar(&tar)).unwrap(), why, &[]);
    }
}

#[test]
fn links_devices_and_fifos_are_refused() {
    let link = |kind: u8| {
        raw_tar(&[
            raw(b"-old-proj/", b'5', b""),
            Raw { name: b"-old-proj/x.jsonl", kind, data: b"", link: b"/etc/passwd" },
        ])
    };
    for (kind, why) in [
        (b'2', "symbolic link"),
        (b'1', "hard link"),
        (b'3', "device file"),
        (b'4', "device file"),
        (b'6', "FIFO"),
    ] {
        assert_refused(&serde_json::to_vec(&lok_of_tar(&link(kind))).unwrap(), why, &[]);
    }
}

#[test]
fn a_bundle_that_inflates_past_its_budget_is_refused() {
    static BIG: [u8; 4 << 20] = [b'a'; 4 << 20];
    let tar = raw_tar(&[raw(b"-old-proj/", b'5', b""), raw(b"-old-proj/big.jsonl", b'0', &BIG)]);
    let data = base64::engine::general_purpose::STANDARD.encode(gzip(&tar));
    // Declared 10 KB, inflates to 4 MB: a decompression bomb.
    assert_refused(&serde_json::to_vec(&lok_doc(&data, 10_000)).unwrap(), "declared uncompressed_bytes", &[]);
    // Declared honestly, but above the ceiling.
    assert_refused(
        &serde_json::to_vec(&lok_doc(&data, tar.len() as u64)).unwrap(),
        "--max-size",
        &["--max-size", "1M"],
    );
}

#[test]
fn bad_base64_gzip_and_tar_are_refused() {
    let tar = raw_tar(&[raw(b"-old-proj/", b'5', b""), raw(b"-old-proj/a.jsonl", b'0', GOOD)]);
    let mut doc = lok_of_tar(&tar);
    let good = doc["bundle"]["data"].as_str().unwrap().to_string();
    let bad = format!("{}!!{}", &good[..8], &good[10..]);
    doc["bundle"]["data"] = bad.clone().into();
    assert_refused(&serde_json::to_vec(&doc).unwrap(), "not valid base64", &[]);

    let not_gzip = base64::engine::general_purpose::STANDARD.encode(b"this is not gzip at all, just text");
    assert_refused(&serde_json::to_vec(&lok_doc(&not_gzip, 100)).unwrap(), "not valid gzip", &[]);

    let mut garbage = vec![0x55u8; 2048];
    garbage[..4].copy_from_slice(b"junk");
    let not_tar = base64::engine::general_purpose::STANDARD.encode(gzip(&garbage));
    assert_refused(&serde_json::to_vec(&lok_doc(&not_tar, 2048)).unwrap(), "not a valid tar", &[]);

    let mut truncated = lok_of_tar(&tar);
    let t = truncated["bundle"]["data"].as_str().unwrap();
    truncated["bundle"]["data"] = t[..t.len() - 8].to_string().into();
    // From a file the lengths disagree before anything is read; streamed, the gzip ends early.
    assert_refused(&serde_json::to_vec(&truncated).unwrap(), "base64_bytes|not valid gzip", &[]);
}

#[test]
fn documents_that_are_not_a_restorable_shell_session_are_refused() {
    let tar = raw_tar(&[raw(b"-old-proj/", b'5', b""), raw(b"-old-proj/a.jsonl", b'0', GOOD)]);
    let good = lok_of_tar(&tar);
    let coordination = fs::read(crate::util::fixtures().join("lok/coordination.lok")).unwrap();
    assert_refused(&coordination, "is a coordination session", &[]);
    assert_refused(&coordination, "lokust-shell inspect", &[]);
    let mut future = good.clone();
    future["format_version"] = 2.into();
    assert_refused(&serde_json::to_vec(&future).unwrap(), "uses format_version 2", &[]);
    let mut kind = good.clone();
    kind["bundle"]["kind"] = "editor-state".into();
    assert_refused(&serde_json::to_vec(&kind).unwrap(), "bundle.kind is \"editor-state\"", &[]);
    let mut format = good.clone();
    format["bundle"]["format"] = "tar.zst+base64".into();
    assert_refused(&serde_json::to_vec(&format).unwrap(), "bundle.format is \"tar.zst+base64\"", &[]);
    let mut none = good.clone();
    none.as_object_mut().unwrap().remove("bundle");
    assert_refused(&serde_json::to_vec(&none).unwrap(), "has no bundle", &[]);
    let text = serde_json::to_vec(&good).unwrap();
    assert_refused(&text[..text.len() - 30], "not valid JSON", &[]);
    assert_refused(b"[1,2]", "not valid JSON", &[]);
}

// ---------------------------------------------------------------------------
// Interruptions

/// A bundle big enough that a restore takes a moment: many transcripts.
fn big_bundle(env: &TestEnv) -> PathBuf {
    let project = env.root.path().join("big");
    let slot = make_project(env, &project);
    let mut line = String::new();
    for i in 0..1000 {
        line.push_str(&format!(
            "{{\"type\":\"user\",\"n\":{i},\"message\":{{\"content\":\"word {} {i}\"}}}}\n",
            "lorem ipsum ".repeat(8)
        ));
    }
    for i in 0..80 {
        fs::write(slot.join(format!("{i:08}-0000-4000-8000-000000000000.jsonl")), &line).unwrap();
    }
    let (lok, _) = snapshot(env, &project, &["--no-redact-bundle"]);
    fs::remove_dir_all(env.home.join(".claude/projects")).unwrap();
    fs::create_dir_all(env.home.join(".claude/projects")).unwrap();
    lok
}

fn staging_dirs(env: &TestEnv) -> Vec<PathBuf> {
    fs::read_dir(env.home.join(".claude/projects"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(".lokust-restore-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for_staging(env: &TestEnv, child: &mut std::process::Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if !staging_dirs(env).is_empty() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

fn spawn_restore(env: &TestEnv, lok: &Path, target: &Path) -> std::process::Child {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("lokust-shell-restore"));
    cmd.env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg(lok)
        .arg("--to")
        .arg(target)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    cmd.spawn().unwrap()
}

#[test]
fn ctrl_c_during_a_restore_changes_nothing_and_exits_130() {
    let env = TestEnv::new();
    let lok = big_bundle(&env);
    let target = env.root.path().join("t");
    let mut child = spawn_restore(&env, &lok, &target);
    assert!(wait_for_staging(&env, &mut child), "the restore finished before it could be interrupted");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_bounded(child);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted; nothing was changed"));
    assert!(staging_dirs(&env).is_empty());
    assert!(!target.exists());
    assert_eq!(fs::read_dir(env.home.join(".claude/projects")).unwrap().count(), 0);
}

fn wait_bounded(mut child: std::process::Child) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the restore did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_restore_killed_at_any_moment_leaves_old_or_new_state() {
    let env = TestEnv::new();
    let lok = big_bundle(&env);
    let target = env.root.path().join("t");
    // Learn the finished state once.
    restore(&env, &lok, &target).success();
    let slot = new_slot(&env, &target);
    let done = tree(&slot);
    fs::remove_dir_all(&slot).unwrap();
    for (round, delay_ms) in [0u64, 30, 100, 300, 0, 30, 100, 300].into_iter().enumerate() {
        // Half the rounds merge into an existing slot, file by file.
        let merging = round >= 4;
        if merging {
            fs::create_dir_all(&slot).unwrap();
            fs::write(slot.join("keep.jsonl"), "{\"mine\":1}\n").unwrap();
        }
        let mut child = spawn_restore(&env, &lok, &target);
        wait_for_staging(&env, &mut child);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = wait_bounded(child);
        if slot.exists() {
            let now = tree(&slot);
            for (k, v) in &now {
                if k.ends_with("keep.jsonl") {
                    assert_eq!(fs::read_to_string(k).unwrap(), "{\"mine\":1}\n");
                    continue;
                }
                let want =
                    done.get(k).unwrap_or_else(|| panic!("{} is not part of the restore", k.display()));
                // Every file is either absent (old state) or whole (new state).
                assert_eq!(v.2, want.2, "{} half-written after {delay_ms} ms", k.display());
            }
            if !merging {
                assert_eq!(now.len(), done.len(), "a half-restored new slot after {delay_ms} ms");
            }
        }
        // The next run cleans up whatever the killed one left, and completes.
        restore(&env, &lok, &target).success();
        assert!(staging_dirs(&env).is_empty());
        assert_eq!(tree(&slot).len(), done.len() + usize::from(merging));
        fs::remove_dir_all(&slot).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Real transcripts

#[test]
fn real_transcripts_survive_the_move_byte_for_byte() {
    let root = fixtures().join("real/claude-code");
    let files = real_transcripts(&root);
    assert!(files.len() >= 8, "{files:?}");
    for file in files {
        let env = TestEnv::new();
        let project = env.root.path().join("orig/cli");
        let (id, slot) = place_real_transcript(&env, &file, &project);
        let before = fs::read_to_string(slot.join(format!("{id}.jsonl"))).unwrap();
        let (lok, _) = snapshot(&env, &project, &[]);
        fs::remove_dir_all(&slot).unwrap();
        let target = env.root.path().join("new/a.b c/ü");
        restore(&env, &lok, &target).success();
        let after = fs::read_to_string(new_slot(&env, &target).join(format!("{id}.jsonl"))).unwrap();
        let old = fs::canonicalize(&project).unwrap();
        let new = fs::canonicalize(&target).unwrap();
        assert_eq!(before.lines().count(), after.lines().count(), "{}", file.display());
        for (b, a) in before.lines().zip(after.lines()) {
            let v: serde_json::Value =
                serde_json::from_str(a).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if let Some(cwd) = v.get("cwd").and_then(|c| c.as_str()) {
                assert_eq!(Path::new(cwd), new, "{}", file.display());
            }
            // Every other byte is kept: mapping the new path back gives the line as it was
            // (up to what the redactor replaced).
            let back = a.replace(new.to_str().unwrap(), old.to_str().unwrap());
            if !a.contains("[REDACTED]") {
                assert_eq!(back, b, "{}", file.display());
            }
        }
    }
}

/// A bundle from a writer that knows only the spec: no manifest, and a snapshot cwd that
/// is not the path the events recorded. The events' own cwd is rewritten too.
#[test]
fn a_spec_only_bundle_is_restored_by_the_events_cwd() {
    let env = TestEnv::new();
    let line = b"{\"type\":\"user\",\"cwd\":\"/real/elsewhere/proj\",\"sessionId\":\"abc\",\"f\":\"/real/elsewhere/proj/src/x.rs\"}\n";
    let tar = raw_tar(&[
        raw(b"-real-elsewhere-proj/", b'5', b""),
        raw(b"-real-elsewhere-proj/abc.jsonl", b'0', line),
    ]);
    let lok = env.write("foreign.lok", serde_json::to_vec(&lok_of_tar(&tar)).unwrap());
    let target = env.root.path().join("here");
    let a = restore(&env, &lok, &target).success();
    assert!(stdout(&a).contains("claude --resume abc"), "{}", stdout(&a));
    let new = fs::canonicalize(&target).unwrap();
    let text = fs::read_to_string(new_slot(&env, &target).join("abc.jsonl")).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["cwd"], new.to_str().unwrap());
    assert_eq!(v["f"], format!("{}/src/x.rs", new.display()));
}

/// The events' cwd is read from the first transcript staged, and every file is rewritten
/// for it: those staged before (a subagent's, one that records no cwd) and those after.
#[test]
fn every_file_of_a_bundle_is_rewritten_for_the_events_cwd_whatever_the_order() {
    let env = TestEnv::new();
    let event = |id: &str| {
        format!(
            "{{\"type\":\"user\",\"cwd\":\"/real/elsewhere/proj\",\"sessionId\":\"{id}\",\"f\":\"/real/elsewhere/proj/x.rs\"}}\n"
        )
    };
    let sub = event("aaa");
    let (first, second) = (event("bbb"), event("ccc"));
    let no_cwd = b"{\"type\":\"summary\",\"summary\":\"in /real/elsewhere/proj/y\"}\n";
    let tar = raw_tar(&[
        raw(b"-real-elsewhere-proj/", b'5', b""),
        raw(b"-real-elsewhere-proj/aaa/", b'5', b""),
        raw(b"-real-elsewhere-proj/aaa/subagents/", b'5', b""),
        raw(b"-real-elsewhere-proj/aaa/subagents/agent-1.jsonl", b'0', sub.as_bytes()),
        raw(b"-real-elsewhere-proj/000.jsonl", b'0', no_cwd),
        raw(b"-real-elsewhere-proj/bbb.jsonl", b'0', first.as_bytes()),
        raw(b"-real-elsewhere-proj/ccc.jsonl", b'0', second.as_bytes()),
    ]);
    let lok = env.write("foreign.lok", serde_json::to_vec(&lok_of_tar(&tar)).unwrap());
    let target = env.root.path().join("here");
    restore(&env, &lok, &target).success();
    let new = fs::canonicalize(&target).unwrap();
    let slot = new_slot(&env, &target);
    for file in ["aaa/subagents/agent-1.jsonl", "000.jsonl", "bbb.jsonl", "ccc.jsonl"] {
        let text = fs::read_to_string(slot.join(file)).unwrap();
        assert!(!text.contains("/real/elsewhere"), "{file}: {text}");
        assert!(text.contains(new.to_str().unwrap()), "{file}: {text}");
    }
}

/// `lokust-shell restore` is the same command, and CLAUDE_CONFIG_DIR moves everything:
/// the slot, the extras and the `.claude.json` that lives inside it.
#[test]
fn the_umbrella_command_restores_into_claude_config_dir() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let config = env.root.path().join("cfg");
    let target = env.root.path().join("t");
    env.cmd("lokust-shell")
        .env("CLAUDE_CONFIG_DIR", &config)
        .arg("restore")
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--trust-config")
        .assert()
        .success();
    let real = fs::canonicalize(&target).unwrap();
    let slot = config.join("projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()));
    assert!(slot.join(format!("{SESSION}.jsonl")).is_file());
    assert!(config.join("file-history").join(SESSION).join("abc@v1").is_file());
    let global: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(config.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(global["projects"][real.to_str().unwrap()]["allowedTools"][0], "Bash");
    assert_eq!(lokust::fsutil::mode(&config.join(".claude.json")).unwrap(), 0o600);
    // The old ~/.claude was not touched.
    assert_eq!(fs::read_dir(env.home.join(".claude/projects")).unwrap().count(), 0);
}

/// `restore --latest` after a crash: a live file without a bundle says where the shell
/// was and how to get back; a bundled snapshot is restored at its own directory.
#[test]
fn latest_says_where_the_lost_shell_was_and_restores_a_bundle_in_place() {
    let env = TestEnv::new();
    // No snapshot at all: a clear error.
    let out = env.cmd("lokust-shell").args(["restore", "--latest"]).assert().code(2);
    assert!(stderr(&out).contains("no snapshot found"), "{}", stderr(&out));

    let project = env.root.path().join("was here");
    fs::create_dir_all(&project).unwrap();
    let live = env.home.join(".local/state/lokust/live");
    fs::create_dir_all(&live).unwrap();
    // A live file of a shell that has ended (no such pid), with two commands typed.
    env.cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["-q", "--history-from", "-", "-o"])
        .arg(live.join("999999999.lok"))
        .write_stdin("make test\0git push\0")
        .assert()
        .success();
    let out = env.cmd("lokust-shell").args(["restore", "--latest"]).assert().success();
    let text = stdout(&out);
    assert!(text.starts_with(&format!("The shell was in {}\n", project.display())), "{text}");
    assert!(text.contains("    make test\n    git push\n"), "{text}");
    assert!(text.contains(&format!("  cd '{}'", project.display())), "{text}");
    assert!(stderr(&out).contains("live snapshot of a shell that has ended"), "{}", stderr(&out));
    let out = env.cmd("lokust-shell").args(["restore", "--latest", "--print-shell"]).assert().success();
    assert!(stdout(&out).starts_with(&format!("cd '{}'\n", project.display())), "{}", stdout(&out));

    // A newer bundled snapshot: restored where it was taken, no --to needed.
    let moved = env.root.path().join("proj");
    make_project(&env, &moved);
    let (lok, _) = snapshot(&env, &moved, &[]);
    let snapshots = env.home.join(".local/state/lokust/snapshots");
    fs::create_dir_all(&snapshots).unwrap();
    fs::rename(&lok, snapshots.join("s.lok")).unwrap();
    // The conversations were lost with the machine's state (the redacted copies in the
    // bundle would otherwise be refused next to the originals).
    fs::remove_dir_all(new_slot(&env, &moved)).unwrap();
    let out = env.cmd("lokust-shell").args(["restore", "--latest"]).assert().success();
    assert!(stdout(&out).contains(&format!("claude --resume {SESSION}")), "{}", stdout(&out));
    assert!(new_slot(&env, &moved).join(format!("{SESSION}.jsonl")).is_file());
}

/// `lokust-shell-restore <(ssh host lokust-shell-snapshot --bundle) --to DIR`: the file
/// is a pipe that can be read only once.
#[test]
fn a_named_pipe_is_read_once_as_a_stream() {
    let env = TestEnv::new();
    let (lok, _) = moved(&env);
    let fifo = env.root.path().join("pipe.lok");
    crate::util::run_ok(std::process::Command::new("mkfifo").arg(&fifo));
    let bytes = fs::read(&lok).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(fifo, bytes))
    };
    let target = env.root.path().join("t");
    restore(&env, &fifo, &target).success();
    writer.join().unwrap().unwrap();
    assert!(new_slot(&env, &target).join(format!("{SESSION}.jsonl")).is_file());
}

/// Transcripts that record another cwd than the bundle names (the project was opened
/// through a link) are rewritten for it too; the dry run compares what the restore would
/// write, so over an identical restore it finds every file the same, and exits 0.
#[test]
fn a_dry_run_compares_as_the_restore_writes_when_the_transcripts_record_another_cwd() {
    let env = TestEnv::new();
    let real = env.root.path().join("real/proj");
    fs::create_dir_all(&real).unwrap();
    let real = fs::canonicalize(&real).unwrap();
    let link = env.root.path().join("link");
    std::os::unix::fs::symlink(real.parent().unwrap(), &link).unwrap();
    let logical = link.join("proj");
    let slot =
        env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()));
    fs::create_dir_all(&slot).unwrap();
    let line = |n: usize| {
        serde_json::json!({"type": "user", "uuid": format!("u-{n}"), "sessionId": SESSION, "cwd": logical,
            "timestamp": "2026-01-01T10:00:00.000Z",
            "message": {"role": "user", "content": format!("read {}/src/{n}.rs", logical.display())}})
        .to_string()
    };
    fs::write(slot.join(format!("{SESSION}.jsonl")), format!("{}\n{}\n", line(0), line(1))).unwrap();
    let (lok, _) = crate::util::claude::snapshot(&env, &real, &[]);
    fs::remove_dir_all(env.home.join(".claude/projects")).unwrap();
    let target = env.root.path().join("t");
    restore(&env, &lok, &target).success();
    let placed = fs::read_to_string(new_slot(&env, &target).join(format!("{SESSION}.jsonl"))).unwrap();
    let target = fs::canonicalize(&target).unwrap();
    assert!(placed.contains(&format!("read {}/src/1.rs", target.display())), "{placed}");
    assert!(!placed.contains(&*logical.to_string_lossy()), "{placed}");
    let dry = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).arg("-n").assert().success();
    let plan = stdout(&dry);
    assert!(plan.contains("same") && !plan.contains("conflict"), "{plan}");
}
