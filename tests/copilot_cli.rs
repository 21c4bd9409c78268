//! The real GitHub Copilot CLI (1.0.102, pinned by scripts/agent-clis) resumes sessions that
//! lokust moved: offline (`COPILOT_OFFLINE`), under `env -i` with a private HOME, its model a
//! local stand-in of an OpenAI-compatible API on 127.0.0.1. The stand-in sees the earlier
//! turn go out again, and the system prompt names the new folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lokust::agent::copilot;

use crate::util::standin::StandIn;
use crate::util::{TestEnv, stderr, stdout};

fn copilot_bin() -> Option<PathBuf> {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/copilot/node_modules/.bin/copilot");
    if bin.exists() {
        unpacked(&bin);
        return Some(bin);
    }
    assert!(std::env::var_os("CI").is_none(), "Copilot CLI is required in CI: run ./scripts/agent-clis");
    eprintln!("skipped: {} is not installed (./scripts/agent-clis installs it)", bin.display());
    None
}

/// The CLI unpacks its bundled app on its first real run: done once, before any test
/// runs it, so that tests running side by side never unpack into the cache together.
fn unpacked(bin: &Path) {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let home = tempfile::tempdir().unwrap();
        let out = Command::new("timeout")
            .arg("120")
            .arg("env")
            .arg("-i")
            .arg(format!("HOME={}", home.path().display()))
            .arg("PATH=/usr/local/bin:/usr/bin:/bin")
            .arg("COPILOT_OFFLINE=true")
            .arg("COPILOT_AUTO_UPDATE=false")
            .arg(format!("COPILOT_PKG_CACHE_HOME={}", package_cache().display()))
            .arg(bin)
            .arg("--help")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run copilot --help");
        assert!(out.status.success(), "copilot --help: {}", text(&out));
    });
}

/// Where the CLI unpacks its bundled app: once for every test, not per HOME.
fn package_cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/copilot-cache")
}

/// The receiver's and the sender's machine: a HOME, and `COPILOT_HOME` when set.
struct Home {
    home: PathBuf,
    copilot_home: Option<PathBuf>,
}

impl Home {
    fn dir(&self) -> PathBuf {
        self.copilot_home.clone().unwrap_or_else(|| self.home.join(".copilot"))
    }

    fn vars(&self) -> Vec<(&'static str, PathBuf)> {
        self.copilot_home.iter().map(|h| ("COPILOT_HOME", h.clone())).collect()
    }
}

/// `copilot ARGS` in `cwd`, offline, against the stand-in.
fn copilot(bin: &Path, api: &StandIn, home: &Home, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("120").arg("env").arg("-i").arg(format!("HOME={}", home.home.display()));
    cmd.arg("PATH=/usr/local/bin:/usr/bin:/bin");
    for (k, v) in home.vars() {
        cmd.arg(format!("{k}={}", v.display()));
    }
    cmd.arg("COPILOT_OFFLINE=true")
        .arg(format!("COPILOT_PROVIDER_BASE_URL={}/v1", api.url()))
        .arg("COPILOT_PROVIDER_TYPE=openai")
        .arg("COPILOT_PROVIDER_API_KEY=dummy-key-for-the-local-stand-in-0123456789")
        .arg("COPILOT_MODEL=mock-model")
        .arg(format!("COPILOT_PKG_CACHE_HOME={}", package_cache().display()))
        .arg("COPILOT_AUTO_UPDATE=false")
        .arg(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null());
    cmd.output().expect("run copilot")
}

use crate::util::output_text as text;

