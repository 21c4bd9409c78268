//! The real Codex CLI resumes a conversation that lokust moved: its native binary runs
//! under `env -i` with a private home, against a local stand-in of the Responses API on
//! 127.0.0.1 that keeps every request, so a test sees which earlier turns go out again and
//! which directory the model is told it is in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine;
use lokust::agent::codex;

use crate::util::TestEnv;
use crate::util::standin::{Reply, StandIn};

/// The native binary `scripts/agent-clis` installs (npm, into target/agent-clis/codex).
fn codex_bin() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "target/agent-clis/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    );
    if bin.exists() {
        return Some(bin);
    }
    assert!(std::env::var_os("CI").is_none(), "the Codex CLI is required in CI: run ./scripts/agent-clis");
    eprintln!("skipped: {} is not installed (./scripts/agent-clis installs it)", bin.display());
    None
}

const REPLY: &str = "STAND-IN-REPLY";

/// A stand-in of the Responses API: every turn gets one short assistant message.
fn responses_api() -> StandIn {
    StandIn::start(|request| {
        if !request.path.ends_with("/responses") {
            return Reply::not_found();
        }
        let events = [
            (
                "response.created",
                serde_json::json!({"type": "response.created", "response": {"id": "resp_1"}}),
            ),
            (
                "response.output_item.done",
                serde_json::json!({"type": "response.output_item.done", "output_index": 0, "item": {
                    "type": "message", "role": "assistant", "id": "msg_1",
                    "content": [{"type": "output_text", "text": REPLY}]}}),
            ),
            (
                "response.completed",
                serde_json::json!({"type": "response.completed", "response": {"id": "resp_1", "usage": {
                    "input_tokens": 10, "input_tokens_details": null, "output_tokens": 2,
                    "output_tokens_details": null, "total_tokens": 12}}}),
            ),
        ];
        Reply::events(events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect())
    })
}

/// Where the CLI keeps its state: `HOME`, and `CODEX_HOME` when the test sets it.
struct Home {
    home: PathBuf,
    codex_home: Option<PathBuf>,
}

impl Home {
    fn dir(&self) -> PathBuf {
        self.codex_home.clone().unwrap_or_else(|| self.home.join(".codex"))
    }

    /// The receiver's own configuration: the stand-in as the only provider, no plugins
    /// and no analytics (both would look up hosts), no update check.
    fn write_config(&self, api: &StandIn) {
        self.write_config_for(api, "mock");
    }

    /// The same for conversations recorded with `provider`: Codex refuses to resume one
    /// with another. The built-in `openai` cannot be redefined, only pointed elsewhere.
    fn write_config_for(&self, api: &StandIn, provider: &str) {
        std::fs::create_dir_all(self.dir()).unwrap();
        let head = "check_for_update_on_startup = false\nmodel = \"mock-model\"\n";
        let tail = "[features]\nplugins = false\n[analytics]\nenabled = false\n";
        let url = api.url();
        let provider = if provider == "openai" {
            format!("model_provider = \"openai\"\nopenai_base_url = \"{url}/v1\"\n")
        } else {
            format!(
                "model_provider = \"{provider}\"\n[model_providers.{provider}]\nname = \"{provider}\"\n\
                 base_url = \"{url}/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n"
            )
        };
        std::fs::write(self.dir().join("config.toml"), format!("{head}{provider}{tail}")).unwrap();
    }

    fn env(&self, cmd: &mut assert_cmd::Command) {
        if let Some(h) = &self.codex_home {
            cmd.env("CODEX_HOME", h);
        }
    }
}

use crate::util::output_text as text;

/// `codex exec --skip-git-repo-check --json ARGS` in `cwd`, under `env -i`.
fn codex(bin: &Path, home: &Home, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("120")
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.home.display()))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin")
        .arg("MOCK_API_KEY=dummy")
        .arg("OPENAI_API_KEY=dummy");
    if let Some(h) = &home.codex_home {
        cmd.arg(format!("CODEX_HOME={}", h.display()));
    }
    cmd.arg(bin).args(["exec", "--skip-git-repo-check", "--json"]).args(args).current_dir(cwd);
    cmd.stdin(std::process::Stdio::null());
    cmd.output().expect("run codex")
}

/// The thread id of a `codex exec --json` run.
fn thread_id(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no thread.started: {}", text(out)))
}

