//! The real OpenCode resumes a session that lokust moved: its native binary runs under
//! `env -i` with private XDG folders, its model served by a local stand-in of an
//! OpenAI-compatible API on 127.0.0.1, so a test sees the earlier turn go out again from
//! the new directory, with `--session` and with `--continue`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine;
use lokust::agent::opencode;

use crate::util::TestEnv;
use crate::util::standin::{REPLY, StandIn};

/// The folder holding the binary `scripts/agent-clis` installs.
fn opencode_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/agent-clis/opencode/node_modules/opencode-linux-x64/bin");
    if dir.join("opencode").exists() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "OpenCode is required in CI: run ./scripts/agent-clis");
    eprintln!("skipped: {} is not installed (./scripts/agent-clis installs it)", dir.display());
    None
}

/// Private XDG folders under the test's HOME, as OpenCode and lokust both read them.
struct Xdg {
    home: PathBuf,
}

impl Xdg {
    fn vars(&self) -> Vec<(String, PathBuf)> {
        [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), self.home.join(v)))
        .collect()
    }

    fn data(&self) -> PathBuf {
        self.home.join(".local/share/opencode")
    }

    /// The stand-in as the only provider; no model list, sharing or updates.
    fn write_config(&self, api: &StandIn) {
        let dir = self.home.join(".config/opencode");
        std::fs::create_dir_all(&dir).unwrap();
        let config = serde_json::json!({"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("{}/v1", api.url()), "apiKey": "OPENCODE-KEY-CANARY-3391"},
            "models": {"mock-model": {"name": "Mock"}}}},
            "model": "mock/mock-model", "small_model": "mock/mock-model", "autoupdate": false, "share": "disabled"});
        std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
    }
}

use crate::util::output_text as text;

/// `opencode ARGS` in `cwd` under `env -i`.
fn opencode(bin_dir: &Path, xdg: &Xdg, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("120")
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", xdg.home.display()))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin");
    for (k, v) in xdg.vars() {
        cmd.arg(format!("{k}={}", v.display()));
    }
    for flag in ["MODELS_FETCH", "AUTOUPDATE", "DEFAULT_PLUGINS", "LSP_DOWNLOAD", "SHARE"] {
        cmd.arg(format!("OPENCODE_DISABLE_{flag}=1"));
    }
    cmd.arg(bin_dir.join("opencode")).args(args).current_dir(cwd).stdin(std::process::Stdio::null());
    cmd.output().expect("run opencode")
}

/// The session a `run --format json` worked on.
fn session_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|e| e["sessionID"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no sessionID: {}", text(out)))
}

/// Runs one turn and returns its session and the body of the chat request that carried
/// `prompt`.
fn turn(
    bin_dir: &Path,
    api: &StandIn,
    xdg: &Xdg,
    cwd: &Path,
    args: &[&str],
    prompt: &str,
) -> (String, String) {
    let before = api.bodies("/chat/completions").len();
    let mut all = vec!["run", "--format", "json"];
    all.extend_from_slice(args);
    all.push(prompt);
    let out = opencode(bin_dir, xdg, cwd, &all);
    assert!(out.status.success(), "{}", text(&out));
    let bodies = api.bodies("/chat/completions");
    let body = bodies[before..]
        .iter()
        .rfind(|b| b.contains(prompt))
        .cloned()
        .unwrap_or_else(|| panic!("no request carried the prompt: {}", text(&out)));
    (session_of(&out), body)
}

fn git(dir: &Path, args: &[&str]) {
    crate::util::run_ok(Command::new("git").args(args).current_dir(dir).env("HOME", dir));
}

fn lokust(env: &TestEnv, xdg: &Xdg, bin: &str, path_first: Option<&Path>) -> assert_cmd::Command {
    let mut cmd = env.cmd(bin);
    for (k, v) in xdg.vars() {
        cmd.env(k, v);
    }
    if let Some(dir) = path_first {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined =
            std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)))
                .unwrap();
        cmd.env("PATH", joined);
    }
    cmd
}

