//! Whole tmux sessions: `lokust-tmux export --session` and `import` against real tmux
//! servers on private sockets, with the real Claude Code CLI in two panes of one
//! directory (interactive, against the Messages API stand-in), a Codex pane shaped like
//! its npm install (`node …/@openai/codex/bin/codex.js resume ID`: the pinned Codex CLI
//! is not driven interactively here), a shell with secrets in its scrollback, and a
//! second window with a zoomed pane in a subdirectory. Then hostile files, each a copy
//! of a real export edited as an attacker would.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::pane::{screen, wait_for, wait_screen};
use crate::util::standin::{self, StandIn};
use crate::util::{TestEnv, Tmux, git_repo, have, stderr};

const TOKEN: &str = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
const API_KEY: &str = "dummy-key-0123456789";
const CODEX_ID: &str = "019d56b2-7a2c-7d41-9f3e-0c1b2a3d4e5f";

/// The Claude Code CLI installed by `scripts/test`.
fn claude_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/claude-cli/node_modules/.bin");
    if dir.join("claude").exists() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "the Claude Code CLI is required in CI: run ./scripts/test");
    eprintln!("skipped: the Claude Code CLI is not installed (./scripts/test installs it)");
    None
}

/// A private tmux server and the environment its panes get: tmux gives a new session the
/// environment of the client that creates it, so every client runs with it.
struct Server {
    tmux: Tmux,
    vars: Vec<(String, String)>,
}

impl Server {
    fn run(&self, args: &[&str]) -> String {
        crate::util::run_ok(self.tmux.command().envs(self.vars.iter().map(|(k, v)| (k, v))).args(args))
    }
}

impl std::ops::Deref for Server {
    type Target = Tmux;
    fn deref(&self) -> &Tmux {
        &self.tmux
    }
}

