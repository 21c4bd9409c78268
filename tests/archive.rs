//! The archive keeps what an agent deletes: three real Claude Code conversations 10, 26
//! and 40 days old with `cleanupPeriodDays` 30; `doctor` warns about the one due soon;
//! `archive` writes once, then nothing while nothing changed; the real CLI, kept alive past
//! its 5 s cleanup by a slow stand-in answer, deletes the 40-day one; `list` shows it only
//! in the archive, `prune` refuses to delete that file, and `restore --from-archive
//! --session` brings it back so that `claude -p --resume` sends its history.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::util::claude::{cli_bin, cli_conversation, run_cli};
use crate::util::standin;
use crate::util::{TestEnv, stderr, stdout};

fn slot_dir(env: &TestEnv, project: &Path) -> PathBuf {
    let real = fs::canonicalize(project).unwrap();
    env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(&real.to_string_lossy()))
}

fn age(path: &Path, days: u64) {
    let when = SystemTime::now() - Duration::from_secs(days * 86_400);
    filetime::set_file_mtime(path, filetime::FileTime::from_system_time(when)).unwrap();
}

fn archives(env: &TestEnv) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::util::files_below(&env.home.join(".local/state/lokust/archive"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "lok"))
        .collect();
    out.sort();
    out
}

/// What `snapshot --bundle` in `project` says on standard error.
fn bundle_warnings(env: &TestEnv, project: &Path) -> String {
    let a = env
        .cmd("lokust-shell-snapshot")
        .current_dir(project)
        .env("PWD", project)
        .args(["--bundle", "--no-worktree", "-o"])
        .arg(env.root.path().join("b.lok"))
        .assert()
        .success();
    stderr(&a)
}