fn element_files(lok: &Path) -> Vec<(String, Vec<u8>)> {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(lok).unwrap()).unwrap();
    let element =
        doc["bundles"].as_array().unwrap().iter().find(|e| e["kind"] == opencode::KIND).unwrap().clone();
    let gz = base64::engine::general_purpose::STANDARD.decode(element["data"].as_str().unwrap()).unwrap();
    let mut tar = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut tar).unwrap();
    crate::util::claude::entries(&tar)
}

/// A session in a git repository with a commit moves to a fresh clone at a path with a
/// dot, a space and non-ASCII letters, on a receiver that already has its own OpenCode
/// database; `--session` and `--continue` there send the earlier turn.
#[test]
fn a_session_resumes_in_a_fresh_clone_at_a_path_with_a_dot_a_space_and_non_ascii_letters() {
    let Some(bin_dir) = opencode_dir() else { return };
    let env = TestEnv::new();
    let xdg = Xdg { home: env.home.clone() };
    let api = crate::util::standin::chat_completions();
    xdg.write_config(&api);
    let project = env.root.path().join("orig/proj");
    std::fs::create_dir_all(&project).unwrap();
    git(&project, &["init", "-q"]);
    std::fs::write(project.join("README"), "hello\n").unwrap();
    git(&project, &["add", "README"]);
    git(&project, &["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "first"]);
    let (id, _) = turn(&bin_dir, &api, &xdg, &project, &[], "remember the word TAPIR-9");
    // Found in OpenCode's own database, opened read-only.
    let found =
        crate::util::stdout(&lokust(&env, &xdg, "lokust-shell", None).args(["find", &id]).assert().success());
    let real = std::fs::canonicalize(&project).unwrap();
    assert!(
        found.starts_with(&format!("OpenCode: {id}"))
            && found.contains(&format!("{} (exists)", real.display())),
        "{found}"
    );
    assert!(found.contains(&format!("opencode --session {id}")), "{found}");
    let elsewhere = env.root.path().join("orig/proj-b");
    std::fs::create_dir_all(&elsewhere).unwrap();
    turn(&bin_dir, &api, &xdg, &elsewhere, &[], "another project: IBEX-2");

    let lok = env.root.path().join("moved.lok");
    let out = lokust(&env, &xdg, "lokust-shell-snapshot", None)
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--agents", "opencode", "--no-worktree", "-o"])
        .arg(&lok)
        .assert()
        .success();
    let summary = crate::util::stderr(&out);
    assert!(summary.contains("opencode:    1 conversation"), "{summary}");
    let raw = std::fs::read_to_string(&lok).unwrap();
    assert!(!raw.contains("OPENCODE-KEY-CANARY-3391"), "a provider key travelled");
    // What travels is what `opencode export` prints, read from the database by lokust.
    let exported = opencode(&bin_dir, &xdg, &project, &["export", &id]);
    assert!(exported.status.success(), "{}", text(&exported));
    let by_cli: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    let files = element_files(&lok);
    assert_eq!(files.len(), 1);
    let carried: serde_json::Value = serde_json::from_slice(&files[0].1).unwrap();
    assert_eq!(carried, opencode::without_grants(by_cli), "lokust's export differs from OpenCode's");
    assert!(!files[0].0.contains("..") && !String::from_utf8_lossy(&files[0].1).contains("IBEX-2"));
    let listing = crate::util::stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(listing.contains("OpenCode conversations:") && listing.contains(&id), "{listing}");
    assert!(listing.contains("remember the word TAPIR-9"), "{listing}");

    // The receiver: no trace of the session, a fresh clone, its own database in use.
    std::fs::remove_dir_all(xdg.data()).unwrap();
    let target = env.root.path().join("new home/re.named dir/ünïcödé 日本");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    crate::util::run_ok(Command::new("git").arg("clone").arg("-q").arg(&project).arg(&target));
    std::fs::remove_dir_all(env.root.path().join("orig")).unwrap();
    let own = env.root.path().join("receivers own");
    std::fs::create_dir_all(&own).unwrap();
    let (own_id, _) = turn(&bin_dir, &api, &xdg, &own, &[], "the receiver's own: YAK-1");
    // The control: --continue in the clone starts afresh before the restore.
    let (fresh, body) = turn(&bin_dir, &api, &xdg, &target, &["--continue"], "anything here?");
    assert!(fresh != id && !body.contains("TAPIR-9"), "the control found the session before the restore");

    let plan = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .arg("--dry-run")
            .assert()
            .success(),
    );
    assert!(
        plan.contains("OpenCode: 1 session would go to its database") && plan.contains("import FILE"),
        "{plan}"
    );
    let said = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .assert()
            .success(),
    );
    assert!(
        said.contains("OpenCode: 1 session in its database")
            && said.contains(&format!("opencode --session {id}")),
        "{said}"
    );

    let (resumed, body) = turn(&bin_dir, &api, &xdg, &target, &["--session", &id], "which word?");
    assert_eq!(resumed, id);
    assert!(body.contains("TAPIR-9") && body.contains(REPLY), "the earlier turn was not sent: {body}");
    let (continued, body) = turn(&bin_dir, &api, &xdg, &target, &["--continue"], "and now?");
    assert_eq!(continued, id, "--continue did not pick the moved session");
    assert!(body.contains("TAPIR-9"), "{body}");
    let (again, body) = turn(&bin_dir, &api, &xdg, &own, &["--session", &own_id], "yours?");
    assert_eq!(again, own_id);
    assert!(body.contains("YAK-1"), "the receiver's own session was disturbed: {body}");

    // Restored again: the session is there, kept as it is.
    let said = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .assert()
            .success(),
    );
    assert!(said.contains(&format!("kept the receiver's own {id}")), "{said}");
}