/// A tmux server whose new panes run bash in the private home, with `path_dirs` first on
/// PATH and the stand-in's address for Claude Code.
fn server(env: &TestEnv, api: Option<&StandIn>, path_dirs: &[&Path]) -> Server {
    let tmux = Tmux::start("boot", &env.home, &env.home, "sh");
    let mut path: Vec<String> = path_dirs.iter().map(|d| d.display().to_string()).collect();
    path.push("/usr/local/bin:/usr/bin:/bin".into());
    let mut vars = vec![
        ("PATH".to_string(), path.join(":")),
        ("HOME".into(), env.home.display().to_string()),
        ("XDG_STATE_HOME".into(), env.home.join(".local/state").display().to_string()),
        ("TERM".into(), "xterm-256color".into()),
        ("PS1".into(), "$ ".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
        ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ("DISABLE_TELEMETRY".into(), "1".into()),
        ("DISABLE_ERROR_REPORTING".into(), "1".into()),
    ];
    if let Some(api) = api {
        vars.push(("ANTHROPIC_BASE_URL".into(), api.url()));
        vars.push(("ANTHROPIC_API_KEY".into(), API_KEY.into()));
    }
    for (k, v) in &vars {
        tmux.run(&["set-environment", "-g", k, v]);
    }
    let tmux = Server { tmux, vars };
    // bash without the machine's profile, which could reset PATH, even as a login shell.
    let shell = env.root.path().join("shell/bash");
    if !shell.exists() {
        fs::create_dir_all(shell.parent().unwrap()).unwrap();
        fs::write(&shell, "#!/bin/sh\nexec /bin/bash --norc --noprofile \"$@\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&shell, fs::Permissions::from_mode(0o755)).unwrap();
    }
    tmux.run(&["set-option", "-g", "default-shell", shell.to_str().unwrap()]);
    tmux
}

fn lokust_tmux(env: &TestEnv, tmux: &Server) -> assert_cmd::Command {
    let mut cmd = env.cmd("lokust-tmux");
    cmd.envs(tmux.vars.iter().map(|(k, v)| (k, v)));
    cmd.arg("-S").arg(&tmux.socket);
    cmd
}

/// `.claude.json` with onboarding done, the test key approved and `project` trusted, so
/// an interactive Claude Code asks nothing.
fn claude_settings(env: &TestEnv, project: &Path) {
    let real = fs::canonicalize(project).unwrap();
    let settings = serde_json::json!({
        "hasCompletedOnboarding": true, "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY], "rejected": []},
        "projects": {real.to_str().unwrap(): {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
    });
    fs::write(env.home.join(".claude.json"), settings.to_string()).unwrap();
}

fn registry(env: &TestEnv) -> Vec<Value> {
    let dir = env.home.join(".claude/sessions");
    let mut out: Vec<Value> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| serde_json::from_slice(&fs::read(e.path()).ok()?).ok())
        .collect();
    out.sort_by_key(|v| v["pid"].as_u64());
    out
}

/// Starts Claude Code in `pane`, waits for its registry entry, sends `prompt` and waits
/// for the answer; returns the conversation id the registry names for it.
fn claude_in(env: &TestEnv, tmux: &Server, pane: &str, prompt: &str, known: &[String]) -> String {
    tmux.run(&["send-keys", "-t", pane, "claude", "Enter"]);
    let id = wait_for(
        60,
        "a new Claude Code registry entry",
        || {
            registry(env)
                .iter()
                .filter_map(|v| v["sessionId"].as_str().map(str::to_string))
                .find(|id| !known.contains(id))
        },
        || screen(tmux, pane),
    );
    wait_screen(tmux, pane, "for shortcuts");
    tmux.run(&["send-keys", "-t", pane, "-l", prompt]);
    tmux.run(&["send-keys", "-t", pane, "Enter"]);
    wait_screen(tmux, pane, standin::REPLY);
    // The transcript holds the prompt once the turn is written.
    let name = format!("{id}.jsonl");
    wait_for(
        30,
        "the prompt in the transcript",
        || {
            crate::util::files_below(&env.home.join(".claude/projects"))
                .into_iter()
                .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == name))
                .filter(|p| fs::read_to_string(p).is_ok_and(|t| t.contains(prompt)))
        },
        || screen(tmux, pane),
    );
    id
}

/// A Codex conversation of `dir`, as Codex writes its rollouts.
fn codex_rollout(env: &TestEnv, dir: &Path) -> PathBuf {
    crate::util::codex_rollout(&env.home, dir, CODEX_ID)
}

/// A script laid out as Codex's npm package installs it, doing nothing for a long time.
fn codex_shaped(env: &TestEnv) -> PathBuf {
    let script = env.root.path().join("npm/lib/node_modules/@openai/codex/bin/codex.js");
    fs::create_dir_all(script.parent().unwrap()).unwrap();
    fs::write(&script, "setInterval(() => {}, 1 << 30);\n").unwrap();
    script
}

/// Each pane's geometry, in pane order: equal layouts modulo pane ids and checksum.
fn geometry(tmux: &Server, window: &str) -> String {
    tmux.run(&[
        "list-panes",
        "-t",
        window,
        "-F",
        "#{pane_index}:#{pane_left},#{pane_top},#{pane_width}x#{pane_height}",
    ])
}

fn panes(tmux: &Server, session: &str) -> Vec<(String, String, String)> {
    tmux.run(&[
        "list-panes",
        "-s",
        "-t",
        &format!("={session}"),
        "-F",
        "#{window_index}.#{pane_index}\t#{pane_current_command}\t#{pane_current_path}",
    ])
    .lines()
    .map(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        (f[0].to_string(), f[1].to_string(), f[2].to_string())
    })
    .collect()
}

fn tmux_session(lok: &Path) -> Value {
    let v: Value = serde_json::from_slice(&fs::read(lok).unwrap()).unwrap();
    v["tmux_session"].clone()
}

fn pane_of(ts: &Value, window: usize, pane: usize) -> &Value {
    &ts["windows"][window]["panes"][pane]
}

fn scrollback_text(pane: &Value) -> String {
    use base64::Engine;
    let data = pane["scrollback"]["data"].as_str().unwrap_or_default();
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data).unwrap()).unwrap()
}