fn new_conversation(bin: &Path, home: &Home, cwd: &Path, prompt: &str) -> String {
    let out = codex(bin, home, cwd, &[prompt]);
    assert!(out.status.success(), "{}", text(&out));
    thread_id(&out)
}

/// Runs `resume ARGS PROMPT` and returns the thread it ran on and the `input` of the
/// request that carried the prompt.
fn resume(
    bin: &Path,
    api: &StandIn,
    home: &Home,
    cwd: &Path,
    args: &[&str],
    prompt: &str,
) -> (String, String) {
    let before = api.bodies("/responses").len();
    let mut all = vec!["resume"];
    all.extend_from_slice(args);
    all.push(prompt);
    let out = codex(bin, home, cwd, &all);
    assert!(out.status.success(), "{}", text(&out));
    let bodies = api.bodies("/responses");
    let body = bodies[before..]
        .iter()
        .find(|b| b.contains(prompt))
        .unwrap_or_else(|| panic!("no request carried the prompt: {}", text(&out)));
    let request: serde_json::Value = serde_json::from_str(body).unwrap();
    (thread_id(&out), request["input"].to_string())
}

/// Every rollout under the home, and what else is in `sessions/`.
fn rollouts(home: &Home) -> Vec<PathBuf> {
    let sessions = home.dir().join("sessions");
    if !sessions.exists() {
        return Vec::new();
    }
    crate::util::files_below(&sessions)
}

fn snapshot(env: &TestEnv, home: &Home, project: &Path, extra: &[&str]) -> (PathBuf, String) {
    let lok = env.root.path().join("moved.lok");
    let mut cmd = env.cmd("lokust-shell-snapshot");
    home.env(&mut cmd);
    let out = cmd
        .current_dir(project)
        .env("PWD", project)
        .arg("--bundle")
        .args(extra)
        .arg("-o")
        .arg(&lok)
        .assert()
        .success();
    (lok, crate::util::stderr(&out))
}

fn restore(env: &TestEnv, home: &Home, lok: &Path, target: &Path, extra: &[&str]) -> String {
    let mut cmd = env.cmd("lokust-shell-restore");
    home.env(&mut cmd);
    let out = cmd.arg(lok).arg("--to").arg(target).args(extra).assert().success();
    crate::util::stdout(&out)
}

