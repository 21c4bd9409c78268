//! lokust-tmux against a real tmux server on a private socket: the key binding pressed
//! by a real client, the export with its redacted scrollback, and import bringing the
//! pane back as a session whose scrollback is read back with capture-pane.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;

use crate::util::pane::{bin, screen, wait_for, wait_screen};
use crate::util::schema::assert_valid;
use crate::util::{TestEnv, Tmux, have, json};

/// A real tmux client on a pseudo-terminal (util-linux `script`), so key tables apply:
/// tmux 3.3 has no `send-keys -K`. Killed on drop; its stdin stays open until then
/// (at end of input `script` would send the pane an EOF).
struct Client {
    child: Child,
}

impl Client {
    fn attach(tmux: &Tmux, session: &str) -> Client {
        let attach = format!("tmux -S '{}' attach -t '={session}'", tmux.socket.display());
        let child = StdCommand::new("script")
            .args(["-qfec", &attach, "/dev/null"])
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("script");
        wait_for(
            20,
            "a client to attach",
            || Some(()).filter(|_| !tmux.run(&["list-clients"]).trim().is_empty()),
            || tmux.run(&["list-clients"]),
        );
        Client { child }
    }

    fn type_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn token() -> String {
    "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9".to_string()
}

/// A server with session "work" running sh in `env.cwd`, with the test's state dir in
/// its global environment (which the key binding's job inherits), and a secret echoed
/// into the scrollback.
fn server(env: &TestEnv) -> Tmux {
    let tmux = Tmux::start("work", &env.cwd, &env.home, "PS1='$ ' exec sh");
    let state = env.home.join(".local/state");
    tmux.run(&["set-environment", "-g", "XDG_STATE_HOME", state.to_str().unwrap()]);
    // Typed before the first prompt, the command would be echoed above it.
    wait_screen(&tmux, "=work:", "$");
    tmux.run(&["send-keys", "-t", "=work:", &format!("echo deploy {} done", token()), "Enter"]);
    wait_screen(&tmux, "=work:", "done\n$");
    tmux
}

fn exports(env: &TestEnv) -> Vec<PathBuf> {
    let dir = env.home.join(".local/state/lokust/exports");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| {
            d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "lok")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn scrollback(lok: &Value) -> String {
    let sb = &lok["shell"]["tmux_scrollback"];
    assert_eq!(sb["format"], "text+base64");
    let bytes = base64::engine::general_purpose::STANDARD.decode(sb["data"].as_str().unwrap()).unwrap();
    assert_eq!(sb["bytes"].as_u64().unwrap() as usize, bytes.len());
    String::from_utf8(bytes).unwrap()
}

fn read_lok(path: &Path) -> Value {
    let lok = json(&fs::read(path).unwrap());
    assert_valid(&lok, &path.display().to_string());
    lok
}

#[test]
fn the_key_binding_exports_the_pane_and_import_brings_it_back() {
    if !have("tmux") || !have("script") {
        return;
    }
    let env = TestEnv::new();
    let tmux = server(&env);
    // Loaded the way a user would: the plugin file, told where the binary is.
    tmux.run(&["set-option", "-g", "@lokust-bin", bin("lokust-tmux").to_str().unwrap()]);
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("shell-hooks/lokust.tmux");
    tmux.run(&["source-file", plugin.to_str().unwrap()]);
    wait_for(
        20,
        "the key to be bound",
        || Some(()).filter(|_| tmux.run(&["list-keys", "-T", "prefix"]).contains("lokust-tmux' export")),
        || tmux.run(&["list-keys", "-T", "prefix"]),
    );

    let mut client = Client::attach(&tmux, "work");
    // Keys typed while the new client still sets up its terminal can be discarded with the
    // pending input (seen under a loaded machine): typed again every 3 s until the export
    // shows; the newest file is the one read.
    let mut typed = Instant::now() - Duration::from_secs(3);
    let path = wait_for(
        30,
        "the export",
        || {
            if typed.elapsed() >= Duration::from_secs(3) {
                client.type_bytes(b"\x02\x05"); // prefix (C-b), then C-e
                typed = Instant::now();
            }
            exports(&env).pop()
        },
        || tmux.run(&["show-messages"]),
    );
    // The file is complete when it appears: it is renamed into place.
    let lok = read_lok(&path);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("work-0.0-2") && name.ends_with("Z.lok"), "{name}");
    assert_eq!(lokust::fsutil::mode(&path).unwrap(), 0o600);
    assert_eq!(lokust::fsutil::mode(path.parent().unwrap()).unwrap(), 0o700);
    assert_eq!(lok["captured_via"], "lokust-tmux");
    assert_eq!(lok["shell"]["cwd"], env.cwd.to_str().unwrap());
    assert_eq!(lok["shell"]["shell"], "sh");
    let m = &lok["shell"]["multiplexer"];
    assert_eq!((m["kind"].as_str(), m["session"].as_str()), (Some("tmux"), Some("work")));
    assert!(m["socket"].as_str().unwrap().starts_with(tmux.socket.to_str().unwrap()), "{m}");
    let text = scrollback(&lok);
    assert!(text.contains("$ echo deploy [REDACTED] done\ndeploy [REDACTED] done\n"), "{text}");
    assert!(!fs::read_to_string(&path).unwrap().contains(&token()));
    // The client was told where the file went.
    let shown = wait_for(
        20,
        "the status message",
        || {
            Some(tmux.run(&["show-messages"]))
                .filter(|m| m.contains("lokust: pane saved to ~/.local/state/lokust/exports/"))
        },
        || tmux.run(&["show-messages"]),
    );
    assert!(shown.contains("2 secrets redacted"), "{shown}");
    drop(client);

    // Import: the name "work" is taken, so the new session is work-2, in the saved
    // directory, showing the saved scrollback before its prompt.
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", tmux.socket.to_str().unwrap(), "import"])
        .arg(&path)
        .env("SHELL", "/bin/sh")
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), "work-2\n");
    let shown = wait_screen(&tmux, "=work-2:", "[lokust: restored scrollback of ");
    assert!(shown.contains("$ echo deploy [REDACTED] done\ndeploy [REDACTED] done\n"), "{shown}");
    assert_eq!(
        tmux.run(&["display-message", "-p", "-t", "=work-2:", "#{pane_current_path}"]).trim(),
        env.cwd.to_str().unwrap()
    );
    assert_eq!(screen(&tmux, "=work:").matches("deploy").count(), 2, "the old session is untouched");
    // The replayed text was a private temp file, deleted once shown.
    let imports = env.home.join(".local/state/lokust/imports");
    wait_for(
        20,
        "the replay file to go",
        || Some(()).filter(|_| fs::read_dir(&imports).unwrap().count() == 0),
        || format!("{:?}", fs::read_dir(&imports).unwrap().collect::<Vec<_>>()),
    );

    // --to and --session: a new directory, a name tmux would misread made safe.
    let to = env.root.path().join("elsewhere/here");
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", tmux.socket.to_str().unwrap(), "import", "--session", "a.b:c", "--to"])
        .arg(&to)
        .arg(&path)
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), "a_b_c\n");
    wait_screen(&tmux, "=a_b_c:", "deploy [REDACTED] done");
    assert_eq!(
        tmux.run(&["display-message", "-p", "-t", "=a_b_c:", "#{pane_current_path}"]).trim(),
        to.to_str().unwrap()
    );
}

