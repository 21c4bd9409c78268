//! `lokust-shell move`: a project renamed on one machine keeps its conversations. A real
//! Claude Code conversation and a Codex rollout made in `P/a`, then `move P/a P/b
//! --move-dir`: the real CLI resumes the conversation in `P/b` with its history, the
//! rollout names `P/b`, the old copies are gone, and the backup is in the archive. And
//! what must refuse: an agent working in OLD, a NEW with conversations of its own.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::claude::{cli_bin, cli_conversation, run_cli};
use crate::util::standin;
use crate::util::{TestEnv, stderr, stdout};

const CODEX_ID: &str = "019d56b2-7a2c-7d41-9f3e-0c1b2a3d4e5f";

fn slot_dir(env: &TestEnv, project: &str) -> PathBuf {
    env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(project))
}

/// A Codex conversation of `dir`, as Codex writes its rollouts.
fn codex_rollout(env: &TestEnv, dir: &Path) -> PathBuf {
    crate::util::codex_rollout(&env.home, dir, CODEX_ID)
}

/// An archived Codex rollout of the same id for another folder: a copy the restore keeps
/// where it is, so a move laying the id fails after laying the rest. Its folder.
fn archived_codex_copy(env: &TestEnv) -> PathBuf {
    let archived = env.home.join(".codex/archived_sessions");
    fs::create_dir_all(&archived).unwrap();
    let meta = serde_json::json!({"timestamp": "2026-11-24T06:32:04.935Z", "type": "session_meta",
        "payload": {"id": CODEX_ID, "cwd": "/somewhere/else"}});
    fs::write(archived.join(format!("rollout-2026-11-24T06-32-04-{CODEX_ID}.jsonl")), format!("{meta}\n"))
        .unwrap();
    archived
}