/// Without OpenCode on the receiver's PATH the export waits in a private file, and the
/// printed command imports it later.
#[test]
fn without_opencode_on_path_the_session_waits_for_a_later_import() {
    let Some(bin_dir) = opencode_dir() else { return };
    let env = TestEnv::new();
    let xdg = Xdg { home: env.home.clone() };
    let api = crate::util::standin::chat_completions();
    xdg.write_config(&api);
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let (id, _) = turn(&bin_dir, &api, &xdg, &project, &[], "remember the word GNU-5");
    let lok = env.root.path().join("s.lok");
    lokust(&env, &xdg, "lokust-shell-snapshot", None)
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--agents", "opencode", "-o"])
        .arg(&lok)
        .assert()
        .success();
    std::fs::remove_dir_all(xdg.data()).unwrap();
    let target = env.root.path().join("q r");
    let said = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", None)
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .assert()
            .success(),
    );
    assert!(said.contains("(opencode is not on PATH)"), "{said}");
    let file = xdg.data().join(format!("lokust-import/{id}.json"));
    assert_eq!(lokust::fsutil::mode(&file).unwrap(), 0o600);
    let out = opencode(&bin_dir, &xdg, &target, &["import", file.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("Imported session: {id}")),
        "{}",
        text(&out)
    );
    let (resumed, body) = turn(&bin_dir, &api, &xdg, &target, &["--session", &id], "which word?");
    assert_eq!(resumed, id);
    assert!(body.contains("GNU-5"), "{body}");
}