fn run_move(with_codex_home: bool) {
    let Some(bin) = codex_bin() else { return };
    let env = TestEnv::new();
    let home = Home {
        home: env.home.clone(),
        codex_home: with_codex_home.then(|| env.root.path().join("codex home")),
    };
    let api = responses_api();
    home.write_config(&api);
    std::fs::write(home.dir().join("auth.json"), r#"{"OPENAI_API_KEY":"CODEX-AUTH-CANARY-7731"}"#).unwrap();
    let project = env.root.path().join("orig/proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();

    let id = new_conversation(&bin, &home, &project, "remember the word ZEBRA-42");
    let sub_id = new_conversation(&bin, &home, &project.join("sub"), "in the subfolder: PELICAN-3");
    let elsewhere = env.root.path().join("orig/project-b");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let other_id = new_conversation(&bin, &home, &elsewhere, "another project: WALRUS-5");
    if with_codex_home {
        assert!(!home.home.join(".codex").exists(), "CODEX_HOME set, yet ~/.codex was written");
    }
    assert_eq!(rollouts(&home).len(), 3);

    let (lok, summary) = snapshot(&env, &home, &project, &[]);
    assert!(summary.contains("codex:       2 conversations"), "{summary}");
    let raw = std::fs::read_to_string(&lok).unwrap();
    assert!(!raw.contains("CODEX-AUTH-CANARY-7731"), "auth.json travelled");
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    crate::util::schema::assert_valid(&doc, "a .lok with Codex conversations");
    let element = doc["bundles"].as_array().unwrap().iter().find(|e| e["kind"] == codex::KIND).unwrap();
    let gz = base64::engine::general_purpose::STANDARD.decode(element["data"].as_str().unwrap()).unwrap();
    let mut tar = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut tar).unwrap();
    let tar_text = String::from_utf8_lossy(&tar);
    assert!(
        !tar_text.contains("WALRUS-5") && !tar_text.contains(&other_id),
        "another project's session travelled"
    );
    let listing = crate::util::stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(
        listing.contains("Codex CLI conversations:") && listing.contains(&id) && listing.contains(&sub_id)
    );
    assert!(listing.contains("remember the word ZEBRA-42"), "{listing}");

    // A machine that never saw the conversations: every session file gone, the index kept.
    std::fs::remove_dir_all(home.dir().join("sessions")).unwrap();
    std::fs::remove_dir_all(&project).unwrap();
    let target = env.root.path().join("new home/re.named dir/ünïcödé 日本");
    std::fs::create_dir_all(&target).unwrap();
    // The control: before the restore, --last finds nothing here and starts afresh.
    let out = codex(&bin, &home, &target, &["resume", "--last", "is anything here?"]);
    assert_ne!(thread_id(&out), id, "{}", text(&out));
    for p in rollouts(&home) {
        std::fs::remove_file(p).unwrap();
    }

    let said = restore(&env, &home, &lok, &target, &[]);
    assert!(
        said.contains(&format!("codex resume {sub_id}")) || said.contains(&format!("codex resume {id}")),
        "{said}"
    );
    for p in rollouts(&home) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(codex::parse_name(&name).is_some(), "{name}");
        assert_eq!(lokust::fsutil::mode(&p).unwrap(), 0o600, "{}", p.display());
    }

    let real_target = std::fs::canonicalize(&target).unwrap();
    let real_target = real_target.to_str().unwrap();
    let old = std::fs::canonicalize(env.root.path().join("orig")).unwrap().join("proj");
    let (resumed, input) = resume(&bin, &api, &home, &target, &[&id], "which word?");
    assert_eq!(resumed, id);
    assert!(input.contains("ZEBRA-42") && input.contains(REPLY), "earlier turns missing: {input}");
    assert!(
        input.contains(&format!("<cwd>{real_target}</cwd>")),
        "the model is not told the new directory: {input}"
    );
    assert!(!input.contains(old.to_str().unwrap()), "the model still sees the old directory: {input}");

    let (picked, input) = resume(&bin, &api, &home, &target, &["--last"], "and now?");
    assert_eq!(picked, id, "--last did not pick the moved conversation");
    assert!(input.contains("ZEBRA-42"), "{input}");
    // The checkout has the subfolder again.
    std::fs::create_dir_all(target.join("sub")).unwrap();
    let (picked, input) = resume(&bin, &api, &home, &target.join("sub"), &["--last"], "and in sub?");
    assert_eq!(picked, sub_id, "--last in the subfolder did not pick its conversation");
    assert!(input.contains("PELICAN-3"), "{input}");
}

/// `lokust-shell move` on one machine: the real CLI resumes the conversation in the new
/// folder, tells the model the new directory, and `--last` there picks it; one rollout is
/// left, not two.
#[test]
fn a_conversation_resumes_after_lokust_shell_move() {
    let Some(bin) = codex_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), codex_home: None };
    let api = responses_api();
    home.write_config(&api);
    let base = std::fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    let id = new_conversation(&bin, &home, &a, "remember the word ZEBRA-42");
    let mut cmd = env.cmd("lokust-shell");
    home.env(&mut cmd);
    let out = cmd.arg("move").arg(&a).arg(&b).arg("--move-dir").assert().success();
    assert!(
        crate::util::stdout(&out).contains(&format!("codex resume {id}")),
        "{}",
        crate::util::stdout(&out)
    );
    assert_eq!(rollouts(&home).len(), 1, "{:?}", rollouts(&home));

    let (resumed, input) = resume(&bin, &api, &home, &b, &[&id], "which word?");
    assert_eq!(resumed, id);
    assert!(input.contains("ZEBRA-42"), "earlier turns missing: {input}");
    assert!(
        input.contains(&format!("<cwd>{}</cwd>", b.display())),
        "the model is not told the new directory: {input}"
    );
    assert!(
        !input.contains(&format!("<cwd>{}</cwd>", a.display())),
        "the model still sees the old directory"
    );
    let (picked, _) = resume(&bin, &api, &home, &b, &["--last"], "and now?");
    assert_eq!(picked, id, "--last in the new folder did not pick the moved conversation");
}

#[test]
fn a_conversation_resumes_at_a_path_with_a_dot_a_space_and_non_ascii_letters() {
    run_move(false);
}

#[test]
fn a_conversation_resumes_with_codex_home_set() {
    run_move(true);
}

