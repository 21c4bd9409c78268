//! lokust-shell-snapshot against a temp HOME: real history files (from fixtures and
//! written by the real zsh and bash), real git repositories, a Claude Code projects
//! tree, and a real tmux server on a private socket.

use std::fs;
use std::process::Command as StdCommand;

use serde_json::Value;

use crate::util::schema::assert_valid;
use crate::util::{TestEnv, Tmux, fixtures, git, git_repo, have, json, run_ok};

/// Runs a snapshot to stdout and returns the parsed .lok, after checking it against the
/// schema and that the summary went to stderr.
fn snapshot(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.assert().success();
    let lok = json(&out.get_output().stdout);
    assert_valid(&lok, "snapshot output");
    lok
}

fn stderr(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

#[test]
fn every_section_of_a_plain_snapshot() {
    let env = TestEnv::new();
    let lok = snapshot(
        env.cmd("lokust-shell-snapshot")
            .env("TERM", "xterm-256color")
            .env("TERM_PROGRAM", "ghostty")
            .env("TERM_PROGRAM_VERSION", "1.3.1")
            .env("LC_TIME", "C")
            .env("XDG_SESSION_TYPE", "tty")
            .env("EDITOR", "vim")
            .env("PATH_EXTRA", "/opt")
            .env("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
            .env("XDG_AUTH_TOKEN", "abc"),
    );
    assert_eq!(lok["format_version"], 1);
    assert_eq!(lok["session"]["kind"], "shell");
    assert_eq!(lok["session"]["status"], "snapshot");
    let id = lok["session"]["id"].as_str().unwrap();
    assert!(
        id.starts_with("shell-") && uuid::Uuid::parse_str(&id[6..]).is_ok_and(|u| u.get_version_num() == 4),
        "{id}"
    );
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let at = lok["session"]["created_at_ms"].as_u64().unwrap();
    assert!(now - at < 60_000, "created_at_ms {at} is not now");
    let shell = &lok["shell"];
    assert_eq!(shell["cwd"], env.cwd.to_str().unwrap());
    assert_eq!(shell["shell"], "bash");
    assert_eq!(shell["user"], whoami::username().unwrap());
    assert_eq!(shell["hostname"], hostname::get().unwrap().to_str().unwrap());
    assert_eq!(lok["created_by"], "tester");
    assert_eq!(lok["captured_via"], "lokust-shell-snapshot");
    let keys: Vec<&str> = shell["env"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "EDITOR",
            "HOME",
            "LANG",
            "LC_TIME",
            "SHELL",
            "TERM",
            "TERM_PROGRAM",
            "TERM_PROGRAM_VERSION",
            "USER",
            "XDG_SESSION_TYPE",
            "XDG_STATE_HOME"
        ]
    );
    // PATH and PATH_EXTRA (not allowed) and both secrets (by name) are dropped.
    assert_eq!(shell["env_dropped_count"], 4);
    assert_eq!(
        shell["terminal"],
        serde_json::json!({"program": "ghostty", "version": "1.3.1", "term": "xterm-256color"})
    );
    assert_eq!(shell["multiplexer"], Value::Null);
    assert_eq!(shell["git"], Value::Null);
    assert_eq!(shell["claude_code"], Value::Null);
    assert_eq!(shell["history_tail"], serde_json::json!([]));
}

#[test]
fn summary_goes_to_stderr_and_quiet_silences_it() {
    let env = TestEnv::new();
    let out = env.cmd("lokust-shell-snapshot").assert().success();
    let text = stderr(&out);
    assert!(text.starts_with("Captured: standard output ("), "{text}");
    assert!(text.contains(&format!("  cwd:         {}", env.cwd.display())), "{text}");
    let out = env.cmd("lokust-shell-snapshot").arg("-q").assert().success();
    assert_eq!(stderr(&out), "");
    assert!(!out.get_output().stdout.is_empty());
}

#[test]
fn files_are_written_atomically_with_mode_0600_and_read_by_python_and_jq() {
    let env = TestEnv::new();
    for args in [vec!["-o", "a.lok"], vec!["b.lok"], vec!["--output=c.lok"]] {
        let out = env.cmd("lokust-shell-snapshot").args(&args).assert().success();
        assert!(out.get_output().stdout.is_empty());
        let name = args.last().unwrap().trim_start_matches("--output=");
        let path = env.cwd.join(name);
        assert_eq!(lokust::fsutil::mode(&path).unwrap(), 0o600, "{name}");
        assert!(stderr(&out).starts_with(&format!("Captured: {name} (")), "{}", stderr(&out));
        let doc = json(&fs::read(&path).unwrap());
        assert_valid(&doc, name);
        let py = run_ok(
            StdCommand::new("python3")
                .args(["-c", "import json,sys; print(json.load(open(sys.argv[1]))['session']['kind'])"])
                .arg(&path),
        );
        assert_eq!(py.trim(), "shell");
        if have("jq") {
            let jq = run_ok(StdCommand::new("jq").args(["-r", ".shell.cwd"]).arg(&path));
            assert_eq!(jq.trim(), env.cwd.to_str().unwrap());
        }
    }
    // No temp file is left beside them.
    let names: Vec<String> = fs::read_dir(&env.cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // A missing directory is a clear error and writes nothing.
    let out = env.cmd("lokust-shell-snapshot").args(["-o", "nowhere/s.lok"]).assert().code(2);
    assert!(
        stderr(&out).contains("cannot write nowhere/s.lok: the directory nowhere does not exist"),
        "{}",
        stderr(&out)
    );
    // Both forms at once are refused by clap.
    env.cmd("lokust-shell-snapshot").args(["-o", "x.lok", "y.lok"]).assert().code(2);
}

#[test]
fn umbrella_and_standalone_are_the_same_command() {
    let env = TestEnv::new();
    let a = snapshot(env.cmd("lokust-shell").arg("snapshot"));
    let b = snapshot(&mut env.cmd("lokust-shell-snapshot"));
    let strip = |mut v: Value| {
        v["session"]["id"] = Value::Null;
        v["session"]["created_at_ms"] = Value::Null;
        v
    };
    assert_eq!(strip(a), strip(b));
}

#[test]
fn zsh_history_with_every_quirk() {
    let env = TestEnv::new();
    let lok = snapshot(
        env.cmd("lokust-shell-snapshot")
            .env("SHELL", "/usr/bin/zsh")
            .env("HISTFILE", fixtures().join("history/zsh_history")),
    );
    let tail = &lok["shell"]["history_tail"];
    let tok = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
    assert_eq!(tail[0], "git status");
    assert_eq!(tail[1], "for f in *.rs; do\n  wc -l $f\ndone");
    assert_eq!(tail[2], "echo café ☕");
    assert_eq!(tail[3], "cat \u{fffd}\u{fffd} bytes");
    assert!(
        tail[4].as_str().unwrap().starts_with("export GITHUB_TOKEN=")
            && !tail[4].as_str().unwrap().contains(tok),
        "{}",
        tail[4]
    );
    assert!(tail[4].as_str().unwrap().contains("[REDACTED]"));
    assert_eq!(tail[5], "cd ~/src/lokust");
    assert_eq!(tail.as_array().unwrap().len(), 6);
    assert_eq!(lok["shell"]["history_redacted_lines"], 1);
    assert_eq!(lok["shell"]["shell"], "zsh");
}

#[test]
fn zsh_default_file_under_zdotdir_and_home() {
    let env = TestEnv::new();
    fs::copy(fixtures().join("history/zsh_history"), env.home.join(".zsh_history")).unwrap();
    let lok = snapshot(env.cmd("lokust-shell-snapshot").env("SHELL", "/bin/zsh"));
    assert_eq!(lok["shell"]["history_tail"][0], "git status");
    let zdot = env.root.path().join("zdot");
    fs::create_dir_all(&zdot).unwrap();
    fs::write(zdot.join(".zsh_history"), ": 1:0;from zdotdir\n").unwrap();
    let lok = snapshot(env.cmd("lokust-shell-snapshot").env("SHELL", "/bin/zsh").env("ZDOTDIR", &zdot));
    assert_eq!(lok["shell"]["history_tail"], serde_json::json!(["from zdotdir"]));
}

#[test]
fn history_written_by_the_real_zsh() {
    if !have("zsh") {
        return;
    }
    let env = TestEnv::new();
    let file = env.root.path().join("zhist");
    // zsh only keeps history when interactive; -f skips any rc file.
    let script = format!(
        "HISTFILE={}; HISTSIZE=50; SAVEHIST=50; setopt EXTENDED_HISTORY; print -s 'ls -la'; \
         print -s $'for i in 1 2; do\\necho $i\\ndone'; print -s 'echo naïve café ☕ 日本'; \
         print -s 'mysql -u root -pS3cretPassw0rd db'; fc -W",
        file.display()
    );
    run_ok(StdCommand::new("zsh").args(["-f", "-i", "-c", &script]).stdin(std::process::Stdio::null()));
    let raw = fs::read(&file).unwrap();
    assert!(raw.windows(2).any(|w| w[0] == 0x83), "zsh did not metafy anything: {raw:?}");
    let lok = snapshot(env.cmd("lokust-shell-snapshot").env("SHELL", "/bin/zsh").env("HISTFILE", &file));
    let tail = lok["shell"]["history_tail"].as_array().unwrap();
    assert_eq!(tail[0], "ls -la");
    assert_eq!(tail[1], "for i in 1 2; do\necho $i\ndone");
    assert_eq!(tail[2], "echo naïve café ☕ 日本");
    assert_eq!(tail.len(), 4);
}

#[test]
fn bash_history_with_timestamps_and_lithist() {
    let env = TestEnv::new();
    fs::copy(fixtures().join("history/bash_history"), env.home.join(".bash_history")).unwrap();
    let lok = snapshot(&mut env.cmd("lokust-shell-snapshot"));
    let tail = lok["shell"]["history_tail"].as_array().unwrap();
    assert_eq!(tail[0], "git log --oneline");
    assert_eq!(tail[1], "for i in 1 2; do\n  echo $i\ndone");
    assert_eq!(tail[2], "#not-a-timestamp comment command");
    let last = tail[3].as_str().unwrap();
    assert!(last.starts_with("curl -H \"Authorization: Bearer ") && last.contains("[REDACTED]"), "{last}");
    assert!(!last.contains("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"), "{last}");
    assert_eq!(tail.len(), 4);
    assert_eq!(lok["shell"]["history_redacted_lines"], 1);
}

#[test]
fn history_written_by_the_real_bash() {
    let env = TestEnv::new();
    let file = env.home.join(".bash_history");
    let script = "HISTFILE=\"$HOME/.bash_history\"; HISTTIMEFORMAT=%s; set -o history; shopt -s cmdhist lithist; \
                  history -c; history -s 'git push'; history -s $'if true; then\\n  echo yes\\nfi'; history -w";
    run_ok(StdCommand::new("bash").args(["--norc", "-c", script]).env("HOME", &env.home));
    let lok = snapshot(&mut env.cmd("lokust-shell-snapshot"));
    let tail = lok["shell"]["history_tail"].as_array().unwrap();
    assert_eq!(
        tail.last().unwrap(),
        "if true; then\n  echo yes\nfi",
        "{tail:?} from {:?}",
        fs::read_to_string(&file)
    );
    assert!(tail.iter().any(|e| e == "git push"));
}

#[test]
fn fish_history_from_xdg_data_home() {
    let env = TestEnv::new();
    let data = env.root.path().join("data");
    fs::create_dir_all(data.join("fish")).unwrap();
    fs::copy(fixtures().join("history/fish_history"), data.join("fish/fish_history")).unwrap();
    let lok =
        snapshot(env.cmd("lokust-shell-snapshot").env("SHELL", "/usr/bin/fish").env("XDG_DATA_HOME", &data));
    assert_eq!(
        lok["shell"]["history_tail"],
        serde_json::json!(["cargo build --release", "echo \"two\nlines\"", "printf %s \\\\n"])
    );
}

#[test]
fn the_tail_of_a_long_history_and_history_lines() {
    let env = TestEnv::new();
    let mut text = String::new();
    for i in 0..50_000 {
        text.push_str(&format!(": {}:0;echo entry {i}\\\n  continued {i}\n", 1_700_000_000 + i));
    }
    let file = env.write("long_history", text);
    let lok = snapshot(env.cmd("lokust-shell-snapshot").env("SHELL", "zsh").env("HISTFILE", &file));
    let tail = lok["shell"]["history_tail"].as_array().unwrap();
    assert_eq!(tail.len(), 200);
    assert_eq!(tail[0], "echo entry 49800\n  continued 49800");
    assert_eq!(tail[199], "echo entry 49999\n  continued 49999");
    let lok = snapshot(
        env.cmd("lokust-shell-snapshot")
            .env("SHELL", "zsh")
            .env("HISTFILE", &file)
            .args(["--history-lines", "3"]),
    );
    assert_eq!(lok["shell"]["history_tail"].as_array().unwrap().len(), 3);
    let lok = snapshot(
        env.cmd("lokust-shell-snapshot").args(["--history-lines", "2", "--history-file"]).arg(&file),
    );
    assert_eq!(lok["shell"]["history_tail"][1], "echo entry 49999\n  continued 49999");
}

#[test]
fn an_unreadable_history_warns_once_and_the_snapshot_succeeds() {
    let env = TestEnv::new();
    let dir = env.root.path().join("a-directory");
    fs::create_dir_all(&dir).unwrap();
    let out = env.cmd("lokust-shell-snapshot").env("HISTFILE", &dir).assert().success();
    let lok = json(&out.get_output().stdout);
    assert_eq!(lok["shell"]["history_tail"], serde_json::json!([]));
    let text = stderr(&out);
    assert_eq!(text.matches("lokust: warning: history: could not read").count(), 1, "{text}");
}

#[test]
fn git_branch_dirty_files_and_a_credentialed_remote() {
    let env = TestEnv::new();
    let repo = env.cwd.join("repo");
    git_repo(&repo);
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://deploy:glpat-Xy7aBc9dEf2gHi4jKl6m@gitlab.example.com/team/app.git",
        ],
    );
    fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
    fs::write(repo.join("README"), "changed\n").unwrap();
    fs::write(repo.join("staged.txt"), "s\n").unwrap();
    git(&repo, &["add", "staged.txt"]);
    fs::create_dir_all(repo.join("new/deeper")).unwrap();
    fs::write(repo.join("new/deeper/file.txt"), "u\n").unwrap();
    fs::write(repo.join("ignored.log"), "i\n").unwrap();
    fs::create_dir_all(repo.join("sub")).unwrap();
    let lok = snapshot(env.cmd("lokust-shell-snapshot").current_dir(repo.join("sub")));
    let g = &lok["shell"]["git"];
    assert_eq!(g["branch"], "main");
    assert_eq!(g["head"], git(&repo, &["rev-parse", "HEAD"]).trim());
    // README modified, staged.txt staged, .gitignore and new/deeper/file.txt untracked.
    assert_eq!(g["dirty_files"], 4);
    assert_eq!(g["remote"], "https://gitlab.example.com/team/app.git");
    assert_eq!(g["detached"], false);
}