fn rollouts(env: &TestEnv) -> Vec<PathBuf> {
    crate::util::files_below(&env.home.join(".codex"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(CODEX_ID))
        .collect()
}

#[test]
fn a_moved_project_keeps_its_conversations_and_resumes_in_the_new_place() {
    let Some(bin) = cli_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let base = fs::canonicalize(env.root.path()).unwrap().join("P");
    let a = base.join("a");
    let b = base.join("b");
    fs::create_dir_all(&a).unwrap();
    let url = api.url();
    let id = cli_conversation(&bin, &url, &env.home, &a, "remember MOVED-WORD");
    let old_rollout = codex_rollout(&env, &a);
    let old_slot = slot_dir(&env, a.to_str().unwrap());
    assert!(old_slot.join(format!("{id}.jsonl")).is_file());

    // A dry run changes nothing.
    let dry = env
        .cmd("lokust-shell")
        .arg("move")
        .arg(&a)
        .arg(&b)
        .args(["--move-dir", "--dry-run"])
        .assert()
        .success();
    assert!(
        stdout(&dry).contains("Claude Code: 1 conversation")
            && stdout(&dry).contains("Codex CLI: 1 conversation"),
        "{}",
        stdout(&dry)
    );
    assert!(a.is_dir() && !b.exists() && old_slot.is_dir() && old_rollout.is_file());

    let done = env.cmd("lokust-shell").arg("move").arg(&a).arg(&b).arg("--move-dir").assert().success();
    let said = stdout(&done);
    assert!(b.is_dir() && !a.exists(), "{said}");
    assert!(!old_slot.exists(), "the old slot is still there");
    let new_slot = slot_dir(&env, b.to_str().unwrap());
    assert!(new_slot.join(format!("{id}.jsonl")).is_file(), "{said}");
    let codex = rollouts(&env);
    assert_eq!(codex.len(), 1, "{codex:?}");
    assert!(fs::read_to_string(&codex[0]).unwrap().contains(b.to_str().unwrap()));
    assert!(!fs::read_to_string(&codex[0]).unwrap().contains(&format!("\"{}\"", a.display())));
    // The backup is the old copies themselves, renamed into the archive, each at its path
    // in its agent's store, byte for byte as they were.
    let backup = Path::new(said.lines().find_map(|l| l.strip_prefix("backup: ")).expect("the backup's path"));
    let kept_slot = backup.join("claude/projects").join(old_slot.file_name().unwrap());
    let kept = fs::read_to_string(kept_slot.join(format!("{id}.jsonl"))).unwrap();
    assert!(kept.contains(&format!("\"cwd\":\"{}\"", a.display())), "{kept}");
    let codex_home = env.home.join(".codex");
    let kept_rollout = backup.join("codex").join(old_rollout.strip_prefix(&codex_home).unwrap());
    assert!(fs::read_to_string(&kept_rollout).unwrap().contains(a.to_str().unwrap()));
    assert_eq!(lokust::fsutil::mode(backup).unwrap(), 0o700);
    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    assert!(list.contains(a.to_str().unwrap()), "{list}");

    // The real CLI resumes it in the new place, with its history.
    let out = run_cli(&bin, &url, &env.home, &b, &["-p", "--resume", &id, "which word?"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bodies = api.bodies("/v1/messages");
    assert!(bodies.iter().any(|body| body.contains("which word?") && body.contains("MOVED-WORD")));
    let found = stdout(&env.cmd("lokust-shell").args(["find", CODEX_ID]).assert().success());
    assert!(found.contains(&format!("{} (exists)", b.display())), "{found}");

    // NEW holding conversations of its own: refused, nothing changed.
    let c = base.join("c");
    fs::create_dir_all(&c).unwrap();
    cli_conversation(&bin, &url, &env.home, &c, "c's own");
    let a = env.cmd("lokust-shell").arg("move").arg(&b).arg(&c).assert().failure();
    assert_eq!(a.get_output().status.code(), Some(2));
    assert!(stderr(&a).contains("already"), "{}", stderr(&a));
    assert!(new_slot.join(format!("{id}.jsonl")).is_file());
}

#[test]
fn an_agent_working_in_the_old_folder_refuses_the_move() {
    let env = TestEnv::new();
    let base = fs::canonicalize(env.root.path()).unwrap();
    let a = base.join("a");
    fs::create_dir_all(&a).unwrap();
    codex_rollout(&env, &a);
    // A program named like an agent, working in OLD.
    let bin = base.join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::copy("/bin/sleep", bin.join("codex")).unwrap();
    let mut agent =
        std::process::Command::new(bin.join("codex")).arg("30").current_dir(a.join(".")).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out =
        env.cmd("lokust-shell").arg("move").arg(&a).arg(base.join("b")).arg("--move-dir").assert().failure();
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(out.get_output().status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("pid {}", agent.id())), "{}", stderr(&out));
    assert!(a.is_dir() && !base.join("b").exists());
    assert_eq!(rollouts(&env).len(), 1);
}

/// A transcript of `cwd` in its Claude Code slot.
fn transcript(env: &TestEnv, cwd: &Path, id: &str) -> PathBuf {
    let slot = slot_dir(env, cwd.to_str().unwrap());
    fs::create_dir_all(&slot).unwrap();
    let line = serde_json::json!({"type": "user", "uuid": "u1", "sessionId": id, "cwd": cwd,
        "timestamp": "2026-11-20T10:00:00.000Z", "message": {"role": "user", "content": "hello"}});
    let path = slot.join(format!("{id}.jsonl"));
    fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// Every snapshot of the stores a move could touch, to compare before and after.
fn stores(env: &TestEnv) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = crate::util::files_below(&env.home)
        .into_iter()
        .filter(|p| !p.starts_with(env.home.join(".local/state")))
        .map(|p| {
            let bytes = fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

const A: &str = "11111111-1111-4111-8111-111111111111";
const C: &str = "33333333-3333-4333-8333-333333333333";

#[test]
fn moves_that_would_mix_or_lose_conversations_change_nothing() {
    let env = TestEnv::new();
    let base = fs::canonicalize(env.root.path()).unwrap().join("p");
    let refused = |old: &Path, new: &Path, extra: &[&str], why: &str| {
        let before = stores(&env);
        let a = env.cmd("lokust-shell").arg("move").arg(old).arg(new).args(extra).assert().failure();
        assert_eq!(a.get_output().status.code(), Some(2), "{}", stderr(&a));
        assert!(stderr(&a).contains(why), "expected {why:?}: {}", stderr(&a));
        assert_eq!(stores(&env), before, "a refused move changed a store: {}", stderr(&a));
    };

    // Two projects whose slot names fold to one: the other one's conversation stays.
    let (ab, a_b) = (base.join("a b"), base.join("a-b"));
    fs::create_dir_all(&ab).unwrap();
    fs::create_dir_all(&a_b).unwrap();
    transcript(&env, &ab, A);
    transcript(&env, &a_b, C);
    refused(&ab, &base.join("n"), &["--move-dir"], "does not separate them");
    // (one slot for both: only the other's conversation goes)
    fs::remove_file(slot_dir(&env, a_b.to_str().unwrap()).join(format!("{C}.jsonl"))).unwrap();

    // A subfolder with a Claude Code project of its own would be orphaned.
    fs::create_dir_all(ab.join("sub")).unwrap();
    transcript(&env, &ab.join("sub"), C);
    refused(&ab, &base.join("n"), &["--move-dir"], "does not separate them");
    fs::remove_dir_all(slot_dir(&env, ab.join("sub").to_str().unwrap())).unwrap();

    // NEW reached through a link or `..`: still the project it is.
    let other = base.join("other");
    fs::create_dir_all(other.join("x")).unwrap();
    transcript(&env, &other, C);
    std::os::unix::fs::symlink(&other, base.join("link")).unwrap();
    refused(&ab, &base.join("link"), &[], "already");
    refused(&ab, &other.join("x/.."), &[], "already");

    // OLD and NEW whose names fold to one Claude Code folder: said so, not blamed on NEW.
    let x_y = base.join("x_y");
    fs::create_dir_all(&x_y).unwrap();
    transcript(&env, &x_y, C);
    refused(&x_y, &base.join("x-y"), &[], "fold to one Claude Code folder name");
    fs::remove_dir_all(slot_dir(&env, x_y.to_str().unwrap())).unwrap();

    // NEW with a Claude Code folder of its own (memory only): refused, not mixed.
    let m = base.join("m");
    fs::create_dir_all(slot_dir(&env, m.to_str().unwrap()).join("memory")).unwrap();
    fs::write(slot_dir(&env, m.to_str().unwrap()).join("memory/MEMORY.md"), "mine").unwrap();
    refused(&ab, &m, &[], "already");

    // A link in the slot would not be carried: refused rather than lost.
    let elsewhere = env.root.path().join("elsewhere.jsonl");
    fs::write(&elsewhere, "{}\n").unwrap();
    let slot = slot_dir(&env, ab.to_str().unwrap());
    std::os::unix::fs::symlink(&elsewhere, slot.join(format!("{C}.jsonl"))).unwrap();
    refused(&ab, &base.join("n"), &["--move-dir"], "nothing was moved");
    fs::remove_file(slot.join(format!("{C}.jsonl"))).unwrap();

    // A Codex id that the restore keeps elsewhere (an archived copy): the move is undone
    // whole, the old copy kept.
    codex_rollout(&env, &ab);
    let archived = archived_codex_copy(&env);
    let before = stores(&env);
    let a =
        env.cmd("lokust-shell").arg("move").arg(&ab).arg(base.join("n")).arg("--move-dir").assert().failure();
    assert!(stderr(&a).contains("undone"), "{}", stderr(&a));
    assert_eq!(stores(&env), before, "a failed move left a change behind");
    assert!(ab.is_dir() && !base.join("n").exists());

    // The class the cases above belong to is refused; a plain move then goes through.
    fs::remove_dir_all(&archived).unwrap();
    env.cmd("lokust-shell").arg("move").arg(&ab).arg(base.join("n")).arg("--move-dir").assert().success();
    assert!(slot_dir(&env, base.join("n").to_str().unwrap()).join(format!("{A}.jsonl")).is_file());
}

/// Gemini CLI, pinned and offline: a chat made in `P/a`, then `move P/a P/b --move-dir`.
/// In `P/b` the CLI resumes it with its earlier turn, the chat files left in the old
/// project folder are gone, `find` names `P/b`, and the backup is listed.
#[test]
fn a_gemini_conversation_moves_and_resumes_with_the_real_cli() {
    use crate::util::gemini::{GeminiApi, Home, files_of, gemini_bin, new_conversation, resume};
    let Some(bin) = gemini_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), cli_home: None };
    home.write_settings();
    let api = GeminiApi::start();
    let base = fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    fs::create_dir_all(&a).unwrap();
    let id = new_conversation(&bin, &api, &home, &a, "remember the word MOVE-GEMINI-5");
    let old_folder = home.gh().join("tmp/a");
    assert_eq!(files_of(&old_folder, &id).len(), 1);

    let dry =
        env.cmd("lokust-shell").args(["move", "--move-dir", "--dry-run"]).arg(&a).arg(&b).assert().success();
    assert!(stdout(&dry).contains("Gemini CLI: 1 conversation"), "{}", stdout(&dry));
    assert!(a.is_dir() && files_of(&old_folder, &id).len() == 1, "the dry run changed something");

    let done = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
    assert!(b.is_dir() && !a.exists(), "{}", stdout(&done));
    assert!(files_of(&old_folder, &id).is_empty(), "the old chat is still in the old folder");
    let aside: Vec<PathBuf> = crate::util::files_below(&home.gh())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".lokust-moving-"))
        .collect();
    assert!(aside.is_empty(), "{aside:?}");
    let found = stdout(&env.cmd("lokust-shell").arg("find").arg(&id).assert().success());
    assert!(found.contains(&format!("{} (exists)", b.display())), "{found}");
    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    assert!(list.contains("gemini"), "no backup listed: {list}");

    let sent = resume(&bin, &api, &home, &b, &id, "which word?");
    assert!(sent.contains("MOVE-GEMINI-5"), "the earlier turn was not sent");
}

/// `--keep-old`: the conversations are laid at NEW and the old copies stay where they were,
/// byte for byte; the dry run says so and changes nothing.
#[test]
fn keep_old_leaves_the_old_copies_beside_the_new_ones() {
    let env = TestEnv::new();
    let (_, a, b) = project_paths(&env);
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let old_transcript = transcript(&env, &a, A);
    let old_rollout = codex_rollout(&env, &a);
    let before = stores(&env);
    let dry =
        env.cmd("lokust-shell").args(["move", "--keep-old", "--dry-run"]).arg(&a).arg(&b).assert().success();
    assert!(stdout(&dry).contains("--keep-old"), "{}", stdout(&dry));
    assert_eq!(stores(&env), before);

    let out = env.cmd("lokust-shell").args(["move", "--keep-old"]).arg(&a).arg(&b).assert().success();
    // Claude Code's slot is kept; Codex keeps a rollout by date and id, not by folder: the
    // one rollout is the conversation itself, and it moves.
    assert!(stdout(&out).contains("old copies left where they were (--keep-old): 1"), "{}", stdout(&out));
    assert_eq!(
        fs::read(&old_transcript).unwrap(),
        before.iter().find(|(p, _)| *p == old_transcript).unwrap().1,
        "the old copy changed"
    );
    assert!(slot_dir(&env, b.to_str().unwrap()).join(format!("{A}.jsonl")).is_file());
    assert_eq!(rollouts(&env), std::slice::from_ref(&old_rollout));
    assert!(fs::read_to_string(&old_rollout).unwrap().contains(b.to_str().unwrap()));
}

/// Every file below HOME but lokust's own state, with the test's root folder named `ROOT`
/// (and `-ROOT` in Claude Code's slot names) in paths and contents, each file by its
/// length and a hash, so two runs in two folders compare.
fn normalized(env: &TestEnv) -> Vec<(String, usize, u64)> {
    use std::hash::{Hash, Hasher};
    let root = fs::canonicalize(env.root.path()).unwrap().to_string_lossy().into_owned();
    let slot = lokust::capture::claude::slot_name(&root);
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").unwrap();
    let mut out: Vec<(String, usize, u64)> = stores(env)
        .into_iter()
        .map(|(p, bytes)| {
            let text = String::from_utf8_lossy(&bytes).replace(&root, "ROOT");
            // The Gemini chat is dated when each run makes it.
            let text = time.replace_all(&text, "TIME").into_owned();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut h);
            (p.to_string_lossy().replace(&root, "ROOT").replace(&slot, "-ROOT"), text.len(), h.finish())
        })
        .collect();
    out.sort();
    out
}