/// The receiver's index has a row for the id that names a file that is gone (the
/// conversation was there once): Codex then fails with "no rollout found" although the
/// file is in `sessions/`. The restore points the row at the restored file.
#[test]
fn a_stale_index_row_is_pointed_at_the_restored_file() {
    let Some(bin) = codex_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), codex_home: None };
    let api = responses_api();
    home.write_config(&api);
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let id = new_conversation(&bin, &home, &project, "remember the word HERON-8");
    let (lok, _) = snapshot(&env, &home, &project, &[]);
    std::fs::remove_dir_all(home.dir().join("sessions")).unwrap();
    let db = home.dir().join("state_5.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed =
        conn.execute("UPDATE threads SET rollout_path = '/gone/rollout.jsonl' WHERE id = ?1", [&id]).unwrap();
    assert_eq!(changed, 1, "Codex 0.169 indexes threads in state_5.sqlite");
    drop(conn);

    let target = env.root.path().join("q");
    let plan = crate::util::stdout(
        &env.cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(&target)
            .arg("--dry-run")
            .assert()
            .success(),
    );
    assert!(plan.contains("/gone/rollout.jsonl") && plan.contains("index row of"), "{plan}");
    assert!(rollouts(&home).is_empty(), "a dry run wrote");

    // While a Codex works in this home, the index is not touched and nothing is written.
    let stand_in_codex = env.root.path().join("bin/codex");
    std::fs::create_dir_all(stand_in_codex.parent().unwrap()).unwrap();
    std::fs::copy("/bin/sleep", &stand_in_codex).unwrap();
    let mut running =
        Command::new(&stand_in_codex).arg("60").env_clear().env("HOME", &home.home).spawn().unwrap();
    let out = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().failure();
    let _ = running.kill();
    let _ = running.wait();
    let err = crate::util::stderr(&out);
    assert!(
        err.contains(&format!("Codex is running (pid {})", running.id())) && err.contains("quit Codex"),
        "{err}"
    );
    assert!(rollouts(&home).is_empty(), "written while Codex ran");

    let said = restore(&env, &home, &lok, &target, &[]);
    assert!(said.contains("state_5.sqlite: index row of"), "{said}");
    let (resumed, input) = resume(&bin, &api, &home, &target, &[&id], "which word?");
    assert_eq!(resumed, id);
    assert!(input.contains("HERON-8"), "{input}");
}

fn with_bundles(lok: &Path, bundles: serde_json::Value, name: &str) -> PathBuf {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(lok).unwrap()).unwrap();
    doc["bundles"] = bundles;
    let out = lok.with_file_name(name);
    std::fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
    out
}

fn element_of(tar: &[u8], uncompressed: u64) -> serde_json::Value {
    let data = base64::engine::general_purpose::STANDARD.encode(crate::util::archive::gzip(tar));
    serde_json::json!({"kind": codex::KIND, "format": "tar.gz+base64", "uncompressed_bytes": uncompressed,
        "base64_bytes": data.len(), "data": data, "project_dir": "/old/p"})
}