#[test]
fn git_detached_head_and_a_repository_without_commits() {
    let env = TestEnv::new();
    let repo = env.cwd.join("repo");
    git_repo(&repo);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-q", "--detach"]);
    let lok = snapshot(env.cmd("lokust-shell-snapshot").current_dir(&repo));
    let g = &lok["shell"]["git"];
    assert_eq!(g["branch"], Value::Null);
    assert_eq!(g["detached"], true);
    assert_eq!(g["head"], head.trim());
    assert_eq!(g["dirty_files"], 0);
    assert_eq!(g["remote"], Value::Null);

    let empty = env.cwd.join("empty");
    fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q", "-b", "trunk"]);
    let lok = snapshot(env.cmd("lokust-shell-snapshot").current_dir(&empty));
    assert_eq!(lok["shell"]["git"]["branch"], "trunk");
    assert_eq!(lok["shell"]["git"]["head"], Value::Null);
}

#[test]
fn a_broken_repository_warns_and_leaves_git_null() {
    let env = TestEnv::new();
    let repo = env.cwd.join("repo");
    git_repo(&repo);
    fs::write(repo.join(".git/HEAD"), "garbage\n").unwrap();
    let out = env.cmd("lokust-shell-snapshot").current_dir(&repo).assert().success();
    assert_eq!(json(&out.get_output().stdout)["shell"]["git"], Value::Null);
    assert_eq!(stderr(&out).matches("lokust: warning: git:").count(), 1, "{}", stderr(&out));
}