/// The files on one side only, for a failure message a person can read.
fn differences(got: &[(String, usize, u64)], want: &[(String, usize, u64)]) -> String {
    let only = |a: &[(String, usize, u64)], b: &[(String, usize, u64)]| -> Vec<String> {
        a.iter().filter(|x| !b.contains(x)).map(|x| format!("{} ({} bytes)", x.0, x.1)).collect()
    };
    format!("now but not expected: {:#?}\nexpected but not now: {:#?}", only(got, want), only(want, got))
}

/// A project with many Claude Code transcripts (so a move takes long enough to be killed
/// in its middle), a Codex rollout and a Gemini CLI chat.
fn big_project(env: &TestEnv) -> (PathBuf, PathBuf) {
    let base = fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    fs::create_dir_all(&a).unwrap();
    let slot = slot_dir(env, a.to_str().unwrap());
    fs::create_dir_all(&slot).unwrap();
    let filler = "lorem ipsum dolor sit amet ".repeat(4000);
    for n in 0..24 {
        let id = format!("{n:08x}-1111-4111-8111-111111111111");
        let mut text = String::new();
        for turn in 0..12 {
            let line = serde_json::json!({"type": "user", "uuid": format!("u{turn}"), "sessionId": id,
                "cwd": a, "timestamp": "2026-11-20T10:00:00.000Z",
                "message": {"role": "user", "content": format!("{turn} {filler}")}});
            text.push_str(&format!("{line}\n"));
        }
        fs::write(slot.join(format!("{id}.jsonl")), text).unwrap();
    }
    codex_rollout(env, &a);
    crate::util::gemini::make_chat(&env.home.join(".gemini"), &a, "gemini-chat-1", "remember KILL-TEST");
    (a, b)
}

/// The transcripts after the first are laid on several threads: each comes out whole, as
/// the one pass of the map makes it, whichever thread wrote it, and keeps its time (a
/// time moved to now would also make a roll back take the laid copies for new work).
#[test]
fn every_transcript_of_a_moved_project_is_laid_whole_with_its_time_whichever_thread_lays_it() {
    let env = TestEnv::new();
    let (a, b) = big_project(&env);
    let (old_slot, new_slot) = (slot_dir(&env, a.to_str().unwrap()), slot_dir(&env, b.to_str().unwrap()));
    let mut expected: Vec<(String, String)> = fs::read_dir(&old_slot)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap().replace(a.to_str().unwrap(), b.to_str().unwrap());
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 24);
    // Days old, as a project's conversations are: a move keeps their times, as `mv` does.
    let old_time = filetime::FileTime::from_unix_time(1_700_000_000, 0);
    for (name, _) in &expected {
        filetime::set_file_mtime(old_slot.join(name), old_time).unwrap();
    }
    env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
    for (name, text) in &expected {
        let laid = fs::read_to_string(new_slot.join(name)).unwrap();
        assert!(laid == *text, "{name} was laid as {} bytes, not {}", laid.len(), text.len());
        let mtime =
            filetime::FileTime::from_last_modification_time(&fs::metadata(new_slot.join(name)).unwrap());
        assert_eq!(mtime.unix_seconds(), old_time.unix_seconds(), "{name}");
    }
    assert!(!old_slot.exists());
}

/// The journals a move keeps under HOME.
fn journals(env: &TestEnv) -> Vec<PathBuf> {
    let moving = env.home.join(".local/state/lokust/moving");
    (if moving.exists() { crate::util::files_below(&moving) } else { Vec::new() })
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect()
}

/// SIGKILL at points spread over a whole move, from a fixed seed: whatever the point, the
/// next `move` rolls back what the journal names and then moves, and the stores end
/// exactly as after a move never killed: nothing lost, nothing twice, nothing aside.
/// Every other kill waits for the journal first, so that some land inside the journaled
/// part however fast the move is on this machine.
#[test]
fn a_move_killed_at_any_point_ends_as_a_whole_move_after_the_next() {
    let reference = {
        let env = TestEnv::new();
        let (a, b) = big_project(&env);
        let started = std::time::Instant::now();
        env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
        (normalized(&env), started.elapsed())
    };
    let (expected, took) = reference;
    let mut seed: u64 = 0x5eed_1234;
    let mut rolled_back = 0;
    for round in 0..10 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let delay = took.mul_f64((seed >> 33) as f64 / (1u64 << 31) as f64);
        let after_journal = round % 2 == 1;
        let env = TestEnv::new();
        let (a, b) = big_project(&env);
        let before = normalized(&env);
        let mut child = env
            .process("lokust-shell")
            .args(["move", "--move-dir"])
            .arg(&a)
            .arg(&b)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if after_journal {
            let waited = std::time::Instant::now();
            while journals(&env).is_empty()
                && child.try_wait().unwrap().is_none()
                && waited.elapsed() < std::time::Duration::from_secs(10)
            {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            std::thread::sleep(delay / 8);
        } else {
            std::thread::sleep(delay);
        }
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        let journals = journals(&env);
        if finished || (journals.is_empty() && b.exists()) {
            let now = normalized(&env);
            assert!(now == expected, "a finished move differs ({delay:?}): {}", differences(&now, &expected));
            continue;
        }
        if journals.is_empty() {
            assert_eq!(
                normalized(&env),
                before,
                "killed before its journal, yet a store changed ({delay:?})"
            );
        }
        // Killed once every conversation was at NEW: the next move of anything finishes it.
        let committed = journals.iter().any(|j| {
            fs::read(j)
                .ok()
                .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
                .is_some_and(|v| v["committed"] == true)
        });
        if committed {
            let empty = env.root.path().join("empty");
            fs::create_dir_all(&empty).unwrap();
            let out = env
                .cmd("lokust-shell")
                .arg("move")
                .arg(&empty)
                .arg(env.root.path().join("e2"))
                .assert()
                .failure();
            assert!(stderr(&out).contains("was finished"), "{}", stderr(&out));
            let now = normalized(&env);
            assert!(
                now == expected,
                "killed after committing ({delay:?}), then finished: {}",
                differences(&now, &expected)
            );
            continue;
        }
        let again = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
        if !journals.is_empty() {
            assert!(stderr(&again).contains("was rolled back"), "{}", stderr(&again));
            rolled_back += 1;
        }
        let now = normalized(&env);
        assert!(
            now == expected,
            "killed after {delay:?}, then moved again: {}",
            differences(&now, &expected)
        );
    }
    assert!(rolled_back >= 2, "too few kills landed inside a move ({rolled_back}): the test proves little");
}