/// A stranger's export: the session's permission rules allow every shell command, it
/// carries a pending revert, and a second file tries to slip a message into another
/// session. The first lands through the real import without the allow rule or the
/// revert; an element with the second is refused whole, nothing imported.
#[test]
fn a_strangers_opencode_element_grants_nothing_and_cannot_reach_another_session() {
    let Some(bin_dir) = opencode_dir() else { return };
    let env = TestEnv::new();
    let xdg = Xdg { home: env.home.clone() };
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(&env, &project);
    let (base, _) = crate::util::claude::snapshot(&env, &project, &["--agents", "claude"]);
    let ses = "ses_0a0b0c0d0e0fStrangerSession";
    let export = |session_of_message: &str| {
        serde_json::json!({
            "info": {"id": ses, "slug": "odd-one", "projectID": "global", "directory": "/old/p", "path": "",
                "title": "hello", "version": "1.18.33",
                "permission": [{"permission": "bash", "pattern": "*", "action": "allow"},
                               {"permission": "question", "pattern": "*", "action": "deny"}],
                "revert": {"messageID": "msg_0001", "snapshot": "0000000000000000000000000000000000000000"},
                "time": {"created": 1795503445307_u64, "updated": 1795503448616_u64}},
            "messages": [{"info": {"role": "user", "time": {"created": 1795503445427_u64}, "agent": "build",
                "model": {"providerID": "mock", "modelID": "mock-model"}, "id": "msg_0001", "sessionID": session_of_message},
                "parts": [{"type": "text", "text": "hi", "id": "prt_0001", "sessionID": session_of_message, "messageID": "msg_0001"}]}]
        })
    };
    let element = |doc: &serde_json::Value| {
        use crate::util::archive::{raw, raw_tar};
        let body = serde_json::to_vec(doc).unwrap();
        let tar = raw_tar(&[raw(format!("{ses}.json").as_bytes(), b'0', &body)]);
        let data = base64::engine::general_purpose::STANDARD.encode(crate::util::archive::gzip(&tar));
        serde_json::json!({"kind": opencode::KIND, "format": "tar.gz+base64", "uncompressed_bytes": tar.len(),
            "base64_bytes": data.len(), "data": data, "project_dir": "/old/p"})
    };
    let with = |element: serde_json::Value, name: &str| {
        let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
        doc["bundles"] = serde_json::json!([element]);
        let out = env.root.path().join(name);
        std::fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
        out
    };
    let target = env.root.path().join("t");

    let bad = with(element(&export("ses_receiversOwnSession")), "bad.lok");
    let out = lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
        .arg(&bad)
        .arg("--to")
        .arg(&target)
        .assert()
        .failure();
    let err = crate::util::stderr(&out);
    assert!(err.contains("OpenCode conversations refused, nothing of them written"), "{err}");
    assert!(!xdg.data().join("opencode.db").exists(), "the database was touched");

    let lok = with(element(&export(ses)), "grant.lok");
    let said = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .assert()
            .success(),
    );
    assert!(said.contains("OpenCode: 1 session in its database"), "{said}");
    let conn = rusqlite::Connection::open(xdg.data().join("opencode.db")).unwrap();
    let (permission, revert, directory): (Option<String>, Option<String>, String) = conn
        .query_row("SELECT permission, revert, directory FROM session WHERE id = ?1", [ses], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    let permission = permission.unwrap_or_default();
    assert!(!permission.contains("allow") && permission.contains("deny"), "{permission}");
    assert!(revert.is_none(), "{revert:?}");
    assert_eq!(Path::new(&directory), std::fs::canonicalize(&target).unwrap());
}