#[test]
fn a_whole_session_comes_back_at_a_new_path_with_each_agent_on_its_own_conversation() {
    if !have("tmux") || !have("node") {
        return;
    }
    let Some(claude) = claude_dir() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let base = env.root.path().join("P");
    let project = base.join("app");
    git_repo(&project);
    fs::create_dir_all(project.join("sub")).unwrap();
    claude_settings(&env, &project);
    codex_rollout(&env, &project.join("sub"));
    let codex = codex_shaped(&env);

    let tmux = server(&env, Some(&api), &[&claude]);
    let dir = |p: &Path| p.to_str().unwrap().to_string();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "work",
        "-n",
        "agents",
        "-x",
        "200",
        "-y",
        "50",
        "-c",
        &dir(&project),
    ]);
    let alpha = claude_in(&env, &tmux, "work:agents.0", "remember ALPHA-PANE", &[]);
    tmux.run(&["split-window", "-h", "-t", "work:agents", "-c", &dir(&project)]);
    let bravo = claude_in(&env, &tmux, "work:agents.1", "remember BRAVO-PANE", std::slice::from_ref(&alpha));
    assert_ne!(alpha, bravo);
    tmux.run(&["new-window", "-t", "work", "-n", "more", "-c", &dir(&project.join("sub"))]);
    let codex_line = format!("node {} resume {CODEX_ID}", codex.display());
    tmux.run(&["send-keys", "-t", "work:more.0", &codex_line, "Enter"]);
    tmux.run(&["split-window", "-v", "-t", "work:more", "-c", &dir(&base)]);
    tmux.run(&["send-keys", "-t", "work:more.1", &format!("echo MARK; echo {TOKEN}"), "Enter"]);
    wait_screen(&tmux, "work:more.1", "MARK");
    wait_for(
        20,
        "the codex-shaped process",
        || {
            Some(()).filter(|()| {
                tmux.run(&["display", "-p", "-t", "work:more.0", "#{pane_current_command}"]).trim() == "node"
            })
        },
        || screen(&tmux, "work:more.0"),
    );
    tmux.run(&["resize-pane", "-Z", "-t", "work:more.0"]);
    let before = [geometry(&tmux, "work:0"), geometry(&tmux, "work:1")];

    let lok = env.root.path().join("s.lok");
    let a = lokust_tmux(&env, &tmux)
        .args(["export", "--session", "-t", "work", "--bundle", "--no-worktree", "-o"])
        .arg(&lok)
        .assert()
        .success();
    let ts = tmux_session(&lok);
    assert_eq!(ts["windows"].as_array().unwrap().len(), 2, "{ts:#}\n{}", stderr(&a));
    let agent = |w, p| pane_of(&ts, w, p)["agent"].clone();
    assert_eq!(agent(0, 0)["session_id"], alpha.as_str(), "{ts:#}");
    assert_eq!(agent(0, 1)["session_id"], bravo.as_str(), "{ts:#}");
    assert_eq!(
        (agent(0, 0)["how"].as_str(), agent(0, 1)["how"].as_str()),
        (Some("registry"), Some("registry"))
    );
    assert_eq!(
        (agent(1, 0)["id"].as_str(), agent(1, 0)["session_id"].as_str()),
        (Some("codex"), Some(CODEX_ID))
    );
    assert_eq!(agent(1, 0)["how"], "argv");
    assert_eq!(agent(1, 0)["element"]["kind"], "codex-sessions", "{ts:#}");
    assert!(pane_of(&ts, 1, 1)["agent"].is_null());
    for w in 0..2 {
        let saved = ts["windows"][w]["layout"].as_str().unwrap();
        assert_eq!(
            saved,
            tmux.run(&["display", "-p", "-t", &format!("work:{w}"), "#{window_layout}"]).trim()
        );
    }
    assert_eq!(ts["windows"][1]["zoomed"], true);
    let shell_pane = scrollback_text(pane_of(&ts, 1, 1));
    assert!(shell_pane.contains("MARK") && shell_pane.contains("[REDACTED]"), "{shell_pane}");
    assert!(!fs::read_to_string(&lok).unwrap().contains(TOKEN));

    // The receiver: the server gone, every agent store empty, a new path with a space and
    // non-ASCII letters, and the directory outside the root mapped with --map.
    tmux.run(&["kill-server"]);
    for gone in [".claude/projects", ".claude/sessions", ".codex/sessions"] {
        let _ = fs::remove_dir_all(env.home.join(gone));
    }
    let to = env.root.path().join("Q/app 2 é");
    fs::create_dir_all(to.join("sub")).unwrap();
    let elsewhere = env.root.path().join("Q/other");
    fs::create_dir_all(&elsewhere).unwrap();
    let tmux = server(&env, Some(&api), &[&claude]);
    let a = lokust_tmux(&env, &tmux)
        .arg("import")
        .arg(&lok)
        .arg("--to")
        .arg(&to)
        .arg("--map")
        .arg(format!("{}={}", fs::canonicalize(&base).unwrap().display(), elsewhere.display()))
        .assert()
        .success();
    let said = stderr(&a);
    let name = String::from_utf8_lossy(&a.get_output().stdout).trim().to_string();
    assert_eq!(name, "work");
    let got = panes(&tmux, "work");
    let at = |p: &Path| fs::canonicalize(p).unwrap().display().to_string();
    let expect = [("0.0", at(&to)), ("0.1", at(&to)), ("1.0", at(&to.join("sub"))), ("1.1", at(&elsewhere))];
    for (pane, dir) in &expect {
        let row = got.iter().find(|(p, _, _)| p == pane).unwrap_or_else(|| panic!("no pane {pane}: {got:?}"));
        assert_eq!(&row.2, dir, "{got:?}\n{said}");
        assert_eq!(row.1, "bash", "pane {pane} runs something: {got:?}");
    }
    assert_eq!([geometry(&tmux, "work:0"), geometry(&tmux, "work:1")], before);
    assert_eq!(
        tmux.run(&["display", "-p", "-t", "work:1", "#{window_zoomed_flag} #{window_name}"]).trim(),
        "1 more"
    );
    assert_eq!(tmux.run(&["display", "-p", "-t", "work:0", "#{window_name}"]).trim(), "agents");
    let last_line = |pane: &str| screen(&tmux, pane).lines().last().unwrap_or_default().to_string();
    wait_screen(&tmux, "work:0.0", &format!("claude --resume {alpha}"));
    wait_screen(&tmux, "work:0.1", &format!("claude --resume {bravo}"));
    wait_screen(&tmux, "work:1.0", &format!("codex resume {CODEX_ID}"));
    assert!(
        last_line("work:0.0").ends_with(&format!("claude --resume {alpha}")),
        "{}",
        screen(&tmux, "work:0.0")
    );
    let shell = screen(&tmux, "work:1.1");
    assert!(shell.contains("MARK") && shell.contains("[REDACTED]") && !shell.contains(TOKEN), "{shell}");
    // Nothing ran: the stand-in heard nothing since the export.
    let heard = api.bodies("/v1/messages").len();

    // Enter in the first pane resumes its own conversation, not the other pane's. The
    // restore never grants trust; the user says yes to Claude Code's folder dialog.
    let settings_path = env.home.join(".claude.json");
    let mut settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    settings["projects"][at(&to)]["hasTrustDialogAccepted"] = true.into();
    fs::write(&settings_path, settings.to_string()).unwrap();
    tmux.run(&["send-keys", "-t", "work:0.0", "Enter"]);
    wait_for(
        60,
        "the resumed Claude Code",
        || registry(&env).into_iter().find(|v| v["sessionId"] == alpha.as_str()),
        || screen(&tmux, "work:0.0"),
    );
    wait_screen(&tmux, "work:0.0", "for shortcuts");
    tmux.run(&["send-keys", "-t", "work:0.0", "-l", "which pane was this?"]);
    tmux.run(&["send-keys", "-t", "work:0.0", "Enter"]);
    let body = wait_for(
        60,
        "the resumed turn at the stand-in",
        || api.bodies("/v1/messages").into_iter().skip(heard).find(|b| b.contains("which pane was this?")),
        || screen(&tmux, "work:0.0"),
    );
    assert!(body.contains("ALPHA-PANE"), "the resumed turn lacks its own history");
    assert!(!body.contains("BRAVO-PANE"), "the resumed turn carries the other pane's conversation");
}