#[test]
fn the_archive_keeps_a_conversation_claude_code_deletes_and_gives_it_back() {
    let Some(bin) = cli_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let project = env.root.path().join("P/app");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(env.home.join(".claude")).unwrap();
    fs::write(env.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 30}"#).unwrap();
    let url = api.url();
    let ids: Vec<String> = ["remember TEN-DAYS", "remember TWENTY-SIX-DAYS", "remember FORTY-DAYS"]
        .iter()
        .map(|p| cli_conversation(&bin, &url, &env.home, &project, p))
        .collect();
    let slot = slot_dir(&env, &project);
    for (id, days) in ids.iter().zip([10, 26, 40]) {
        age(&slot.join(format!("{id}.jsonl")), days);
    }
    let forty = &ids[2];
    // Edit history of the conversation, as Claude Code keeps it beside the project.
    let history = env.home.join(".claude/file-history").join(forty);
    fs::create_dir_all(&history).unwrap();
    fs::write(history.join("notes.md@v1"), "before the edit").unwrap();

    // doctor: the 26- and 40-day ones are within five days of the cleanup (or past it).
    let out = stdout(&env.cmd("lokust-shell").arg("doctor").current_dir(&project).assert());
    assert!(out.contains("2 conversations within five days"), "{out}");

    // snapshot --bundle says so too.
    let said = bundle_warnings(&env, &project);
    assert!(said.contains("Claude Code deletes 2 conversations of this project"), "{said}");

    let first = env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    assert_eq!(archives(&env).len(), 1, "{}", stderr(&first));
    let again = env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    assert!(stderr(&again).contains("nothing changed"), "{}", stderr(&again));
    assert_eq!(archives(&env).len(), 1);
    let kept = archives(&env)[0].clone();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(kept.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);

    // The real CLI, alive past its 5 s start-up cleanup, deletes the 40-day conversation.
    let out = run_cli(&bin, &url, &env.home, &project, &["-p", standin::SLOW]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !slot.join(format!("{forty}.jsonl")).exists(),
        "Claude Code did not clean up: the control failed"
    );
    assert!(slot.join(format!("{}.jsonl", ids[0])).exists());

    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    assert!(list.contains("(1 only here)") && list.contains(&format!("only here: claude {forty}")), "{list}");

    // A second archive without it; the first is then the only copy, and prune keeps it.
    env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    assert_eq!(archives(&env).len(), 2);
    let a =
        env.cmd("lokust-shell").args(["prune", "--older-than", "0d", "--keep-last", "1"]).assert().failure();
    assert_eq!(a.get_output().status.code(), Some(2));
    assert!(stderr(&a).contains(&format!("only copy of claude {forty}")), "{}", stderr(&a));
    assert!(kept.exists());
    let json = stdout(&env.cmd("lokust-shell").args(["list", "--json"]).assert().success());
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.as_array().unwrap().iter().filter(|r| r["kind"] == "archive").count(), 2);

    // One conversation back, at another path, and the CLI resumes it there.
    let to = env.root.path().join("restored here");
    let dry = env
        .cmd("lokust-shell-restore")
        .args(["--from-archive", "--session", forty, "--dry-run", "--to"])
        .arg(&to)
        .assert()
        .success();
    // The transcript and its edit history, nothing else.
    let plan = stdout(&dry);
    assert!(
        plan.contains("files:     2 ") && plan.contains(&format!("file-history/{forty}/notes.md@v1")),
        "{plan}"
    );
    assert!(!to.exists(), "the dry run created the target");
    env.cmd("lokust-shell-restore")
        .args(["--from-archive", "--session", forty, "--to"])
        .arg(&to)
        .assert()
        .success();
    let new_slot = slot_dir(&env, &to);
    let placed: Vec<String> = fs::read_dir(&new_slot)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(placed, [format!("{forty}.jsonl")], "more than the one conversation was placed");
    let before = api.bodies("/v1/messages").len();
    let out = run_cli(&bin, &url, &env.home, &to, &["-p", "--resume", forty, "which words?"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bodies = api.bodies("/v1/messages");
    let body = bodies[before..].iter().find(|b| b.contains("which words?")).expect("the resumed turn");
    assert!(body.contains("FORTY-DAYS"), "the resumed conversation lacks its history");

    // An id the file does not hold: an error, nothing written.
    let a = env
        .cmd("lokust-shell-restore")
        .arg(&kept)
        .args(["--session", "00000000-0000-4000-8000-000000000000", "--to"])
        .arg(env.root.path().join("nowhere"))
        .assert()
        .failure();
    assert!(stderr(&a).contains("holds no conversation"), "{}", stderr(&a));
    assert!(!env.root.path().join("nowhere").exists());
}

/// Gemini CLI deletes the chats of the project it starts in whose `lastUpdated` is past
/// `sessionRetention.maxAge`. With `maxAge` 10d and chats 1, 7 and 12 days old: `doctor`
/// and `snapshot --bundle` count the two due; `archive` keeps them; the real CLI's next
/// start deletes the 12-day one; `list` shows it only in the archive, `prune` keeps that
/// file, and `--from-archive --session` brings it back so that `gemini --resume` sends it.
#[test]
fn the_archive_keeps_a_conversation_gemini_cli_deletes_and_gives_it_back() {
    use crate::util::gemini::{GeminiApi, Home, files_of, gemini_bin, new_conversation, resume};
    use lokust::agent::gemini::{iso, set_last_updated};
    let Some(bin) = gemini_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), cli_home: None };
    home.write_settings();
    let settings = home.gh().join("settings.json");
    let mut s: serde_json::Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    s["general"]["sessionRetention"] = serde_json::json!({"enabled": true, "maxAge": "10d"});
    fs::write(&settings, s.to_string()).unwrap();
    let api = GeminiApi::start();
    let project = env.root.path().join("P/app");
    fs::create_dir_all(&project).unwrap();
    let ids: Vec<String> = ["remember ONE-DAY", "remember SEVEN-DAYS", "remember TWELVE-DAYS"]
        .iter()
        .map(|p| new_conversation(&bin, &api, &home, &project, p))
        .collect();
    let folder = home.gh().join("tmp/app");
    for (id, days) in ids.iter().zip([1, 7, 12]) {
        let when = iso(SystemTime::now() - Duration::from_secs(days * 86_400));
        for file in files_of(&folder, id) {
            fs::write(&file, set_last_updated(&fs::read(&file).unwrap(), &when)).unwrap();
        }
    }
    let twelve = &ids[2];

    let out = stdout(&env.cmd("lokust-shell").arg("doctor").current_dir(&project).assert());
    let line = out.lines().find(|l| l.contains("gemini retention")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("! ") && line.contains("2 conversations within five days"), "{out}");
    assert!(line.contains("sessionRetention maxAge 10d"), "{out}");
    let said = bundle_warnings(&env, &project);
    assert!(said.contains("Gemini CLI deletes 2 conversations of this project"), "{said}");

    env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    let again = env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    assert!(stderr(&again).contains("nothing changed"), "{}", stderr(&again));
    assert_eq!(archives(&env).len(), 1);
    let kept = archives(&env)[0].clone();

    // The control: the CLI's next start here deletes the 12-day chat, and only it.
    new_conversation(&bin, &api, &home, &project, "a fourth one");
    assert!(files_of(&folder, twelve).is_empty(), "Gemini CLI kept a chat past maxAge: the control failed");
    assert!(!files_of(&folder, &ids[1]).is_empty());

    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    assert!(list.contains(&format!("only here: gemini {twelve}")), "{list}");
    env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    assert_eq!(archives(&env).len(), 2);
    let a =
        env.cmd("lokust-shell").args(["prune", "--older-than", "0d", "--keep-last", "1"]).assert().failure();
    assert_eq!(a.get_output().status.code(), Some(2));
    assert!(stderr(&a).contains(&format!("only copy of gemini {twelve}")), "{}", stderr(&a));
    assert!(kept.exists());

    let to = env.root.path().join("restored here");
    env.cmd("lokust-shell-restore")
        .args(["--from-archive", "--session", twelve, "--to"])
        .arg(&to)
        .assert()
        .success();
    // Dated back into the window by the restore, so this start does not delete it again.
    let sent = resume(&bin, &api, &home, &to, twelve, "which words?");
    assert!(sent.contains("TWELVE-DAYS"), "the resumed chat lacks its history");
    assert!(!sent.contains("SEVEN-DAYS"), "more than the one conversation was placed");
}