/// `opencode import` must run in the checkout to bind the session to its project, and a
/// checkout can configure what OpenCode runs there (a plugin runs when OpenCode starts).
/// The import lokust runs has the project's own configuration switched off: a plugin that
/// runs under a plain `opencode` in that folder does not run during the restore.
#[test]
fn the_import_runs_nothing_the_checkout_configures() {
    let Some(bin_dir) = opencode_dir() else { return };
    let env = TestEnv::new();
    let xdg = Xdg { home: env.home.clone() };
    let api = crate::util::standin::chat_completions();
    xdg.write_config(&api);
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let (id, _) = turn(&bin_dir, &api, &xdg, &project, &[], "remember OKAPI-5");
    let lok = env.root.path().join("s.lok");
    lokust(&env, &xdg, "lokust-shell-snapshot", None)
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--agents", "opencode", "--no-worktree", "-o"])
        .arg(&lok)
        .assert()
        .success();
    std::fs::remove_dir_all(xdg.data()).unwrap();

    let target = env.root.path().join("t");
    let marker = env.root.path().join("plugin-ran");
    let plugin = format!(
        "import fs from \"fs\";\nfs.writeFileSync({:?}, \"ran\");\nexport const Canary = async () => ({{}});\n",
        marker.to_str().unwrap()
    );
    std::fs::create_dir_all(target.join(".opencode/plugin")).unwrap();
    std::fs::write(target.join(".opencode/plugin/canary.js"), plugin).unwrap();
    // The control: OpenCode started plainly in the folder runs the plugin.
    let out = opencode(&bin_dir, &xdg, &target, &["session", "list"]);
    assert!(marker.exists(), "the control plugin did not run: {}", text(&out));
    std::fs::remove_file(&marker).unwrap();
    std::fs::remove_dir_all(xdg.data()).unwrap();

    let said = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell-restore", Some(&bin_dir))
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .assert()
            .success(),
    );
    assert!(said.contains("OpenCode: 1 session in its database"), "{said}");
    assert!(!marker.exists(), "the checkout's plugin ran during the restore");
    let conn = rusqlite::Connection::open(xdg.data().join("opencode.db")).unwrap();
    let directory: String =
        conn.query_row("SELECT directory FROM session WHERE id = ?1", [&id], |r| r.get(0)).unwrap();
    assert_eq!(Path::new(&directory), std::fs::canonicalize(&target).unwrap());
}

/// `lokust-shell move P/a P/b --move-dir` on this machine: OpenCode's rows are repointed in
/// its own database, in place and in one transaction, the journal mode kept. In `P/b`
/// `run --session ID` and `run --continue` both carry the earlier turn; another project's
/// session keeps its folder; `find` names `P/b`.
#[test]
fn a_session_moves_on_this_machine_in_its_own_database() {
    let Some(bin_dir) = opencode_dir() else { return };
    let env = TestEnv::new();
    let xdg = Xdg { home: env.home.clone() };
    let api = crate::util::standin::chat_completions();
    xdg.write_config(&api);
    let base = std::fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b, other) = (base.join("a"), base.join("b"), base.join("a-other"));
    for dir in [&a, &other] {
        std::fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("README"), dir.to_string_lossy().as_bytes()).unwrap();
        git(dir, &["add", "README"]);
        git(dir, &["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "first"]);
    }
    let (id, _) = turn(&bin_dir, &api, &xdg, &a, &[], "remember the word CAPYBARA-6");
    let (other_id, _) = turn(&bin_dir, &api, &xdg, &other, &[], "another project: IBEX-2");
    let db = xdg.data().join("opencode.db");
    let mode = |db: &Path| -> String {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap()
    };
    let mode_before = mode(&db);

    let out = lokust(&env, &xdg, "lokust-shell", None)
        .args(["move", "--move-dir"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    assert!(crate::util::stdout(&out).contains("OpenCode: 1 conversation"), "{}", crate::util::stdout(&out));
    assert!(b.is_dir() && !a.exists());
    assert_eq!(mode(&db), mode_before, "the journal mode changed");
    let found =
        crate::util::stdout(&lokust(&env, &xdg, "lokust-shell", None).args(["find", &id]).assert().success());
    assert!(found.contains(&format!("{} (exists)", b.display())), "{found}");
    let theirs = crate::util::stdout(
        &lokust(&env, &xdg, "lokust-shell", None).args(["find", &other_id]).assert().success(),
    );
    assert!(
        theirs.contains(&format!("{} (exists)", other.display())),
        "a prefix-sharing project moved: {theirs}"
    );

    let (resumed, body) = turn(&bin_dir, &api, &xdg, &b, &["--session", &id], "which word?");
    assert_eq!(resumed, id);
    assert!(body.contains("CAPYBARA-6"), "the earlier turn was not sent");
    let (continued, body) = turn(&bin_dir, &api, &xdg, &b, &["--continue"], "and now?");
    assert_eq!(continued, id, "--continue in the new folder started a new session");
    assert!(body.contains("CAPYBARA-6"));
}