/// A plain session of two windows, exported: the base the hostile files are made from.
fn plain_export(env: &TestEnv, tmux: &Server, root: &Path) -> Value {
    git_repo(root);
    fs::create_dir_all(root.join("sub")).unwrap();
    let dir = root.to_str().unwrap();
    tmux.run(&["new-session", "-d", "-s", "base", "-n", "one", "-x", "120", "-y", "40", "-c", dir]);
    tmux.run(&["split-window", "-h", "-t", "base:one", "-c", dir]);
    tmux.run(&["new-window", "-t", "base", "-n", "two", "-c", root.join("sub").to_str().unwrap()]);
    let lok = env.root.path().join("base.lok");
    lokust_tmux(env, tmux).args(["export", "--session", "-t", "base", "-o"]).arg(&lok).assert().success();
    tmux.run(&["kill-session", "-t", "=base"]);
    serde_json::from_slice(&fs::read(lok).unwrap()).unwrap()
}

fn write_lok(env: &TestEnv, name: &str, v: &Value) -> PathBuf {
    let path = env.root.path().join(name);
    fs::write(&path, serde_json::to_vec(v).unwrap()).unwrap();
    path
}

fn import(env: &TestEnv, tmux: &Server, lok: &Path, to: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    lokust_tmux(env, tmux).arg("import").arg(lok).arg("--to").arg(to).args(extra).assert()
}