/// Elements a stranger could craft: each is refused whole, nothing lands in the Codex home,
/// and the rest of the file (here a kind this lokust does not know) still restores.
#[test]
fn hostile_codex_elements_are_refused_whole_and_nothing_is_written() {
    use crate::util::archive::{raw, raw_tar};
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), codex_home: None };
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(&env, &project);
    let (lok, _) = crate::util::claude::snapshot(&env, &project, &[]);
    let id = "01a20c41-21e5-7a13-9fc0-01834a64b0db";
    let name = format!("rollout-2026-11-24T06-32-04-{id}.jsonl");
    let meta = serde_json::json!({"timestamp": "2026-11-24T06:32:04.935Z", "type": "session_meta",
        "payload": {"id": id, "cwd": "/old/p"}});
    let good = format!("{meta}\n");
    let rel = |r: &str| r.as_bytes().to_vec();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "a path out of the sessions tree",
            raw_tar(&[raw(&rel(&format!("sessions/../../{name}")), b'0', good.as_bytes())]),
        ),
        (
            "the configuration",
            raw_tar(&[raw(b"config.toml", b'0', b"[mcp_servers.x]\ncommand = \"/bin/sh\"\n")]),
        ),
        ("credentials", raw_tar(&[raw(b"auth.json", b'0', b"{}")])),
        ("the index", raw_tar(&[raw(b"state_5.sqlite", b'0', b"SQLite format 3\0")])),
        (
            "a non-canonical name",
            raw_tar(&[raw(b"sessions/2026/11/24/rollout-x.jsonl", b'0', good.as_bytes())]),
        ),
        (
            "an absolute path",
            raw_tar(&[raw(&rel(&format!("/sessions/2026/11/24/{name}")), b'0', good.as_bytes())]),
        ),
        ("a link", raw_tar(&[raw(&rel(&format!("sessions/2026/11/24/{name}")), b'2', b"")])),
        ("a name whose id is not its content's", {
            let other = good.replace(id, "01a20c41-21e5-7a13-9fc0-000000000009");
            raw_tar(&[raw(&rel(&format!("sessions/2026/11/24/{name}")), b'0', other.as_bytes())])
        }),
        (
            "a good rollout then a bad one",
            raw_tar(&[
                raw(&rel(&format!("sessions/2026/11/24/{name}")), b'0', good.as_bytes()),
                raw(b"sessions/2026/11/24/notes.txt", b'0', b"x"),
            ]),
        ),
    ];
    for (i, (what, tar)) in cases.iter().enumerate() {
        let unknown = serde_json::json!({"kind": "some-future-agent", "format": "tar.gz+base64", "data": ""});
        let bad = with_bundles(
            &lok,
            serde_json::json!([element_of(tar, tar.len() as u64), unknown]),
            &format!("bad{i}.lok"),
        );
        let target = env.root.path().join(format!("t{i}"));
        let out = env.cmd("lokust-shell-restore").arg(&bad).arg("--to").arg(&target).assert().failure();
        let err = crate::util::stderr(&out);
        assert!(err.contains("Codex CLI conversations refused, nothing of them written"), "{what}: {err}");
        assert!(err.contains("some-future-agent"), "{what}: the unknown kind is not named: {err}");
        assert!(!home.dir().join("sessions").exists(), "{what}: the Codex home changed");
        assert!(!home.dir().join("config.toml").exists() && !home.dir().join("auth.json").exists(), "{what}");
        assert!(target.exists(), "{what}: the rest was not restored");
    }
    // A bomb: the data inflates far past what the element declares.
    let big = raw_tar(&[raw(&rel(&format!("sessions/2026/11/24/{name}")), b'0', &vec![b' '; 4 << 20])]);
    let bad = with_bundles(&lok, serde_json::json!([element_of(&big, 1024)]), "bomb.lok");
    let out = env
        .cmd("lokust-shell-restore")
        .arg(&bad)
        .arg("--to")
        .arg(env.root.path().join("tb"))
        .assert()
        .failure();
    assert!(crate::util::stderr(&out).contains("decompression bomb"), "{}", crate::util::stderr(&out));
    assert!(!home.dir().join("sessions").exists());
}