/// A Droid session as Droid writes its transcript, for `dir`.
fn droid_session(env: &TestEnv, dir: &Path, id: &str) -> PathBuf {
    let slot = env.home.join(".factory/sessions").join(lokust::agent::droid::slot(dir.to_str().unwrap()));
    fs::create_dir_all(&slot).unwrap();
    let lines = [
        serde_json::json!({"type": "session_start", "id": id, "title": "remember DROID", "owner": "u",
            "version": 2, "cwd": dir}),
        serde_json::json!({"type": "message", "id": "m1", "timestamp": "2026-11-24T06:46:58.678Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "remember DROID"}]}}),
    ];
    let path = slot.join(format!("{id}.jsonl"));
    fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    path
}

/// A link or a special file among the conversations refuses the move, and its dry run
/// says so as well, from the same reading of the slot.
#[test]
fn a_dry_run_refuses_what_the_move_would_refuse() {
    let env = TestEnv::new();
    let (_, a, b) = project_paths(&env);
    fs::create_dir_all(&a).unwrap();
    transcript(&env, &a, A);
    let slot = slot_dir(&env, a.to_str().unwrap());
    std::os::unix::fs::symlink("/etc/passwd", slot.join("22222222-1111-4111-8111-111111111111.jsonl"))
        .unwrap();
    let before = stores(&env);
    for dry in [true, false] {
        let mut cmd = env.cmd("lokust-shell");
        cmd.args(["move", "--move-dir"]);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.arg(&a).arg(&b).assert().failure();
        assert_eq!(out.get_output().status.code(), Some(2), "dry {dry}: {}", stderr(&out));
        assert!(stderr(&out).contains("is a link or a special file"), "dry {dry}: {}", stderr(&out));
        assert_eq!(stores(&env), before);
        assert!(a.is_dir() && !b.exists());
    }
}

/// What the attack on move found, each the class it belongs to:
/// - a restore the plan can tell will fail (a file where NEW's Droid folder must go) is
///   refused before any store changes, the other agents' conversations untouched;
/// - a copy of the same id in another project (restored there from an archive) is that
///   project's: the move neither sets it aside nor trips on it when checking NEW.
#[test]
fn what_a_move_cannot_lay_refuses_it_and_other_projects_copies_stay() {
    let env = TestEnv::new();
    let base = fs::canonicalize(env.root.path()).unwrap().join("p");
    let (a, b, other) = (base.join("a"), base.join("b"), base.join("other"));
    for d in [&a, &other] {
        fs::create_dir_all(d).unwrap();
    }
    const DROID_ID: &str = "0a1b2c3d-0000-4000-8000-00000000d401";
    let droid = droid_session(&env, &a, DROID_ID);
    // The user's own grant for the session moves with it (a restore from a file lays it
    // only with --trust-config).
    let grant = br#"{"model":"m","autonomyLevel":"high","interactionMode":"auto"}"#;
    fs::write(droid.with_file_name(format!("{DROID_ID}.settings.json")), grant).unwrap();
    codex_rollout(&env, &a);
    transcript(&env, &a, A);
    let in_the_way = env.home.join(".factory/sessions").join(lokust::agent::droid::slot(b.to_str().unwrap()));
    fs::write(&in_the_way, "a file where a folder goes").unwrap();
    let before = stores(&env);
    let refused = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().failure();
    assert_eq!(refused.get_output().status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("cannot be laid") && stderr(&refused).contains("undone"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(stores(&env), before, "a refused move changed a store");
    assert!(a.is_dir() && !b.exists());
    fs::remove_file(&in_the_way).unwrap();

    // The same ids in another project, as a restore from an archive leaves them. Droid
    // keeps one copy of an id, and a restore never replaces the other project's: the move
    // is undone, that copy named, and it stays as it was.
    let theirs_droid = droid_session(&env, &other, DROID_ID);
    let before = stores(&env);
    let undone = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().failure();
    assert!(
        stderr(&undone).contains(&format!("keeps a copy of that id at {}", theirs_droid.display())),
        "{}",
        stderr(&undone)
    );
    assert_eq!(stores(&env), before, "an undone move changed a store");
    fs::remove_file(&theirs_droid).unwrap();
    // Claude Code's copy in another project's folder is that project's: the move checks
    // NEW's own folder, and leaves the other one as it was.
    let theirs_claude = transcript(&env, &other, A);
    let claude_bytes = fs::read(&theirs_claude).unwrap();
    env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
    assert_eq!(fs::read(&theirs_claude).unwrap(), claude_bytes, "another project's transcript changed");
    assert!(slot_dir(&env, b.to_str().unwrap()).join(format!("{A}.jsonl")).is_file());
    let new_droid = env.home.join(".factory/sessions").join(lokust::agent::droid::slot(b.to_str().unwrap()));
    assert!(new_droid.join(format!("{DROID_ID}.jsonl")).is_file());
    assert_eq!(fs::read(new_droid.join(format!("{DROID_ID}.settings.json"))).unwrap(), grant);
}

/// A Copilot CLI session as the CLI keeps it, by id, with a lock that does not travel.
fn copilot_session(env: &TestEnv, dir: &Path, id: &str) -> PathBuf {
    let folder = env.home.join(".copilot/session-state").join(id);
    fs::create_dir_all(&folder).unwrap();
    let events = [
        serde_json::json!({"type": "session.start", "timestamp": "2026-11-24T06:00:00.000Z",
            "data": {"sessionId": id, "context": {"cwd": dir}}}),
        serde_json::json!({"type": "user.message", "timestamp": "2026-11-24T06:00:01.000Z",
            "data": {"content": "remember COPILOT"}}),
    ];
    fs::write(folder.join("events.jsonl"), events.iter().map(|e| format!("{e}\n")).collect::<String>())
        .unwrap();
    fs::write(folder.join("workspace.yaml"), format!("id: {id}\ncwd: {}\n", dir.display())).unwrap();
    fs::write(folder.join("inuse.4242.lock"), "4242").unwrap();
    folder
}

/// A move that fails after the conversations were laid (a Codex id the restore keeps
/// elsewhere): every store is put back byte for byte, the copies laid at NEW taken away
/// first, a Copilot CLI session laid again where it was included, its lock kept, and
/// Gemini CLI's registry without the entry the restore made for NEW.
#[test]
fn a_move_that_fails_after_laying_takes_every_new_copy_away() {
    let env = TestEnv::new();
    let (_, a, b) = project_paths(&env);
    fs::create_dir_all(&a).unwrap();
    transcript(&env, &a, A);
    copilot_session(&env, &a, "5c0ffee0-0000-4000-8000-00000000c0b1");
    droid_session(&env, &a, "0a1b2c3d-0000-4000-8000-00000000d402");
    let gh = env.home.join(".gemini");
    crate::util::gemini::make_chat(&gh, &a, "gemini-chat-2", "remember GEMINI");
    // As the CLI writes its registry (JSON.stringify with two spaces).
    let registry: serde_json::Value =
        serde_json::from_slice(&fs::read(gh.join("projects.json")).unwrap()).unwrap();
    fs::write(gh.join("projects.json"), serde_json::to_vec_pretty(&registry).unwrap()).unwrap();
    codex_rollout(&env, &a);
    archived_codex_copy(&env);
    let before = stores(&env);
    let failed = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().failure();
    assert!(stderr(&failed).contains("the move was undone"), "{}", stderr(&failed));
    let now = stores(&env);
    let changed: Vec<&PathBuf> = now
        .iter()
        .filter(|x| !before.contains(x))
        .chain(before.iter().filter(|x| !now.contains(x)))
        .map(|(p, _)| p)
        .collect();
    assert!(changed.is_empty(), "not put back: {changed:?}");
    assert!(a.is_dir() && !b.exists());
}

/// The roll back of a killed move takes away only what that move laid: a conversation
/// the user made at NEW afterwards stays, with NEW's folder. A journal that renames
/// anything but a move's own set-aside copies is not one, and is left alone.
#[test]
fn a_roll_back_keeps_what_was_made_at_new_after_the_kill_and_ignores_a_forged_journal() {
    let env = TestEnv::new();
    let (base, a, b) = project_paths(&env);
    fs::create_dir_all(&b).unwrap();
    // As a move killed after laying A at NEW leaves things: A's slot set aside, A laid at
    // NEW; then the user works at NEW and makes C.
    let old_slot = slot_dir(&env, a.to_str().unwrap());
    let laid = transcript(&env, &b, A);
    let mine = transcript(&env, &b, C);
    let aside = old_slot.with_file_name(format!(
        ".lokust-moving-20261128T000000Z-{}",
        old_slot.file_name().unwrap().to_str().unwrap()
    ));
    fs::create_dir_all(&aside).unwrap();
    fs::write(aside.join(format!("{A}.jsonl")), "the old copy\n").unwrap();
    let moving = env.home.join(".local/state/lokust/moving");
    fs::create_dir_all(&moving).unwrap();
    let journal = serde_json::json!({"old_abs": a, "new_real": b, "old_str": a, "new_str": b, "move_dir": false,
        "before": {"slot_existed": false, "entry_existed": false, "history_lines": false},
        "asides": [[old_slot, aside]], "repointed": [], "laid": [["claude", A]]});
    fs::write(moving.join("20261128T000000Z-1.json"), journal.to_string()).unwrap();
    // A forged one: renames a file of the user's into the store's place.
    let victim = env.root.path().join("victim.txt");
    fs::write(&victim, "keep me").unwrap();
    let forged = serde_json::json!({"old_abs": a, "new_real": b, "old_str": a, "new_str": b, "move_dir": false,
        "before": {"slot_existed": true, "entry_existed": true, "history_lines": true},
        "asides": [[env.root.path().join("moved-victim"), victim]], "repointed": [], "laid": []});
    fs::write(moving.join("20261128T000001Z-2.json"), forged.to_string()).unwrap();

    // Any later move runs the recovery first (this one then has nothing to move); a dry
    // run says it would, and changes nothing.
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let dry = env
        .cmd("lokust-shell")
        .args(["move", "--dry-run"])
        .arg(&elsewhere)
        .arg(base.join("e2"))
        .assert()
        .failure();
    assert!(stderr(&dry).contains("would be rolled back first"), "{}", stderr(&dry));
    assert!(laid.exists() && aside.exists());
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was rolled back"), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not a move's journal"), "{}", stderr(&out));
    assert!(!laid.exists(), "the copy the move laid is still at NEW");
    assert!(mine.is_file(), "the user's own conversation at NEW was taken");
    assert_eq!(fs::read_to_string(old_slot.join(format!("{A}.jsonl"))).unwrap(), "the old copy\n");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
}

/// `p`, and its `a` and `b`, below the test's root as the stores name them.
fn project_paths(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf) {
    let base = fs::canonicalize(env.root.path()).unwrap().join("p");
    let (a, b) = (base.join("a"), base.join("b"));
    (base, a, b)
}

/// A move of `p/a` to `p/b` killed after laying conversation A at NEW, its old copy set
/// aside and its journal written with `journal` added (`committed`, `laid_done`).
struct Killed {
    base: PathBuf,
    a: PathBuf,
    b: PathBuf,
    laid: PathBuf,
    old_slot: PathBuf,
    aside: PathBuf,
    moving: PathBuf,
}

fn killed_move(env: &TestEnv, move_dir: bool, journal: serde_json::Value) -> Killed {
    let (base, a, b) = project_paths(env);
    fs::create_dir_all(&b).unwrap();
    let laid = transcript(env, &b, A);
    let old_slot = slot_dir(env, a.to_str().unwrap());
    let name = old_slot.file_name().unwrap().to_str().unwrap().to_string();
    let aside = old_slot.with_file_name(format!(".lokust-moving-20261128T000000Z.1-{name}"));
    fs::create_dir_all(&aside).unwrap();
    fs::write(aside.join(format!("{A}.jsonl")), "the old copy\n").unwrap();
    let moving = env.home.join(".local/state/lokust/moving");
    fs::create_dir_all(&moving).unwrap();
    let mut written = serde_json::json!({"old_abs": a, "new_real": b, "old_str": a, "new_str": b,
        "move_dir": move_dir,
        "before": {"slot_existed": false, "entry_existed": false, "history_lines": false},
        "asides": [[old_slot, aside]], "repointed": [], "laid": [["claude", A]]});
    for (k, v) in journal.as_object().unwrap() {
        written[k] = v.clone();
    }
    fs::write(moving.join("20261128T000000Z-1.json"), written.to_string()).unwrap();
    Killed { base, a, b, laid, old_slot, aside, moving }
}

/// A move killed while deleting its old copies had every conversation at NEW already: the
/// next move finishes it (the copies still aside go) and never rolls it back.
#[test]
fn a_move_killed_while_deleting_its_old_copies_is_finished_not_undone() {
    let env = TestEnv::new();
    let Killed { base, a, b, laid, old_slot, aside, moving } = killed_move(
        &env,
        true,
        serde_json::json!({"committed": true, "laid": [["claude", A], ["claude", C]]}),
    );
    // C's copy aside was deleted before the kill: the journal is still the move's own.
    // The kill also came as the journal was being rewritten: its temp file is left.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let temp = moving.join(format!(".lokust-{dead}-Xq3Z.tmp"));
    fs::write(&temp, "{\"committed\": tr").unwrap();
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was finished"), "{}", stderr(&out));
    assert!(!temp.exists(), "a dead move's journal temp file stayed");
    assert!(laid.is_file(), "the conversation at NEW was taken away");
    assert!(b.is_dir() && !a.exists(), "the folder was renamed back");
    assert!(!aside.exists() && !old_slot.exists());
    assert!(crate::util::files_below(&moving).iter().all(|p| p.extension().is_none_or(|x| x != "json")));
}

/// A killed move that renamed the folder is not rolled back while someone works in NEW
/// (renaming the folder under them); a move touching either folder is refused meanwhile,
/// and the roll back happens once they have left. A killed restore's staging folder goes
/// with the first recovery.
#[test]
fn a_killed_move_waits_for_those_working_in_new() {
    let env = TestEnv::new();
    let staging = slot_dir(&env, "x").with_file_name(".lokust-restore-999999999-x");
    fs::create_dir_all(staging.join("tree")).unwrap();
    let Killed { base, a, b, laid, old_slot, .. } = killed_move(&env, true, serde_json::json!({}));
    let mut shell = std::process::Command::new("sleep").arg("60").current_dir(&b).spawn().unwrap();
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();

    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    let said = stderr(&out);
    assert!(said.contains("was left as it is") && said.contains(&shell.id().to_string()), "{said}");
    assert!(b.is_dir() && !a.exists() && laid.is_file(), "the folder was renamed under a process in it");
    assert!(!staging.exists(), "a killed restore's staging folder is still there");
    let refused = env.cmd("lokust-shell").arg("move").arg(&b).arg(base.join("c")).assert().failure();
    assert_eq!(refused.get_output().status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("is not finished"), "{}", stderr(&refused));
    // Named through a link, NEW is still NEW.
    std::os::unix::fs::symlink(&b, base.join("alias")).unwrap();
    let other = base.join("other");
    fs::create_dir_all(&other).unwrap();
    let linked =
        env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&other).arg(base.join("alias/x")).assert();
    assert_eq!(linked.get_output().status.code(), Some(2), "{}", stderr(&linked));
    assert!(other.is_dir() && !b.join("x").exists());

    shell.kill().unwrap();
    shell.wait().unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was rolled back"), "{}", stderr(&out));
    assert!(a.is_dir() && !b.exists(), "the folder is not at its old path again");
    assert_eq!(fs::read_to_string(old_slot.join(format!("{A}.jsonl"))).unwrap(), "the old copy\n");
}

/// What the attack on recovery found, each the class it belongs to:
/// - a killed move the user went on with at NEW is finished, never rolled back over
///   that work, when every conversation reached NEW;
/// - a journal that would take away at NEW a conversation it never set aside is not a
///   move's, and is left alone (the project it names keeps its conversations);
/// - a file a move cannot carry (a Droid session's settings that are not JSON) stops the
///   move before it is deleted with the old copies.
#[test]
fn recovery_keeps_work_done_at_new_and_a_move_never_deletes_what_it_cannot_carry() {
    let env = TestEnv::new();
    let Killed { base, laid, old_slot, aside, moving, .. } =
        killed_move(&env, false, serde_json::json!({"laid_done": true}));
    let v = base.join("v");
    fs::create_dir_all(&v).unwrap();
    // A stale or forged journal: V's own conversation as if a move had laid it there.
    let theirs = transcript(&env, &v, C);
    let forged = serde_json::json!({"old_abs": base.join("vold"), "new_real": v, "old_str": base.join("vold"),
        "new_str": v, "move_dir": true,
        "before": {"slot_existed": true, "entry_existed": true, "history_lines": true},
        "asides": [], "repointed": [], "laid": [["claude", C]]});
    fs::write(moving.join("20261128T000001Z-2.json"), forged.to_string()).unwrap();
    // The user goes on with the conversation at NEW after the kill.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    fs::OpenOptions::new()
        .append(true)
        .open(&laid)
        .unwrap()
        .write_all(b"{\"more\":\"my next turn\"}\n")
        .unwrap();
    fs::File::options().write(true).open(&laid).unwrap().set_modified(later).unwrap();

    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let dry =
        env.cmd("lokust-shell").args(["move", "--dry-run"]).arg(&elsewhere).arg(base.join("e2")).assert();
    assert!(stderr(&dry).contains("would be finished rather than rolled back"), "{}", stderr(&dry));
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    let said = stderr(&out);
    assert!(said.contains("was finished rather than rolled back"), "{said}");
    assert!(said.contains("is not a move's journal"), "{said}");
    assert!(fs::read_to_string(&laid).unwrap().contains("my next turn"), "the work done at NEW was lost");
    assert!(!aside.exists() && !old_slot.exists(), "the old copy came back beside the new one");
    assert!(theirs.is_file() && v.is_dir(), "a journal that set nothing aside took V's conversation");

    // A Droid session whose settings Droid's own reader may take but a bundle cannot.
    let droid = droid_session(&env, &v, "0a1b2c3d-0000-4000-8000-00000000d409");
    let settings = droid.with_file_name("0a1b2c3d-0000-4000-8000-00000000d409.settings.json");
    fs::write(&settings, "\u{feff}{ // mine\n \"autonomyLevel\": \"high\", }").unwrap();
    let before = stores(&env);
    let failed = env.cmd("lokust-shell").arg("move").arg(&v).arg(base.join("w")).assert().failure();
    assert!(stderr(&failed).contains("could not be carried"), "{}", stderr(&failed));
    assert_eq!(stores(&env), before, "a move that could not carry a file changed a store");
    // A FIFO where the settings go is not read, never waited on: the move ends.
    fs::remove_file(&settings).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&settings).status().unwrap().success());
    let ended = env
        .cmd("lokust-shell")
        .arg("move")
        .arg(&v)
        .arg(base.join("w"))
        .timeout(std::time::Duration::from_secs(30))
        .assert();
    assert!(ended.get_output().status.code().is_some(), "the move waited on a FIFO: {}", stderr(&ended));
    // A link where the settings go is not carried: the move stops and names it, rather
    // than moving the transcript and leaving the link behind unsaid.
    fs::remove_file(&settings).unwrap();
    let target = base.join("settings-elsewhere.json");
    fs::write(&target, "{\"autonomyLevel\": \"high\"}").unwrap();
    std::os::unix::fs::symlink(&target, &settings).unwrap();
    let before = stores(&env);
    let failed = env.cmd("lokust-shell").arg("move").arg(&v).arg(base.join("w")).assert().failure();
    assert!(stderr(&failed).contains("could not be carried"), "{}", stderr(&failed));
    assert_eq!(stores(&env), before, "a move that could not carry a link changed a store");
    assert!(fs::symlink_metadata(&settings).unwrap().file_type().is_symlink());
}