#[test]
fn export_from_the_command_line_and_snapshot_tmux_session() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = server(&env);
    let sock = tmux.socket.to_str().unwrap().to_string();
    let out_file = env.root.path().join("pane.lok");
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", &sock, "export", "-t", "work:0.0", "-o"])
        .arg(&out_file)
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout).trim(), out_file.to_str().unwrap());
    let lok = read_lok(&out_file);
    assert!(scrollback(&lok).contains("deploy [REDACTED] done"));

    // Inside tmux ($TMUX, $TMUX_PANE) no flag is needed; -o - writes standard output.
    let pane = tmux.run(&["display-message", "-p", "-t", "=work:", "#{pane_id}"]);
    let out = env
        .cmd("lokust-tmux")
        .args(["export", "-q", "-o", "-"])
        .env("TMUX", tmux.tmux_var())
        .env("TMUX_PANE", pane.trim())
        .assert()
        .success();
    let lok = json(&out.get_output().stdout);
    assert_valid(&lok, "export to stdout");
    assert!(out.get_output().stderr.is_empty());
    assert!(scrollback(&lok).contains("deploy [REDACTED] done"));

    // lokust-shell-snapshot --tmux SESSION does the same for the session's active pane.
    let elsewhere = env.root.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&elsewhere)
        .args(["--tmux", "work", "-q"])
        .env("TMUX", tmux.tmux_var())
        .assert()
        .success();
    let lok = json(&out.get_output().stdout);
    assert_valid(&lok, "snapshot --tmux");
    assert_eq!(lok["shell"]["cwd"], env.cwd.to_str().unwrap());
    assert_eq!(lok["shell"]["multiplexer"]["session"], "work");
    assert!(scrollback(&lok).contains("deploy [REDACTED] done"));

    // A pane that does not exist fails by name, and says so on the status line too.
    let out = env.cmd("lokust-tmux").args(["-S", &sock, "export", "-t", "%999"]).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.starts_with("lokust: ") && err.contains("no pane \"%999\""), "{err}");
    assert!(exports(&env).is_empty());
    assert!(exports(&env).is_empty(), "a failed export leaves no file");
    // --bundle where Claude Code has no project: the export is made, without a bundle.
    let out =
        env.cmd("lokust-tmux").args(["-S", &sock, "export", "--bundle", "-t", "work:0.0"]).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("lokust: warning: --bundle: Claude Code has no project for"), "{err}");
    let saved = json(&std::fs::read(exports(&env).pop().unwrap()).unwrap());
    assert!(saved.get("bundle").is_none());
}