#[test]
fn hostile_whole_sessions_are_neutralised() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = server(&env, None, &[]);
    let root = env.root.path().join("src/app");
    let base = plain_export(&env, &tmux, &root);
    let to = env.root.path().join("dest");
    fs::create_dir_all(to.join("sub")).unwrap();
    let pwned = env.root.path().join("pwned");
    let touch = format!("$(touch {})", pwned.display());

    // A layout with a bad checksum: that window is tiled, with a warning.
    let mut v = base.clone();
    v["tmux_session"]["windows"][0]["layout"] = "ffff,120x40,0,0{60x40,0,0,0,59x40,61,0,1}".into();
    v["tmux_session"]["name"] = "layout".into();
    let a = import(&env, &tmux, &write_lok(&env, "layout.lok", &v), &to, &[]).success();
    assert!(stderr(&a).contains("tiled"), "{}", stderr(&a));
    assert_eq!(panes(&tmux, "layout").len(), 3);

    // A directory climbing out of the root: that pane starts at the root.
    let mut v = base.clone();
    v["tmux_session"]["windows"][1]["panes"][0]["cwd_rel"] = "../../../etc".into();
    v["tmux_session"]["name"] = "climb".into();
    let a = import(&env, &tmux, &write_lok(&env, "climb.lok", &v), &to, &[]).success();
    assert!(stderr(&a).contains("climbs out"), "{}", stderr(&a));
    let got = panes(&tmux, "climb");
    assert_eq!(
        got.iter().find(|p| p.0 == "1.0").unwrap().2,
        fs::canonicalize(&to).unwrap().display().to_string()
    );

    // An id that is a shell command, a title with an escape sequence, names with tmux
    // formats: nothing is typed or run, everything is shown as text.
    let mut v = base.clone();
    let pane = &mut v["tmux_session"]["windows"][0]["panes"][1];
    pane["agent"] = serde_json::json!({"id": "claude", "session_id": touch, "how": "argv"});
    pane["title"] = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}owned".into();
    pane["foreground"] = serde_json::json!({"argv0": "sh", "argv": ["sh", "-c", touch]});
    v["tmux_session"]["windows"][0]["name"] =
        format!("w#({})", format_args!("touch {}", pwned.display())).into();
    v["tmux_session"]["windows"][0]["automatic_rename"] = false.into();
    v["tmux_session"]["name"] = format!("s#(touch {})", pwned.display()).into();
    let a = import(&env, &tmux, &write_lok(&env, "inject.lok", &v), &to, &[]).success();
    let session = String::from_utf8_lossy(&a.get_output().stdout).trim().to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!pwned.exists(), "a command from the file ran");
    let title = tmux.run(&["display", "-p", "-t", &format!("={session}:0.1"), "#{pane_title}"]);
    assert!(!title.contains('\u{1b}') && title.contains("owned"), "{title:?}");
    let wname = tmux.run(&["display", "-p", "-t", &format!("={session}:0"), "#{window_name}"]);
    assert!(wname.contains("#(touch"), "the window name was not kept as text: {wname:?}");
    let shown = screen(&tmux, &format!("={session}:0.1"));
    assert!(!shown.contains("claude --resume"), "{shown}");

    // A trailing `;` ends a tmux command: names keep it, and a directory `x;` is not
    // taken for its sibling `x`, a link to /etc.
    let mut v = base.clone();
    fs::create_dir_all(to.join("x;")).unwrap();
    std::os::unix::fs::symlink("/etc", to.join("x")).unwrap();
    v["tmux_session"]["windows"][1]["panes"][0]["cwd_rel"] = "x;".into();
    v["tmux_session"]["windows"][1]["panes"][0]["scrollback"] = Value::Null;
    v["tmux_session"]["windows"][0]["name"] = "build;".into();
    v["tmux_session"]["windows"][0]["automatic_rename"] = false.into();
    v["tmux_session"]["name"] = "semi".into();
    let a = import(&env, &tmux, &write_lok(&env, "semi.lok", &v), &to, &[]).success();
    let got = panes(&tmux, "semi");
    let x = got.iter().find(|p| p.0 == "1.0").unwrap();
    assert_eq!(
        x.2,
        fs::canonicalize(to.join("x;")).unwrap().display().to_string(),
        "{got:?}\n{}",
        stderr(&a)
    );
    assert_eq!(tmux.run(&["display", "-p", "-t", "=semi:0", "#{window_name}"]).trim(), "build;");

    // A layout far past tmux's size limit: refused before tmux would allocate it (which
    // kills the server and every session in it).
    let mut v = base.clone();
    let huge = "999999999x999999999,0,0,3";
    let sum = lokust::tmux::layout::checksum(huge);
    v["tmux_session"]["windows"][1]["layout"] = format!("{sum:04x},{huge}").into();
    v["tmux_session"]["name"] = "huge".into();
    let a = import(&env, &tmux, &write_lok(&env, "huge.lok", &v), &to, &[]).success();
    assert!(stderr(&a).contains("limit"), "{}", stderr(&a));
    assert!(tmux.run(&["list-sessions", "-F", "#{session_name}"]).contains("boot"));

    // Too many panes: the session part is refused whole, the active pane comes back.
    let mut v = base.clone();
    let one = v["tmux_session"]["windows"][0]["panes"][0].clone();
    v["tmux_session"]["windows"][0]["panes"] = Value::Array(vec![one; 150]);
    v["tmux_session"]["name"] = "many".into();
    let a = import(&env, &tmux, &write_lok(&env, "many.lok", &v), &to, &[]).success();
    assert!(stderr(&a).contains("only the active pane"), "{}", stderr(&a));
    let session = String::from_utf8_lossy(&a.get_output().stdout).trim().to_string();
    assert_eq!(panes(&tmux, &session).len(), 1);

    // A server numbering windows from 1: the saved active window is still the active one.
    tmux.run(&["set-option", "-g", "base-index", "1"]);
    let mut v = base.clone();
    v["tmux_session"]["name"] = "based".into();
    import(&env, &tmux, &write_lok(&env, "based.lok", &v), &to, &[]).success();
    let active = tmux.run(&["display", "-p", "-t", "=based:", "#{window_name}"]);
    assert_eq!(active.trim(), "two", "the wrong window is active");

    // --resume-agents on a file sealed to nobody: refused, nothing created.
    let sessions_before = tmux.run(&["list-sessions", "-F", "#{session_name}"]);
    let a = import(&env, &tmux, &write_lok(&env, "plain.lok", &base), &to, &["--resume-agents"]).failure();
    assert_eq!(a.get_output().status.code(), Some(2));
    assert!(stderr(&a).contains("sealed to one of your"), "{}", stderr(&a));
    assert_eq!(tmux.run(&["list-sessions", "-F", "#{session_name}"]), sessions_before);
}