/// A move killed before it laid anything, then a conversation started at NEW: rolling
/// back would rename the folder from under it and leave it naming a folder gone.
#[test]
fn a_conversation_started_at_new_after_an_early_kill_keeps_the_move() {
    let env = TestEnv::new();
    let Killed { base, a, b, laid, .. } = killed_move(&env, true, serde_json::json!({}));
    fs::remove_file(&laid).unwrap(); // killed before A was laid
    let started = transcript(&env, &b, C);
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    fs::File::options().write(true).open(&started).unwrap().set_modified(later).unwrap();
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was left as it is"), "{}", stderr(&out));
    assert!(
        b.is_dir() && !a.exists() && started.is_file(),
        "the folder went back from under the new conversation"
    );
}

/// A move killed while it laid, then a laid conversation written to at NEW: the roll
/// back cannot tell the user's turn from the restore's own writing, so that copy is kept
/// beside the journal, never deleted, and the message says where.
#[test]
fn a_roll_back_keeps_a_laid_copy_written_after_the_kill() {
    let env = TestEnv::new();
    let Killed { base, laid, old_slot, moving, .. } = killed_move(&env, false, serde_json::json!({}));
    // What a SIGKILL leaves of a write in flight: swept when its writer is gone, kept
    // while it lives.
    let dead = old_slot.with_file_name(".lokust-999999999-0a1b.tmp");
    let live = old_slot.with_file_name(format!(".lokust-{}-0a1b.tmp", std::process::id()));
    for t in [&dead, &live] {
        fs::write(t, "half").unwrap();
    }
    fs::OpenOptions::new()
        .append(true)
        .open(&laid)
        .unwrap()
        .write_all(b"{\"more\":\"my next turn\"}\n")
        .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    fs::File::options().write(true).open(&laid).unwrap().set_modified(later).unwrap();
    // A subagent of the conversation, run at NEW after the kill: in the conversation's
    // own folder.
    let subagent = laid.with_extension("").join("subagents/agent-2.jsonl");
    fs::create_dir_all(subagent.parent().unwrap()).unwrap();
    fs::write(&subagent, "{\"more\":\"the subagent's turn\"}\n").unwrap();
    fs::File::options().write(true).open(&subagent).unwrap().set_modified(later).unwrap();
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(
        stderr(&out).contains("was rolled back") && stderr(&out).contains("were kept in"),
        "{}",
        stderr(&out)
    );
    let kept = moving.join("20261128T000000Z-1.kept").join(format!("claude-{A}.jsonl"));
    assert!(fs::read_to_string(&kept).unwrap().contains("my next turn"), "the turn written at NEW was lost");
    let kept_subagent = kept.with_file_name(format!("claude-{A}")).join("subagents/agent-2.jsonl");
    assert!(
        fs::read_to_string(&kept_subagent).unwrap().contains("the subagent's turn"),
        "the subagent was lost"
    );
    assert_eq!(fs::read_to_string(old_slot.join(format!("{A}.jsonl"))).unwrap(), "the old copy\n");
    assert!(!laid.exists());
    assert!(!dead.exists() && live.exists(), "temp files: a dead writer's stayed or a live one's went");
}