/// `export --bundle` carries the pane's Claude Code project and the directory's Gemini CLI
/// conversations; `import --to` elsewhere restores both and starts the session there, as
/// lokust-shell-restore would.
#[test]
fn a_bundled_export_is_restored_by_import() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let project = env.root.path().join("proj");
    crate::util::claude::make_project(&env, &project);
    crate::util::gemini::make_chat(&env.home.join(".gemini"), &project, "9e11-ab", "the tmux prompt");
    let tmux = Tmux::start("work", &project, &env.home, "sh");
    let sock = tmux.socket.to_str().unwrap().to_string();
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", &sock, "export", "--bundle", "-t", "work:0.0", "-o", "b.lok"])
        .assert()
        .success();
    assert!(
        out.get_output().stderr.is_empty()
            || !String::from_utf8_lossy(&out.get_output().stderr).contains("warning")
    );
    let saved = json(&std::fs::read(env.cwd.join("b.lok")).unwrap());
    assert_valid(&saved, "export --bundle");
    assert_eq!(saved["bundle"]["kind"], "claude-code-project");
    assert_eq!(saved["bundles"][0]["kind"], "gemini-project");
    std::fs::remove_dir_all(env.home.join(".gemini")).unwrap();
    let (_, gh) = crate::util::claude::secrets();
    assert!(!std::fs::read_to_string(env.cwd.join("b.lok")).unwrap().contains(&gh));

    let target = env.root.path().join("moved.d/my dir");
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", &sock, "import", "--session", "back", "--to"])
        .arg(&target)
        .arg("b.lok")
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout).trim(), "back");
    // Issue 10, item 14: the attach hint names the server the session is on.
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let hint = format!(
        "attach with: tmux -S {} attach -t =back",
        lokust::shell::posix_quote(&sock, lokust::shell::Quote::WhenNeeded)
    );
    assert!(err.contains(&hint), "{err}");
    // The sender's project settings that can run commands are not installed.
    assert!(err.contains("left out of the .claude.json project entry"), "{err}");
    wait_screen(&tmux, "=back:", "[lokust: restored scrollback of ");
    let real = std::fs::canonicalize(&target).unwrap();
    let cwd = tmux.run(&["display-message", "-p", "-t", "=back:", "#{pane_current_path}"]);
    assert_eq!(cwd.trim(), real.to_str().unwrap());
    let slot = lokust::capture::claude::slot_name(real.to_str().unwrap());
    let restored =
        env.home.join(".claude/projects").join(slot).join(format!("{}.jsonl", crate::util::claude::SESSION));
    let text = std::fs::read_to_string(&restored).unwrap();
    assert!(text.contains(&format!("\"cwd\":\"{}\"", real.display())), "cwd not rewritten: {text}");
    // The Gemini conversation is back, registered for the new path.
    assert!(err.contains("gemini --resume 9e11-ab"), "{err}");
    let registry = std::fs::read_to_string(env.home.join(".gemini/projects.json")).unwrap();
    assert!(registry.contains(&serde_json::to_string(real.to_str().unwrap()).unwrap()), "{registry}");
}