/// A project at a path with a dot, a space and a non-ASCII letter, its slot made the way
/// Claude Code names it, found through CLAUDE_CONFIG_DIR and through ~/.claude.
#[test]
fn claude_code_project_slot_and_counts() {
    let env = TestEnv::new();
    let project = env.root.path().join("my.proj/with space/naïve");
    fs::create_dir_all(&project).unwrap();
    let real = fs::canonicalize(&project).unwrap();
    let slot = lokust::capture::claude::slot_name(real.to_str().unwrap());
    assert!(slot.ends_with("-my-proj-with-space-na-ve"), "{slot}");
    let config = env.root.path().join("claude-config");
    let dir = config.join("projects").join(&slot);
    fs::create_dir_all(dir.join("memory/nested")).unwrap();
    fs::create_dir_all(dir.join("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents")).unwrap();
    for f in ["0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl", "5a3bb1c8-c3ce-466e-b487-24212cbf1da1.jsonl"] {
        fs::write(dir.join(f), "{}\n").unwrap();
    }
    fs::write(dir.join("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-1.jsonl"), "{}\n").unwrap();
    fs::write(dir.join("notes.txt"), "x").unwrap();
    for f in ["memory/MEMORY.md", "memory/a.md", "memory/nested/b.md"] {
        fs::write(dir.join(f), "m").unwrap();
    }
    let lok =
        snapshot(env.cmd("lokust-shell-snapshot").current_dir(&project).env("CLAUDE_CONFIG_DIR", &config));
    let c = &lok["shell"]["claude_code"];
    assert_eq!(c["project_slot"], slot.as_str());
    assert_eq!(c["sessions_logged"], 2);
    assert_eq!(c["memory_files"], 3);
    assert_eq!(c["project_path"], dir.to_str().unwrap());

    // Without CLAUDE_CONFIG_DIR, ~/.claude is used; here it has no such project.
    let lok = snapshot(env.cmd("lokust-shell-snapshot").current_dir(&project));
    assert_eq!(lok["shell"]["claude_code"], Value::Null);
    fs::create_dir_all(env.home.join(".claude/projects")).unwrap();
    fs::rename(&dir, env.home.join(".claude/projects").join(&slot)).unwrap();
    let lok = snapshot(env.cmd("lokust-shell-snapshot").current_dir(&project));
    assert_eq!(lok["shell"]["claude_code"]["sessions_logged"], 2);
}