/// OLD made again after a kill: the roll back cannot rename the folder back, and the dry
/// run says so as the real run does.
#[test]
fn a_dry_run_says_the_folder_stays_when_old_was_made_again() {
    let env = TestEnv::new();
    let Killed { base, a, b, .. } = killed_move(&env, true, serde_json::json!({}));
    fs::create_dir_all(&a).unwrap();
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let dry =
        env.cmd("lokust-shell").args(["move", "--dry-run"]).arg(&elsewhere).arg(base.join("e2")).assert();
    assert!(stderr(&dry).contains("would be rolled back, but the folder stays"), "{}", stderr(&dry));
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was rolled back, but the folder stays"), "{}", stderr(&out));
    assert!(a.is_dir() && b.is_dir());
}

/// Two moves started at one moment into one NEW: one moves, the other waits for it and is
/// then refused (NEW holds the first one's conversations), and both projects keep every
/// conversation. Run one after the other, the second was always refused; started
/// together, both could find NEW free.
#[test]
fn two_moves_into_one_new_at_once_never_mix_two_projects() {
    let env = TestEnv::new();
    let base = fs::canonicalize(env.root.path()).unwrap().join("p");
    let (x, y, new) = (base.join("x"), base.join("y"), base.join("new"));
    for dir in [&x, &y] {
        fs::create_dir_all(dir).unwrap();
    }
    transcript(&env, &x, A);
    transcript(&env, &y, C);
    for _ in 0..4 {
        let spawn = |from: &Path| {
            env.process("lokust-shell")
                .arg("move")
                .arg(from)
                .arg(&new)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (first, second) = (spawn(&x), spawn(&y));
        let (first, second) = (first.wait_with_output().unwrap(), second.wait_with_output().unwrap());
        let codes = [first.status.code(), second.status.code()];
        assert!(codes.contains(&Some(0)) && codes.contains(&Some(2)), "{codes:?}");
        let refused = if first.status.success() { &second } else { &first };
        assert!(String::from_utf8_lossy(&refused.stderr).contains("already"), "{refused:?}");
        // One project's conversation at NEW, the other's where it was.
        let at_new = slot_dir(&env, new.to_str().unwrap());
        let moved = if first.status.success() { (&x, A, &y, C) } else { (&y, C, &x, A) };
        assert!(at_new.join(format!("{}.jsonl", moved.1)).is_file());
        assert!(!at_new.join(format!("{}.jsonl", moved.3)).exists());
        assert!(slot_dir(&env, moved.2.to_str().unwrap()).join(format!("{}.jsonl", moved.3)).is_file());
        // Back, for the next round.
        env.cmd("lokust-shell").arg("move").arg(&new).arg(moved.0).assert().success();
    }
}

/// A move locks the stores it changes, not only its own state folder: a move that keeps its
/// journal elsewhere (another `XDG_STATE_HOME`) waits while another holds Claude Code's
/// store, and Ctrl-C ends the wait with nothing changed. There is no lock file to delete.
#[test]
fn a_move_waits_for_the_store_whatever_its_state_folder() {
    use std::os::fd::AsRawFd;
    let env = TestEnv::new();
    let base = fs::canonicalize(env.root.path()).unwrap().join("p");
    let (a, b) = (base.join("a"), base.join("b"));
    fs::create_dir_all(&a).unwrap();
    transcript(&env, &a, A);
    let store = fs::File::open(env.home.join(".claude")).unwrap();
    // SAFETY: flock only reads the descriptor, which `store` keeps open.
    assert_eq!(unsafe { libc::flock(store.as_raw_fd(), libc::LOCK_EX) }, 0);
    let spawn = |state: &str| {
        env.process("lokust-shell")
            .arg("move")
            .arg(&a)
            .arg(&b)
            .env("XDG_STATE_HOME", env.root.path().join(state))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let waiting = spawn("other-state");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(waiting.id() as i32, libc::SIGINT) };
    let out = waiting.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another lokust-shell move is running; waiting"), "{err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(slot_dir(&env, a.to_str().unwrap()).join(format!("{A}.jsonl")).is_file());

    let mover = spawn("third-state");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!slot_dir(&env, b.to_str().unwrap()).exists(), "the move ran while the store was held");
    drop(store);
    let out = mover.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(slot_dir(&env, b.to_str().unwrap()).join(format!("{A}.jsonl")).is_file());
}

/// A move's backup is the old copies themselves, renamed into the archive byte for byte:
/// listed as "moved", pointed at (not read) by `restore --from-archive`, pruned whole.
/// With the archive on another filesystem than the stores, a `.lok` is written instead.
#[test]
fn a_moves_backup_is_the_old_copies_or_a_file_across_filesystems() {
    let env = TestEnv::new();
    let (base, a, b) = project_paths(&env);
    fs::create_dir_all(&a).unwrap();
    let old = fs::read(transcript(&env, &a, A)).unwrap();
    let done = env.cmd("lokust-shell").arg("move").arg(&a).arg(&b).assert().success();
    let said = stdout(&done);
    let backup = PathBuf::from(said.lines().find_map(|l| l.strip_prefix("backup: ")).expect("a backup"));
    assert!(backup.to_string_lossy().ends_with(".moved") && backup.is_dir(), "{said}");
    let slot = lokust::capture::claude::slot_name(a.to_str().unwrap());
    let kept = backup.join("claude/projects").join(&slot).join(format!("{A}.jsonl"));
    assert_eq!(fs::read(&kept).unwrap(), old);
    assert!(!slot_dir(&env, a.to_str().unwrap()).exists());

    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    let row = list.lines().find(|l| l.starts_with("moved ")).unwrap_or_else(|| panic!("{list}"));
    assert!(row.contains(a.to_str().unwrap()) && row.ends_with("files"), "{list}");
    let from = env
        .cmd("lokust-shell-restore")
        .args(["--from-archive", "--session", A, "--to"])
        .arg(base.join("c"))
        .assert()
        .failure();
    assert!(
        stderr(&from).contains("only a move's backup holds it")
            && stderr(&from).contains(&*backup.to_string_lossy()),
        "{}",
        stderr(&from)
    );
    assert!(!base.join("c").exists());
    // Moved back and forth, the project has two backups; the conversation is in its store,
    // so the older backup is not its only copy, and prune deletes it whole.
    env.cmd("lokust-shell").arg("move").arg(&b).arg(&a).assert().success();
    env.cmd("lokust-shell").arg("move").arg(&a).arg(&b).assert().success();
    env.cmd("lokust-shell").args(["prune", "--older-than", "0d", "--keep-last", "1"]).assert().success();
    assert!(!backup.exists());
    // Its conversations as they were when its backup was made: archived all the same (a
    // backup is no archive a restore reads).
    let archived = env.cmd("lokust-shell").args(["archive", "--quiet"]).arg(&b).assert().success();
    assert!(stdout(&archived).trim().ends_with(".lok"), "{}", stderr(&archived));
    assert!(!backup.with_extension("manifest.json").exists());

    // The archive on another filesystem: a backup file, and no old copy left.
    use std::os::unix::fs::MetadataExt;
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else { return };
    if fs::metadata(shm.path()).unwrap().dev() == fs::metadata(&base).unwrap().dev() {
        return;
    }
    let c = base.join("c");
    fs::create_dir_all(&c).unwrap();
    transcript(&env, &c, C);
    let done = env
        .cmd("lokust-shell")
        .arg("move")
        .arg(&c)
        .arg(base.join("d"))
        .env("XDG_STATE_HOME", shm.path())
        .assert()
        .success();
    let said = stdout(&done);
    let file = PathBuf::from(said.lines().find_map(|l| l.strip_prefix("backup: ")).expect("a backup"));
    assert!(
        file.starts_with(shm.path()) && file.is_file() && file.to_string_lossy().ends_with(".lok"),
        "{said}"
    );
    assert!(!slot_dir(&env, c.to_str().unwrap()).exists());
    assert!(fs::read_to_string(&file).unwrap().contains("\"kind\": \"claude-code-project\""));
}

/// A committed move killed before its old copies went into its backup folder: the next
/// move puts them there. A journal naming a backup folder outside the archive is not a
/// move's, and sends nothing there.
#[test]
fn a_killed_move_puts_its_old_copies_into_its_backup_and_nowhere_else() {
    let env = TestEnv::new();
    let archive = env.home.join(".local/state/lokust/archive/p-0000");
    let backup = archive.join("20261128T000000Z.moved");
    fs::create_dir_all(&backup).unwrap();
    let kept = backup.join("claude/projects/slot");
    let Killed { base, aside, .. } = killed_move(
        &env,
        false,
        serde_json::json!({"committed": true, "laid_done": true, "backup": backup,
            "kept_as": [{"path": kept, "agent": "claude", "id": null}]}),
    );
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("was finished"), "{}", stderr(&out));
    assert!(!aside.exists());
    assert_eq!(fs::read_to_string(kept.join(format!("{A}.jsonl"))).unwrap(), "the old copy\n");

    let env = TestEnv::new();
    let loot = env.root.path().join("loot.moved");
    let Killed { base, aside, .. } = killed_move(
        &env,
        false,
        serde_json::json!({"committed": true, "laid_done": true, "backup": loot,
            "kept_as": [{"path": loot.join("x"), "agent": "claude", "id": null}]}),
    );
    let elsewhere = base.join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env.cmd("lokust-shell").arg("move").arg(&elsewhere).arg(base.join("e2")).assert().failure();
    assert!(stderr(&out).contains("is not a move's journal"), "{}", stderr(&out));
    assert!(aside.join(format!("{A}.jsonl")).is_file() && !loot.exists());
}