#[test]
fn import_refuses_what_it_cannot_restore() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = Tmux::start("work", &env.cwd, &env.home, "sh");
    let sock = tmux.socket.to_str().unwrap().to_string();
    let fixtures = crate::util::fixtures().join("lok");
    let cases = [
        ("coordination.lok", "is a coordination session"),
        (
            "shell-newer-fields.lok",
            "bundle.kind is \"editor-state\"; this lokust restores \"claude-code-project\"",
        ),
        ("truncated.lok", "is not valid JSON"),
    ];
    for (name, message) in cases {
        let out =
            env.cmd("lokust-tmux").args(["-S", &sock, "import"]).arg(fixtures.join(name)).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.starts_with("lokust: ") && err.contains(message), "{name}: {err}");
    }
    assert_eq!(tmux.run(&["list-sessions", "-F", "#{session_name}"]), "work\n", "no session was created");

    // A file without scrollback, saved somewhere that does not exist here: the session
    // starts in HOME with a warning.
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", &sock, "import", "--session", "plain"])
        .arg(fixtures.join("shell.lok"))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("lokust: warning: the saved directory"), "{err}");
    // tmux knows a pane's directory once its process runs.
    let path =
        || tmux.run(&["display-message", "-p", "-t", "=plain:", "#{pane_current_path}"]).trim().to_string();
    let cwd = wait_for(20, "the pane's directory", || Some(path()).filter(|p| !p.is_empty()), path);
    assert_eq!(cwd, env.home.to_str().unwrap());
}

#[test]
fn bind_prints_the_lines_and_applies_them() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let out = env.cmd("lokust-tmux").arg("bind").assert().success();
    let lines = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let exe = bin("lokust-tmux");
    assert!(
        lines.contains(&format!(
            "bind-key \"C-e\" run-shell -b \"'{}' export --quiet -t '#{{pane_id}}'\"",
            exe.display()
        )),
        "{lines}"
    );
    // The printed lines are valid tmux configuration, and C-e is free in tmux's defaults.
    let tmux = Tmux::start("work", &env.cwd, &env.home, "sh");
    assert!(!tmux.run(&["list-keys", "-T", "prefix"]).contains(" C-e "));
    let conf = env.write("lokust.conf", &lines);
    tmux.run(&["source-file", conf.to_str().unwrap()]);
    assert!(tmux.run(&["list-keys", "-T", "prefix", "C-e"]).contains("export --quiet"));
    assert!(tmux.run(&["list-keys", "-T", "prefix", "M-e"]).contains("export --session --quiet"));

    // --apply binds in the running server; the keys come from @lokust-export-key and
    // @lokust-session-key.
    let sock = tmux.socket.to_str().unwrap().to_string();
    tmux.run(&["set-option", "-g", "@lokust-export-key", "F8"]);
    tmux.run(&["set-option", "-g", "@lokust-session-key", "F7"]);
    env.cmd("lokust-tmux").args(["-S", &sock, "bind", "--apply"]).assert().success().stdout("");
    assert!(tmux.run(&["list-keys", "-T", "prefix", "F8"]).contains("export --quiet"));
    assert!(tmux.run(&["list-keys", "-T", "prefix", "F7"]).contains("export --session --quiet"));
    env.cmd("lokust-tmux").args(["-S", &sock, "bind", "--apply", "--key", "F9"]).assert().success();
    assert!(tmux.run(&["list-keys", "-T", "prefix", "F9"]).contains("export --quiet"));

    // The plugin file runs as a script too (TPM executes it): it hands itself to tmux.
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("shell-hooks/lokust.tmux");
    tmux.run(&["set-option", "-g", "@lokust-export-key", "M-x"]);
    tmux.run(&["set-option", "-g", "@lokust-bin", exe.to_str().unwrap()]);
    let status = StdCommand::new(&plugin).env("TMUX", tmux.tmux_var()).status().unwrap();
    assert!(status.success());
    wait_for(
        20,
        "the plugin's binding",
        || Some(()).filter(|_| tmux.run(&["list-keys", "-T", "prefix"]).contains("M-x")),
        || tmux.run(&["list-keys", "-T", "prefix"]),
    );
}