/// Real transcripts from fixtures/real placed in a project slot are counted.
#[test]
fn real_claude_transcripts_in_a_slot() {
    let real = crate::util::fixtures().join("real/claude-code/entireio-cli");
    let env = TestEnv::new();
    let slot = lokust::capture::claude::slot_name(fs::canonicalize(&env.cwd).unwrap().to_str().unwrap());
    let dir = env.home.join(".claude/projects").join(&slot);
    fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    for entry in crate::util::files_below(&real) {
        let first = fs::read_to_string(&entry).unwrap();
        let id = first
            .lines()
            .find_map(|l| serde_json::from_str::<Value>(l).ok()?["sessionId"].as_str().map(str::to_string))
            .unwrap();
        fs::copy(&entry, dir.join(format!("{id}.jsonl"))).unwrap();
        n += 1;
    }
    assert_eq!(n, 7);
    let lok = snapshot(&mut env.cmd("lokust-shell-snapshot"));
    assert_eq!(lok["shell"]["claude_code"]["sessions_logged"], 7);
}

#[test]
fn tmux_session_name_comes_from_the_server() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let tmux = Tmux::start("work", &env.cwd, &env.home, "sh");
    let pane = tmux.run(&["display-message", "-p", "-t", "work:", "#{pane_id}"]);
    let lok =
        snapshot(env.cmd("lokust-shell-snapshot").env("TMUX", tmux.tmux_var()).env("TMUX_PANE", pane.trim()));
    let m = &lok["shell"]["multiplexer"];
    assert_eq!(m["kind"], "tmux");
    assert_eq!(m["session"], "work");
    assert_eq!(m["socket"], tmux.tmux_var());

    // --tmux names another session on the same server.
    tmux.run(&["new-session", "-d", "-s", "other", "sh"]);
    let lok =
        snapshot(env.cmd("lokust-shell-snapshot").env("TMUX", tmux.tmux_var()).args(["--tmux", "other"]));
    assert_eq!(lok["shell"]["multiplexer"]["session"], "other");

    // A session that does not exist is a warning, not a failure.
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("TMUX", tmux.tmux_var())
        .args(["--tmux", "nope"])
        .assert()
        .success();
    assert_eq!(json(&out.get_output().stdout)["shell"]["multiplexer"], Value::Null);
    assert!(stderr(&out).contains("lokust: warning: tmux:"), "{}", stderr(&out));
}