/// Published rollouts nobody here wrote (PROVENANCE.md): one captured from `codex exec`
/// 0.135 and two schema-coverage files of a parser project. Each is carried from the
/// directory it records and restored elsewhere with every line still JSON and every cwd
/// moved; the captured one is resumed by the real CLI, which must send the earlier turn
/// and pick it with `--last` there.
#[test]
fn published_rollouts_resume_after_a_move() {
    let Some(bin) = codex_bin() else { return };
    let root = crate::util::fixtures().join("real/codex");
    let api = responses_api();
    let (mut resumed, mut moved_files) = (0, 0);
    for file in crate::util::files_below(&root) {
        let data = std::fs::read(&file).unwrap();
        let rollout = codex::parse_rollout(&data).unwrap_or_else(|| panic!("{} is not read", file.display()));
        let meta: serde_json::Value =
            serde_json::from_slice(data.split(|b| *b == b'\n').next().unwrap()).unwrap();
        let old = meta["payload"]["cwd"].as_str().unwrap().to_string();
        let started = meta["payload"]["timestamp"].as_str().or(meta["timestamp"].as_str()).unwrap();
        let name = format!("rollout-{}-{}.jsonl", started[..19].replace(':', "-"), rollout.id);
        let rel = codex::rel_of(&name).unwrap_or_else(|| panic!("{name}"));

        let env = TestEnv::new();
        let home = Home { home: env.home.clone(), codex_home: None };
        home.write_config_for(&api, meta["payload"]["model_provider"].as_str().unwrap_or("openai"));
        let sender = env.root.path().join("sender");
        std::fs::create_dir_all(sender.join(Path::new(&rel).parent().unwrap())).unwrap();
        std::fs::write(sender.join(&rel), &data).unwrap();
        // Carried from the path it records, by the library, as a snapshot there would.
        let mut report = lokust::redact::Report::default();
        let (element, sessions) =
            lokust::agent::element(&codex::Codex, &sender, &old, true, &mut report).unwrap().unwrap();
        assert_eq!(sessions.len(), 1, "{}", file.display());
        let project = env.root.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        crate::util::claude::make_project(&env, &project);
        let (base, _) = crate::util::claude::snapshot(&env, &project, &["--agents", "claude"]);
        let lok = with_bundles(&base, serde_json::json!([element]), "real.lok");

        let target = env.root.path().join("elsewhere/a.b c/ü");
        let said = restore(&env, &home, &lok, &target, &[]);
        assert!(said.contains(&format!("codex resume {}", rollout.id)), "{}: {said}", file.display());
        let restored = std::fs::read(home.dir().join(&rel)).unwrap();
        for line in std::str::from_utf8(&restored).unwrap().lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{}: a line is no longer JSON ({e}): {line}", file.display()));
        }
        let moved = codex::parse_rollout(&restored).unwrap();
        let real_target = std::fs::canonicalize(&target).unwrap();
        assert!(
            // A schema-coverage file also holds a cwd trimmed to a placeholder, not a path.
            moved
                .cwds
                .iter()
                .filter(|c| c.starts_with('/'))
                .all(|c| c.starts_with(real_target.to_str().unwrap())),
            "{}: {:?}",
            file.display(),
            moved.cwds
        );

        moved_files += 1;
        // A hand-made schema-coverage file is not a session this CLI wrote: 0.169 refuses
        // one (`history_mode: default`) even where it was. Only captured ones resume.
        if file.components().any(|c| c.as_os_str() == "handmade") {
            continue;
        }
        let (id, input) = resume(&bin, &api, &home, &target, &[&rollout.id], "continue please");
        assert_eq!(id, rollout.id);
        let earlier = rollout.first_prompt.clone().unwrap_or_default();
        let probe: String = earlier.chars().take(40).collect();
        assert!(
            input.contains(&serde_json::to_string(&probe).unwrap().trim_matches('"').to_string()),
            "{}: the earlier turn was not sent: {input}",
            file.display()
        );
        let (picked, _) = resume(&bin, &api, &home, &target, &["--last"], "and again");
        assert_eq!(picked, rollout.id, "{}: --last did not pick it", file.display());
        resumed += 1;
    }
    assert!(
        moved_files >= 3 && resumed >= 1,
        "only {moved_files} published rollouts moved, {resumed} resumed"
    );
}

/// A rollout records the sandbox and approval policy it ran under; a stranger's could say
/// `danger-full-access`. Restored and resumed, the new turn runs under the receiver's own
/// policy (read-only here), never the recorded one.
#[test]
fn a_recorded_full_access_sandbox_is_not_what_a_resumed_turn_gets() {
    let Some(bin) = codex_bin() else { return };
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), codex_home: None };
    let api = responses_api();
    home.write_config(&api);
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let out = codex(&bin, &home, &project, &["-s", "danger-full-access", "remember the word ORCA-1"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = thread_id(&out);
    let sandboxes = |home: &Home| -> Vec<String> {
        let file = rollouts(home).into_iter().find(|p| p.to_string_lossy().contains(&id)).unwrap();
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|r| r["type"] == "turn_context")
            .map(|r| r["payload"]["sandbox_policy"]["type"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(sandboxes(&home), ["danger-full-access"], "the recorded grant is the premise");
    let (lok, _) = snapshot(&env, &home, &project, &[]);
    std::fs::remove_dir_all(home.dir().join("sessions")).unwrap();
    let target = env.root.path().join("q");
    restore(&env, &home, &lok, &target, &[]);
    let (resumed, input) = resume(&bin, &api, &home, &target, &[&id], "which word?");
    assert_eq!(resumed, id);
    assert!(input.contains("ORCA-1"), "{input}");
    assert_eq!(
        sandboxes(&home),
        ["danger-full-access", "read-only"],
        "the resumed turn took the recorded grant"
    );
}