/// Issue 9: one tmux client, always with `-u`. Without a UTF-8 locale and outside tmux
/// (tmux assumes UTF-8 when `$TMUX` is set) tmux 3.3 prints the tab between the fields
/// lokust asks for, and every non-ASCII letter, as `_`; the snapshot's own query went
/// without `-u` and read the session wrong.
#[test]
fn the_session_is_read_right_without_a_utf8_locale() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    // The default server, in a private TMUX_TMPDIR.
    let tmpdir = env.root.path().join("tmux-tmp");
    fs::create_dir_all(&tmpdir).unwrap();
    let uid = String::from_utf8(StdCommand::new("id").arg("-u").output().unwrap().stdout).unwrap();
    let socket = tmpdir.join(format!("tmux-{}", uid.trim())).join("default");
    let start = StdCommand::new("tmux")
        .env("TMUX_TMPDIR", &tmpdir)
        .env("LANG", "C.UTF-8")
        .args(["-f", "/dev/null", "new-session", "-d", "-s", "wörk", "sh"])
        .status()
        .unwrap();
    assert!(start.success());
    let out = env
        .cmd("lokust-shell-snapshot")
        .env_remove("LANG")
        .env("TMUX_TMPDIR", &tmpdir)
        .args(["--tmux", "wörk", "-q", "-o", "-"])
        .assert()
        .success();
    let _ = StdCommand::new("tmux").arg("-S").arg(&socket).arg("kill-server").status();
    let lok = json(&out.get_output().stdout);
    assert_eq!(lok["shell"]["multiplexer"]["session"], "wörk", "{:#}", lok["shell"]["multiplexer"]);
    assert_eq!(lok["shell"]["multiplexer"]["socket"], socket.to_str().unwrap());
}

/// The pane closing (SIGHUP) while a bundle is written stops the export between chunks
/// and leaves no half-written file: the snapshot pipeline's write gives every caller
/// the signal handling `lokust-shell-snapshot --bundle` has.
#[test]
fn a_hangup_during_a_bundled_export_leaves_no_file() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let project = env.root.path().join("proj");
    let slot = crate::util::claude::make_project(&env, &project);
    let line = format!(
        "{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}\n",
        "lorem ipsum dolor ".repeat(12)
    );
    for i in 0..60 {
        fs::write(slot.join(format!("{i:08}-0000-4000-8000-000000000000.jsonl")), line.repeat(2000)).unwrap();
    }
    let tmux = Tmux::start("work", &project, &env.home, "sh");
    let out_dir = env.root.path().join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let mut child = env
        .process("lokust-tmux")
        .arg("-S")
        .arg(&tmux.socket)
        .args(["export", "--bundle", "-t", "work:0.0", "-o"])
        .arg(out_dir.join("e.lok"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while fs::read_dir(&out_dir).unwrap().count() == 0 && Instant::now() < deadline {
        assert!(child.try_wait().unwrap().is_none(), "the export finished before it could be stopped");
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_dir(&out_dir).unwrap().count(), 0, "a temp file was left behind");
}