/// A one-pane file whose session name holds a tmux format: before, import ran it.
#[test]
fn a_format_in_a_saved_session_name_is_not_run() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = server(&env, None, &[]);
    let pwned = env.root.path().join("pwned");
    let mut v = plain_export(&env, &tmux, &env.root.path().join("src/app"));
    v.as_object_mut().unwrap().remove("tmux_session");
    v["shell"]["multiplexer"]["session"] = format!("x#(touch {})", pwned.display()).into();
    let lok = write_lok(&env, "one.lok", &v);
    lokust_tmux(&env, &tmux).arg("import").arg(&lok).assert().success();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!pwned.exists(), "the session name's #(…) ran");
}

/// A registry entry is trusted only for the live process that wrote it: one whose start
/// time does not match (a reused pid, or a `kill -9`'d Claude's leftover) names nothing.
#[test]
fn a_registry_entry_of_another_process_is_not_used() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let bin = env.root.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    // A program named claude that sleeps: recognised by its name, as the real one is.
    fs::copy("/bin/sleep", bin.join("claude")).unwrap();
    let tmux = server(&env, None, &[&bin]);
    let root = env.root.path().join("app");
    git_repo(&root);
    let dir = fs::canonicalize(&root).unwrap();
    tmux.run(&["new-session", "-d", "-s", "reg", "-c", dir.to_str().unwrap()]);
    tmux.run(&["send-keys", "-t", "reg", "claude 600", "Enter"]);
    let pid: u32 = wait_for(
        20,
        "the claude-named process",
        || {
            let pane_pid = tmux.run(&["display", "-p", "-t", "reg", "#{pane_pid}"]);
            let out =
                std::process::Command::new("pgrep").args(["-P", pane_pid.trim(), "claude"]).output().ok()?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        },
        || screen(&tmux, "reg"),
    );
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let start: u64 = stat.rsplit(')').next().unwrap().split_whitespace().nth(19).unwrap().parse().unwrap();
    let sessions = env.home.join(".claude/sessions");
    fs::create_dir_all(&sessions).unwrap();
    let id = "384e7524-0f5b-4c53-9d0e-2a3c4b5d6e7f";
    let export = |procstart: u64| {
        let entry =
            serde_json::json!({"pid": pid, "sessionId": id, "cwd": dir, "procStart": procstart.to_string()});
        fs::write(sessions.join(format!("{pid}.json")), entry.to_string()).unwrap();
        let lok = env.root.path().join("reg.lok");
        lokust_tmux(&env, &tmux)
            .args(["export", "--session", "-t", "reg", "-o"])
            .arg(&lok)
            .assert()
            .success();
        pane_of(&tmux_session(&lok), 0, 0)["agent"].clone()
    };
    let live = export(start);
    assert_eq!((live["session_id"].as_str(), live["how"].as_str()), (Some(id), Some("registry")), "{live}");
    let stale = export(start + 1);
    assert_eq!(stale["id"], "claude");
    assert!(stale["session_id"].is_null(), "a stale entry was trusted: {stale}");
}