#[test]
fn a_tmux_server_that_is_gone_warns_and_the_snapshot_succeeds() {
    if !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let gone = env.root.path().join("no-such-socket");
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("TMUX", format!("{},4242,0", gone.display()))
        .env("TMUX_PANE", "%0")
        .assert()
        .success();
    let lok = json(&out.get_output().stdout);
    assert_eq!(lok["shell"]["multiplexer"], Value::Null);
    assert_eq!(stderr(&out).matches("lokust: warning: tmux:").count(), 1, "{}", stderr(&out));
}

#[test]
fn a_hung_subprocess_is_cut_at_the_deadline() {
    let env = TestEnv::new();
    // A fake tmux that never answers: the snapshot must not wait for it.
    let bin = env.root.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("tmux");
    fs::write(&fake, "#!/bin/sh\nexec sleep 30\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let started = std::time::Instant::now();
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("PATH", path)
        .env("TMUX", "/tmp/x,1,0")
        .env("LOKUST_TIMEOUT_MS", "300")
        .assert()
        .success();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(
        stderr(&out).contains("did not answer within 300 ms (raise LOKUST_TIMEOUT_MS"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn zellij_from_its_environment() {
    let env = TestEnv::new();
    let lok = snapshot(
        env.cmd("lokust-shell-snapshot").env("ZELLIJ", "0").env("ZELLIJ_SESSION_NAME", "calm-river"),
    );
    assert_eq!(lok["shell"]["multiplexer"], serde_json::json!({"kind": "zellij", "session": "calm-river"}));
}

#[test]
fn a_terminal_recognised_by_its_own_variable() {
    let env = TestEnv::new();
    let lok =
        snapshot(env.cmd("lokust-shell-snapshot").env("TERM", "xterm-kitty").env("KITTY_WINDOW_ID", "3"));
    assert_eq!(
        lok["shell"]["terminal"],
        serde_json::json!({"program": "kitty", "version": null, "term": "xterm-kitty"})
    );
}

#[test]
fn on_a_terminal_without_a_file_the_snapshot_is_kept_in_the_state_dir() {
    if !have("script") {
        return;
    }
    let env = TestEnv::new();
    let bin = assert_cmd::cargo::cargo_bin("lokust-shell-snapshot");
    // `script` gives the command a real terminal as stdout.
    let out = run_ok(
        StdCommand::new("script")
            .args(["-qec", &format!("{} -q", bin.display()), "/dev/null"])
            .current_dir(&env.cwd)
            .env("HOME", &env.home)
            .env("XDG_STATE_HOME", env.home.join("state")),
    );
    assert!(!out.contains("\"session\""), "JSON went to the terminal: {out}");
    let dir = env.home.join("state/lokust/snapshots");
    let files: Vec<_> = fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    assert_eq!(lokust::fsutil::mode(&dir).unwrap(), 0o700);
    assert_eq!(lokust::fsutil::mode(&files[0].path()).unwrap(), 0o600);
}

#[test]
fn lokust_log_debug_shows_what_each_capturer_cost() {
    let env = TestEnv::new();
    let out = env.cmd("lokust-shell-snapshot").arg("-q").env("LOKUST_LOG", "debug").assert().success();
    let text = stderr(&out);
    for capturer in ["env", "history", "claude code", "git", "multiplexer"] {
        assert!(text.contains(&format!("lokust: debug: {capturer} took ")), "{capturer} missing:\n{text}");
    }
    let out = env.cmd("lokust-shell-snapshot").arg("-q").assert().success();
    assert_eq!(stderr(&out), "");
}