/// One prompt; returns the session and the body of the request that carried the prompt.
fn turn(
    bin: &Path,
    api: &StandIn,
    home: &Home,
    cwd: &Path,
    resume: Option<&str>,
    prompt: &str,
) -> (String, String) {
    let before = api.bodies("/chat/completions").len();
    let mut args = Vec::new();
    let resume_arg = resume.map(|id| format!("--resume={id}"));
    if let Some(r) = &resume_arg {
        args.push(r.as_str());
    }
    args.extend(["-p", prompt, "--allow-all-tools", "--output-format", "json"]);
    let out = copilot(bin, api, home, cwd, &args);
    assert!(out.status.success(), "{}", text(&out));
    let session = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "result")
        .find_map(|e| e["sessionId"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no result line: {}", text(&out)));
    let bodies = api.bodies("/chat/completions");
    let body = bodies[before..]
        .iter()
        .rfind(|b| b.contains(prompt))
        .cloned()
        .unwrap_or_else(|| panic!("no request carried the prompt: {}", text(&out)));
    (session, body)
}

fn git(dir: &Path, args: &[&str]) {
    crate::util::run_ok(Command::new("git").args(args).current_dir(dir).env("HOME", dir));
}

fn lokust(env: &TestEnv, home: &Home, bin: &str) -> assert_cmd::Command {
    let mut cmd = env.cmd(bin);
    cmd.env("HOME", &home.home);
    for (k, v) in home.vars() {
        cmd.env(k, v);
    }
    cmd
}

/// Two conversations in a project (one from a subfolder) and one in another project, a
/// token in `config.json`; snapshot, wipe, restore at a new path with a space and
/// non-ASCII letters into a fresh clone while the old path exists but is empty:
/// `--resume=<id> -p` from the new folder and from an unrelated one both continue the
/// conversation, the model is told the new folder, and neither the token nor the other
/// project's conversation travelled.
fn run_move(with_copilot_home: bool) {
    let Some(bin) = copilot_bin() else { return };
    let env = TestEnv::new();
    let home = Home {
        home: env.home.clone(),
        copilot_home: with_copilot_home.then(|| env.root.path().join("copilot home")),
    };
    let api = crate::util::standin::chat_completions();
    let project = env.root.path().join("orig/proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    git(&project, &["init", "-q"]);
    std::fs::write(project.join("README"), "hello\n").unwrap();
    std::fs::write(project.join("sub/notes.txt"), "notes\n").unwrap();
    git(&project, &["add", "README", "sub/notes.txt"]);
    git(&project, &["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "first"]);
    let (id, _) = turn(&bin, &api, &home, &project, None, "remember the word HERON-4");
    let (sub_id, _) = turn(&bin, &api, &home, &project.join("sub"), None, "from the subfolder: MARTEN-7");
    let elsewhere = env.root.path().join("orig/other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    turn(&bin, &api, &home, &elsewhere, None, "another project: IBEX-2");
    let token = "gho_CopilotTokenCanary0123456789abcdefABCD";
    std::fs::write(
        home.dir().join("config.json"),
        serde_json::json!({"loggedInUsers": [{"host": "https://github.com", "login": "me"}],
            "copilotTokens": {"https://github.com:me": token}})
        .to_string(),
    )
    .unwrap();

    let lok = env.root.path().join("moved.lok");
    let out = lokust(&env, &home, "lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--agents", "copilot", "--no-worktree", "-o"])
        .arg(&lok)
        .assert()
        .success();
    let summary = stderr(&out);
    assert!(summary.contains("2 conversations"), "{summary}");
    let raw = std::fs::read_to_string(&lok).unwrap();
    let listing = stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(listing.contains(&id) && listing.contains(&sub_id), "{listing}");
    assert!(listing.contains("remember the word HERON-4"), "{listing}");
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let element = doc["bundles"].as_array().unwrap().iter().find(|e| e["kind"] == copilot::KIND).unwrap();
    let files = lokust::agent::files(&copilot::Copilot, element.as_object().unwrap(), 1 << 30).unwrap();
    let all: String = files.iter().map(|f| String::from_utf8_lossy(&f.data).into_owned()).collect();
    assert!(!all.contains(token) && !raw.contains(token), "the sign-in token travelled");
    assert!(!all.contains("IBEX-2"), "another project's conversation travelled");
    assert!(files.iter().all(|f| !f.rel.contains("session-store") && !f.rel.ends_with(".lock")));

    // The receiver: no trace of the sessions, a fresh clone at a new path, the old path
    // there but empty (resume would change into it if `cwd` were left).
    std::fs::remove_dir_all(home.dir().join("session-state")).unwrap();
    let target = env.root.path().join("new home/re.named dir/ünïcödé 日本");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    crate::util::run_ok(Command::new("git").arg("clone").arg("-q").arg(&project).arg(&target));
    std::fs::remove_dir_all(&project).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let real = std::fs::canonicalize(&target).unwrap();

    let plan = stdout(
        &lokust(&env, &home, "lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .arg("--dry-run")
            .assert()
            .success(),
    );
    assert!(plan.contains("GitHub Copilot CLI: 2 sessions would go to"), "{plan}");
    assert!(!home.dir().join("session-state").exists(), "the dry run wrote");
    let said = stdout(
        &lokust(&env, &home, "lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success(),
    );
    assert!(said.contains("copilot --resume="), "{said}");
    let yaml =
        std::fs::read_to_string(home.dir().join(format!("session-state/{id}/workspace.yaml"))).unwrap();
    assert!(copilot::workspace_fields(&yaml)["cwd"] == real.to_str().unwrap(), "{yaml}");

    let (resumed, body) = turn(&bin, &api, &home, &real, Some(&id), "which word?");
    assert_eq!(resumed, id);
    assert!(body.contains("HERON-4"), "the earlier turn was not sent: {body}");
    let cwd_line = format!("Current working directory: {}", real.display());
    let told = serde_json::to_string(&cwd_line).unwrap();
    assert!(body.contains(told.trim_matches('"')), "the model was not told the new folder");
    // From an unrelated folder the CLI changes into the restored one.
    let unrelated = env.root.path().join("unrelated");
    std::fs::create_dir_all(&unrelated).unwrap();
    let (resumed, body) = turn(&bin, &api, &home, &unrelated, Some(&sub_id), "and here?");
    assert_eq!(resumed, sub_id);
    assert!(body.contains("MARTEN-7"), "{body}");
    let sub_line =
        serde_json::to_string(&format!("Current working directory: {}/sub", real.display())).unwrap();
    assert!(
        body.contains(sub_line.trim_matches('"')),
        "the subfolder session did not move to the new folder"
    );

    // Restored again: the sessions are the receiver's now, kept as they are.
    let said = stdout(
        &lokust(&env, &home, "lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success(),
    );
    assert!(said.contains("2 kept as they were"), "{said}");
}

#[test]
fn sessions_resume_after_a_move_to_a_path_with_a_space_and_non_ascii_letters() {
    run_move(false);
}

#[test]
fn sessions_resume_after_a_move_with_copilot_home_set() {
    run_move(true);
}

/// Elements a stranger could craft are refused whole, nothing written in the home.
#[test]
fn hostile_copilot_elements_are_refused_whole() {
    use crate::util::archive::{element_of, raw, raw_tar, with_bundles};
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(&env, &project);
    let (base, _) = crate::util::claude::snapshot(&env, &project, &["--agents", "claude"]);
    let id = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
    let start = serde_json::json!({"type": "session.start", "id": "1d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
        "timestamp": "2026-11-24T06:32:04.935Z", "data": {"sessionId": id, "context": {"cwd": "/old/p"}}});
    let user = serde_json::json!({"type": "user.message", "id": "2d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
        "timestamp": "2026-11-24T06:32:05.000Z", "data": {"content": "hi"}});
    let events = format!("{start}\n{user}\n");
    let ev = format!("{id}/events.jsonl");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "a path out of the tree",
            raw_tar(&[raw(format!("{id}/../../config.json").as_bytes(), b'0', b"{}")]),
        ),
        (
            "the sign-in",
            raw_tar(&[raw(ev.as_bytes(), b'0', events.as_bytes()), raw(b"config.json", b'0', b"{}")]),
        ),
        ("the store", raw_tar(&[raw(b"session-store.db", b'0', b"SQLite format 3\0")])),
        (
            "a link",
            raw_tar(&[
                raw(ev.as_bytes(), b'0', events.as_bytes()),
                crate::util::archive::Raw {
                    name: format!("{id}/plan.md").leak().as_bytes(),
                    kind: b'2',
                    data: b"",
                    link: b"/etc/passwd",
                },
            ]),
        ),
        ("the flat layout", raw_tar(&[raw(format!("{id}.jsonl").as_bytes(), b'0', events.as_bytes())])),
        // A session that would resume in /etc, or in a `cwd` hidden in another YAML form.
        (
            "a folder outside the project",
            raw_tar(&[
                raw(ev.as_bytes(), b'0', events.as_bytes()),
                raw(format!("{id}/workspace.yaml").leak().as_bytes(), b'0', b"cwd: /etc\n"),
            ]),
        ),
        (
            "a quoted key",
            raw_tar(&[
                raw(ev.as_bytes(), b'0', events.as_bytes()),
                raw(format!("{id}/workspace.yaml").leak().as_bytes(), b'0', b"\"cwd\": /etc\n"),
            ]),
        ),
        (
            "an explicit key",
            raw_tar(&[
                raw(ev.as_bytes(), b'0', events.as_bytes()),
                raw(format!("{id}/workspace.yaml").leak().as_bytes(), b'0', b"? cwd\n: /etc\n"),
            ]),
        ),
    ];
    for (what, tar) in cases {
        let element = element_of(copilot::KIND, &tar, Some("/old/p"));
        let lok = with_bundles(&base, vec![element], "hostile.lok");
        let a = env
            .cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(env.root.path().join("t"))
            .assert()
            .code(2);
        assert!(stderr(&a).contains("GitHub Copilot CLI conversations refused"), "{what}: {}", stderr(&a));
        assert!(!env.home.join(".copilot").exists(), "{what}: something was written");
    }
    // An element that does not say which project folder it came from.
    {
        let tar = raw_tar(&[raw(ev.as_bytes(), b'0', events.as_bytes())]);
        let lok = with_bundles(&base, vec![element_of(copilot::KIND, &tar, None)], "nowhere.lok");
        let a = env
            .cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(env.root.path().join("t"))
            .assert()
            .code(2);
        assert!(stderr(&a).contains("does not say which project folder"), "{}", stderr(&a));
        assert!(!env.home.join(".copilot").exists());
    }
    // An id the receiver has, with other content: kept.
    let mine = env.home.join(format!(".copilot/session-state/{id}"));
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("events.jsonl"), "mine\n").unwrap();
    let tar = raw_tar(&[raw(ev.as_bytes(), b'0', events.as_bytes())]);
    let lok = with_bundles(&base, vec![element_of(copilot::KIND, &tar, Some("/old/p"))], "theirs.lok");
    let out = stdout(
        &env.cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(env.root.path().join("t2"))
            .assert()
            .success(),
    );
    assert!(out.contains(&format!("kept the receiver's own {id}")), "{out}");
    assert_eq!(std::fs::read_to_string(mine.join("events.jsonl")).unwrap(), "mine\n");
}

/// `lokust-shell move P/a P/b --move-dir` on this machine: the session folder is laid again
/// where Copilot keeps it (by id), its `cwd` now `P/b`, what does not travel (a lock, a
/// file of a later release) still in it, nothing set aside left; `--resume` from `P/b`
/// sends the earlier turn, and the model is told the new folder.
#[test]
fn a_session_moves_on_this_machine_and_keeps_what_does_not_travel() {
    let Some(bin) = copilot_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), copilot_home: None };
    let api = crate::util::standin::chat_completions();
    let base = std::fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    let (id, _) = turn(&bin, &api, &home, &a, None, "remember the word OSPREY-3");
    let folder = home.dir().join("session-state").join(&id);
    std::fs::write(folder.join("inuse.12345.lock"), "12345").unwrap();
    std::fs::write(folder.join("from-a-later-release.bin"), "kept").unwrap();

    let out =
        lokust(&env, &home, "lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
    assert!(stdout(&out).contains("GitHub Copilot CLI: 1 conversation"), "{}", stdout(&out));
    assert!(b.is_dir() && !a.exists());
    let yaml = std::fs::read_to_string(folder.join("workspace.yaml")).unwrap();
    assert_eq!(copilot::workspace_fields(&yaml)["cwd"], b.to_str().unwrap(), "{yaml}");
    assert_eq!(std::fs::read_to_string(folder.join("inuse.12345.lock")).unwrap(), "12345");
    assert_eq!(std::fs::read_to_string(folder.join("from-a-later-release.bin")).unwrap(), "kept");
    let left: Vec<PathBuf> = crate::util::files_below(&home.dir())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".lokust-moving-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let (resumed, body) = turn(&bin, &api, &home, &b, Some(&id), "which word?");
    assert_eq!(resumed, id);
    assert!(body.contains("OSPREY-3"), "the earlier turn was not sent");
    let told = serde_json::to_string(&format!("Current working directory: {}", b.display())).unwrap();
    assert!(body.contains(told.trim_matches('"')), "the model was not told the new folder");
}