/// `--all-sessions`: one file per session of the server, each with its own windows.
#[test]
fn every_session_of_the_server_is_saved_in_a_file_of_its_own() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = server(&env, None, &[]);
    let dir = env.cwd.to_str().unwrap();
    tmux.run(&["new-session", "-d", "-s", "alpha", "-n", "a1", "-c", dir]);
    tmux.run(&["new-window", "-t", "alpha", "-n", "a2", "-c", dir]);
    tmux.run(&["new-session", "-d", "-s", "beta", "-n", "b1", "-c", dir]);
    lokust_tmux(&env, &tmux).args(["export", "--all-sessions", "--quiet"]).assert().success();
    let exports = env.home.join(".local/state/lokust/exports");
    let mut names: Vec<(String, Vec<String>)> = fs::read_dir(&exports)
        .unwrap()
        .flatten()
        .map(|e| {
            let ts = tmux_session(&e.path());
            let windows = ts["windows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["name"].as_str().unwrap().to_string())
                .collect();
            (ts["name"].as_str().unwrap().to_string(), windows)
        })
        .collect();
    names.sort();
    let want: Vec<(String, Vec<String>)> = vec![
        ("alpha".into(), vec!["a1".into(), "a2".into()]),
        ("beta".into(), vec!["b1".into()]),
        ("boot".into(), names.iter().find(|n| n.0 == "boot").map(|n| n.1.clone()).unwrap_or_default()),
    ];
    assert_eq!(names, want);
}