/// What an attack on the backup found: a `--keep-old` backup named conversations it did
/// not hold (prune then took an older archive's only copy), a FIFO in another project's
/// slot hung every move, an archive folder that is a link was written through, and an
/// archive after moving back was skipped as unchanged.
#[test]
fn a_moves_backup_names_only_what_it_holds_and_is_never_written_through_a_link() {
    let env = TestEnv::new();
    let (base, a, b) = project_paths(&env);
    fs::create_dir_all(&a).unwrap();
    transcript(&env, &a, A);
    codex_rollout(&env, &a);
    // Another project's slot holds a FIFO named like a transcript: read by no move.
    let other = slot_dir(&env, "/elsewhere");
    fs::create_dir_all(&other).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(other.join("x.jsonl")).status().unwrap().success());
    let done = env
        .cmd("lokust-shell")
        .args(["move", "--keep-old"])
        .arg(&a)
        .arg(&b)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    // The Claude Code slot stayed where it was; the Codex rollout, kept by id, moved, and
    // its old copy is all the backup holds.
    let said = stdout(&done);
    let backup = PathBuf::from(said.lines().find_map(|l| l.strip_prefix("backup: ")).expect("a backup"));
    let list: serde_json::Value =
        serde_json::from_str(&stdout(&env.cmd("lokust-shell").args(["list", "--json"]).assert().success()))
            .unwrap();
    let row = list.as_array().unwrap().iter().find(|r| r["kind"] == "moved").expect("the backup listed");
    assert_eq!(row["path"], backup.to_str().unwrap());
    let agents: Vec<&str> =
        row["conversations"].as_array().unwrap().iter().map(|c| c["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["codex"], "{row}");

    // The archive's folder for a project made a link elsewhere: refused, nothing moved.
    let d = base.join("d");
    fs::create_dir_all(&d).unwrap();
    transcript(&env, &d, C);
    let key = lokust::archive::project_key(d.to_str().unwrap());
    let archive = env.home.join(".local/state/lokust/archive");
    fs::create_dir_all(&archive).unwrap();
    let elsewhere = env.root.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, archive.join(&key)).unwrap();
    let refused = env.cmd("lokust-shell").arg("move").arg(&d).arg(base.join("e")).assert().code(2);
    assert!(stderr(&refused).contains("is a link"), "{}", stderr(&refused));
    assert!(slot_dir(&env, d.to_str().unwrap()).join(format!("{C}.jsonl")).is_file());
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}