/// A change to the git work alone is a change: the archive is written again, and not when
/// nothing changed (a modified file of the same size counts, by its patch).
#[test]
fn a_change_to_the_git_work_alone_makes_a_new_archive() {
    let env = TestEnv::new();
    let project = env.root.path().join("work");
    crate::util::git_repo(&project);
    crate::util::claude::make_project(&env, &project);
    fs::write(project.join("README"), "hellO\n").unwrap();
    let archive = || env.cmd("lokust-shell").arg("archive").current_dir(&project).assert().success();
    archive();
    assert!(stderr(&archive()).contains("nothing changed"));
    assert_eq!(archives(&env).len(), 1);
    fs::write(project.join("README"), "hellX\n").unwrap();
    archive();
    assert_eq!(archives(&env).len(), 2, "a modified file of the same size was not seen");
    fs::write(project.join("notes.txt"), "new\n").unwrap();
    archive();
    assert_eq!(archives(&env).len(), 3, "a new untracked file was not seen");
    assert!(stderr(&archive()).contains("nothing changed"));
}

/// `list` shows every kept file: snapshots, exports and live files with the project and
/// agents read from a plain file (the bundle's data stepped over), "(sealed)" for one it
/// cannot open; `--project` keeps the plain files of that project.
#[test]
fn list_names_the_project_of_plain_kept_files_and_filters_by_it() {
    let env = TestEnv::new();
    let project = env.root.path().join("proj a");
    crate::util::claude::make_project(&env, &project);
    let other = env.root.path().join("other");
    fs::create_dir_all(&other).unwrap();
    let state = env.home.join(".local/state/lokust");
    let snapshots = state.join("snapshots");
    fs::create_dir_all(&snapshots).unwrap();
    env.cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--no-worktree", "-o"])
        .arg(snapshots.join("one.lok"))
        .assert()
        .success();
    env.cmd("lokust-shell")
        .args(["snapshot", "--live", "4242", "--shell", "bash", "--history-from", "/dev/null"])
        .current_dir(&other)
        .env("PWD", &other)
        .assert()
        .success();
    fs::write(snapshots.join("two.lok.age"), "age-encryption.org/v1\n").unwrap();
    let real = fs::canonicalize(&project).unwrap().to_string_lossy().into_owned();

    let list = stdout(&env.cmd("lokust-shell").arg("list").assert().success());
    let line = |kind: &str| {
        list.lines()
            .find(|l| l.starts_with(kind))
            .unwrap_or_else(|| panic!("no {kind} line:\n{list}"))
            .to_string()
    };
    assert!(line("snapshot").contains(&format!("{real}  claude  ")), "{list}");
    assert!(list.contains("(sealed)"), "{list}");
    assert!(line("live").contains(fs::canonicalize(&other).unwrap().to_str().unwrap()), "{list}");

    let mine = stdout(&env.cmd("lokust-shell").args(["list", "--project"]).arg(&project).assert().success());
    assert!(
        mine.contains("one.lok") && !mine.contains("4242.lok") && !mine.contains("two.lok.age"),
        "{mine}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&stdout(&env.cmd("lokust-shell").args(["list", "--json"]).assert().success()))
            .unwrap();
    let one =
        rows.as_array().unwrap().iter().find(|r| r["path"].as_str().unwrap().ends_with("one.lok")).unwrap();
    assert_eq!(one["project_dir"], real.as_str());
    assert_eq!(one["agents"][0], "claude");
}
