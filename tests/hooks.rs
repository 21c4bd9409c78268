//! The prompt hooks in real zsh, bash and fish (interactive, driven through tmux), the
//! scripts' lint, and the live snapshots they keep (`snapshot --live`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::util::pane::{bin, screen, wait_for, wait_screen};
use crate::util::schema::assert_valid;
use crate::util::{TestEnv, Tmux, have, json, run_ok};

fn hook_file(shell: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("shell-hooks/lokust.{shell}"))
}

fn init(env: &TestEnv, shell: &str) -> String {
    let out = env.cmd("lokust-shell").args(["init", shell]).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn live_dir(env: &TestEnv) -> PathBuf {
    env.home.join(".local/state/lokust/live")
}

fn read_live(path: &Path) -> Option<Value> {
    let lok: Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    assert_valid(&lok, &path.display().to_string());
    Some(lok)
}

fn history(lok: &Value) -> Vec<String> {
    lok["shell"]["history_tail"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_string()).collect()
}

#[test]
fn init_prints_the_committed_scripts_which_lint_clean() {
    let env = TestEnv::new();
    let exe = bin("lokust-shell");
    for shell in ["zsh", "bash", "fish"] {
        let file = fs::read_to_string(hook_file(shell)).unwrap();
        let printed = init(&env, shell);
        // The one difference: the hook calls this very binary by its absolute path.
        let (default, ours) = match shell {
            "fish" => ("__lokust_bin lokust-shell".to_string(), format!("__lokust_bin '{}'", exe.display())),
            _ => ("__lokust_bin='lokust-shell'".to_string(), format!("__lokust_bin='{}'", exe.display())),
        };
        assert!(file.contains(&default), "{shell}");
        assert_eq!(printed, file.replacen(&default, &ours, 1), "{shell}");
    }
    let bash = hook_file("bash");
    if have("shellcheck") {
        run_ok(StdCommand::new("shellcheck").args(["--enable=all", "--shell=bash"]).arg(&bash));
    }
    if have("shfmt") {
        run_ok(StdCommand::new("shfmt").args(["-i", "2", "-d"]).arg(&bash));
    }
    run_ok(StdCommand::new("bash").arg("-n").arg(&bash));
    if have("zsh") {
        run_ok(StdCommand::new("zsh").arg("-n").arg(hook_file("zsh")));
    }
    if have("fish") {
        run_ok(StdCommand::new("fish").arg("--no-execute").arg(hook_file("fish")));
        run_ok(StdCommand::new("fish_indent").arg("--check").arg(hook_file("fish")));
    }
}

/// Each hook, sourced twice by its shell under `-e -u` (fish has neither) and run twice
/// after a failing command, with an interval that is not a number: the status comes
/// back, nothing is printed, and the background job writes the shell's live file.
#[test]
fn hooks_are_silent_keep_the_status_and_survive_e_u() {
    let env = TestEnv::new();
    let cases = [
        (
            "zsh",
            vec!["-f", "-e", "-u", "-c"],
            "source $0; source $0; (exit 3) || __lokust_precmd || __lokust_precmd || print -r kept=$? $$",
        ),
        (
            "bash",
            vec!["--norc", "-e", "-u", "-c"],
            "source $0; source $0; (exit 3) || __lokust_hook || __lokust_hook || echo kept=$? $$",
        ),
        // Not --no-config: fish 3.6 turns private mode on with it, and the hook respects that.
        (
            "fish",
            vec!["-c"],
            "source $argv[1]; source $argv[1]; false; __lokust_hook; __lokust_hook; echo kept=$status $fish_pid",
        ),
    ];
    for (shell, args, script) in cases {
        if !have(shell) {
            continue;
        }
        let file = env.write(format!("hook.{shell}"), init(&env, shell));
        let out = StdCommand::new(shell)
            .args(&args)
            .arg(script)
            .arg(&file)
            .arg(&file)
            .current_dir(&env.cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", &env.home)
            .env("XDG_STATE_HOME", env.home.join(".local/state"))
            .env("XDG_CONFIG_HOME", env.home.join(".config"))
            .env("LOKUST_HOOK_INTERVAL", "1m")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success() && stderr.is_empty(), "{shell}: {stdout}{stderr}");
        let (kept, pid) = stdout.trim().split_once(' ').unwrap_or_else(|| panic!("{shell}: {stdout}"));
        assert_eq!(kept, if shell == "fish" { "kept=1" } else { "kept=3" }, "{shell}");
        let live = live_dir(&env).join(format!("{pid}.lok"));
        let lok = wait_for(20, &format!("{shell}'s live file"), || read_live(&live), || format!("{live:?}"));
        assert_eq!(lok["shell"]["shell"], shell);
        assert_eq!(lok["shell"]["cwd"], env.cwd.to_str().unwrap());
    }
    assert!(!env.home.join(".local/state/lokust/hook.log").exists());

    // fish's private mode is respected.
    if have("fish") {
        let out = StdCommand::new("fish")
            .args(["--private", "-c", "source $argv[1]; __lokust_hook; echo $fish_pid"])
            .arg(env.root.path().join("hook.fish"))
            .env("HOME", &env.home)
            .env("XDG_STATE_HOME", env.home.join(".local/state"))
            .env("XDG_CONFIG_HOME", env.home.join(".config"))
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        std::thread::sleep(Duration::from_millis(500));
        assert!(!live_dir(&env).join(format!("{pid}.lok")).exists(), "private mode was not respected");
    }
}

/// What an interactive session of `shell` needs: the command tmux runs and the syntax
/// of the commands typed into it.
struct Session {
    command: String,
    status: &'static str,
    count_hooks: &'static str,
}

fn session(env: &TestEnv, shell: &str) -> Session {
    let exe = bin("lokust-shell");
    let state = env.home.join(".local/state");
    let common = format!("export XDG_STATE_HOME='{}'\nexport LOKUST_HOOK_INTERVAL=0\n", state.display());
    match shell {
        "zsh" => {
            let dir = env.root.path().join("zdotdir");
            let rc = format!(
                "{common}PS1='ready> '\nHISTSIZE=1000\nsetopt hist_ignore_space\neval \"$('{e}' init zsh)\"\neval \"$('{e}' init zsh)\"\n",
                e = exe.display()
            );
            env.write("zdotdir/.zshrc", rc);
            Session {
                command: format!("ZDOTDIR='{}' exec zsh -i", dir.display()),
                status: "echo \"st=$?\"",
                count_hooks: "echo hooks=${#${(M)precmd_functions:#__lokust_precmd}}",
            }
        }
        "bash" => {
            // A PROMPT_COMMAND already there must keep working, and see the user's status.
            let rc = format!(
                "{common}PS1='ready> '\nHISTCONTROL=ignorespace\nPROMPT_COMMAND='__user_pc=$?'\neval \"$('{e}' init bash)\"\neval \"$('{e}' init bash)\"\n",
                e = exe.display()
            );
            let rc = env.write("bashrc", rc);
            Session {
                command: format!("exec bash --noprofile --rcfile '{}' -i", rc.display()),
                status: "echo \"st=$? pc=$__user_pc\"",
                count_hooks: "echo \"hooks=$PROMPT_COMMAND\"",
            }
        }
        "fish" => {
            let rc = format!(
                "set -gx XDG_STATE_HOME '{}'\nset -gx LOKUST_HOOK_INTERVAL 0\nset -g fish_greeting\nfunction fish_prompt; echo -n 'ready> '; end\n'{e}' init fish | source\n'{e}' init fish | source\n",
                state.display(),
                e = exe.display()
            );
            let rc = env.write("fishrc.fish", rc);
            Session {
                command: format!(
                    "XDG_CONFIG_HOME='{}' exec fish -C 'source {}'",
                    env.home.join(".config").display(),
                    rc.display()
                ),
                status: "echo \"st=$status\"",
                count_hooks: "echo hooks=(functions --handlers | string match -e __lokust_hook | count)",
            }
        }
        _ => unreachable!(),
    }
}

/// A real interactive shell in tmux: the live file appears, holds the commands typed,
/// follows a cd; the status survives, nothing is printed, loading twice is harmless.
fn drive(shell: &str) {
    if !have(shell) || !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let s = session(&env, shell);
    fs::create_dir_all(env.cwd.join("sub")).unwrap();
    let tmux = Tmux::start("hook", &env.cwd, &env.home, &s.command);
    let t = "=hook:";
    wait_screen(&tmux, t, "ready>");
    let pid = tmux.run(&["display-message", "-p", "-t", t, "#{pane_pid}"]).trim().to_string();
    let live = live_dir(&env).join(format!("{pid}.lok"));

    let lok = wait_for(20, "the live file", || read_live(&live), || screen(&tmux, t));
    assert_eq!(lok["shell"]["cwd"], env.cwd.to_str().unwrap());
    assert_eq!(lok["shell"]["shell"], shell);
    assert_eq!(lokust::fsutil::mode(&live).unwrap(), 0o600);

    let type_line = |line: &str| {
        tmux.run(&["send-keys", "-t", t, "-l", line]) + &tmux.run(&["send-keys", "-t", t, "Enter"])
    };
    type_line("echo planted-one");
    wait_screen(&tmux, t, "\nplanted-one\nready>");
    // Issue 10, item 3: a command typed with a leading space is hidden by every shell
    // here (zsh hist_ignore_space, bash HISTCONTROL=ignorespace, fish always).
    let written = || fs::metadata(&live).and_then(|m| m.modified()).ok();
    let before = written();
    type_line(" echo hidden-one");
    wait_screen(&tmux, t, "\nhidden-one\nready>");
    // zsh and fish keep the hidden line in memory until the next one, and refresh the
    // live file for it: wait for that refresh (there is none where nothing changed).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while written() == before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let now = history(&read_live(&live).unwrap());
    assert!(!now.iter().any(|h| h.contains("hidden-one")), "{shell}: a hidden command was kept: {now:?}");
    type_line("false");
    type_line(s.status);
    // Waiting for the prompt after the line makes sure the line is complete.
    let shown = wait_screen(&tmux, t, "\nst=");
    let expected = if shell == "bash" { "\nst=1 pc=1\nready>" } else { "\nst=1\nready>" };
    wait_screen(&tmux, t, expected);
    assert!(!shown.contains("\nst=0"), "{shell}: the status was lost:\n{shown}");
    type_line(s.count_hooks);
    let expected =
        if shell == "bash" { "\nhooks=__lokust_hook;__user_pc=$?\nready>" } else { "\nhooks=1\nready>" };
    wait_screen(&tmux, t, expected);
    type_line("cd sub");

    let sub = env.cwd.join("sub");
    let lok = wait_for(
        20,
        "the live file to follow the cd and hold the commands",
        || {
            read_live(&live).filter(|l| {
                l["shell"]["cwd"] == sub.to_str().unwrap() && history(l).contains(&"false".into())
            })
        },
        || format!("{:#}", read_live(&live).unwrap_or_default()),
    );
    let hist = history(&lok);
    assert!(hist.contains(&"echo planted-one".to_string()), "{hist:?}");
    assert!(!hist.iter().any(|h| h.contains("hidden-one")), "{shell}: a hidden command was kept: {hist:?}");

    // An export of this pane takes its history from the live file: the shell's own
    // memory, though no history file was ever written.
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", tmux.socket.to_str().unwrap(), "export", "-q", "-o", "-", "-t", t])
        .assert()
        .success();
    let export = json(&out.get_output().stdout);
    assert_eq!(export["shell"]["shell"], shell);
    assert_eq!(export["shell"]["cwd"], sub.to_str().unwrap());
    assert!(history(&export).contains(&"echo planted-one".to_string()), "{:#}", export["shell"]);
    assert!(!history(&export).iter().any(|h| h.contains("hidden-one")), "{:#}", export["shell"]);
    // Issue 10, item 14: no refresh leaves a zombie child behind (fish 3.6 never reaps a
    // disowned job).
    std::thread::sleep(Duration::from_millis(300));
    let children = StdCommand::new("ps").args(["-o", "stat=,args=", "--ppid", &pid]).output().unwrap();
    let children = String::from_utf8_lossy(&children.stdout).into_owned();
    assert!(!children.lines().any(|l| l.trim_start().starts_with('Z')), "{shell}: zombies:\n{children}");

    // LOKUST_HOOK=0 turns it off: a cd is no longer followed.
    let off = if shell == "fish" { "set -gx LOKUST_HOOK 0" } else { "export LOKUST_HOOK=0" };
    type_line(off);
    type_line("cd ..");
    type_line("echo after-off");
    wait_screen(&tmux, t, "\nafter-off\nready>");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(read_live(&live).unwrap()["shell"]["cwd"], sub.to_str().unwrap());

    // Nothing but what was typed and its output reached the terminal.
    let all = screen(&tmux, t);
    for noise in ["lokust:", "lokust-shell", "[1]", "Done", "job", "rror", "arning", "disown"] {
        assert!(!all.contains(noise), "{shell} printed {noise:?}:\n{all}");
    }
    assert!(!env.home.join(".local/state/lokust/hook.log").exists());
}

#[test]
fn zsh_keeps_a_live_snapshot() {
    drive("zsh");
}

#[test]
fn bash_keeps_a_live_snapshot() {
    drive("bash");
}

#[test]
fn fish_keeps_a_live_snapshot() {
    drive("fish");
}

fn live_cmd(env: &TestEnv, pid: &str, history: &[u8]) -> assert_cmd::assert::Assert {
    env.cmd("lokust-shell")
        .args(["snapshot", "--live", pid, "--shell", "zsh", "--history-from", "-"])
        .write_stdin(history.to_vec())
        .assert()
        .success()
        .stdout("")
        .stderr("")
}

#[test]
fn a_live_snapshot_never_gets_worse() {
    let env = TestEnv::new();
    let live = live_dir(&env).join("4242.lok");
    let token = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
    live_cmd(&env, "4242", format!("echo a\0git push https://{token}@h/x\0").as_bytes());
    let first = read_live(&live).unwrap();
    assert_eq!(history(&first), ["echo a", "git push https://[REDACTED]@h/x"]);
    assert_eq!(lokust::fsutil::mode(&live_dir(&env)).unwrap(), 0o700);

    // An empty handover keeps the history already saved; the session id stays.
    live_cmd(&env, "4242", b"");
    let second = read_live(&live).unwrap();
    assert_eq!(history(&second), history(&first));
    assert_eq!(second["session"]["id"], first["session"]["id"]);

    // fc -l output, as bash hands it over.
    live_cmd(&env, "4242", b"1\t echo b\n2\t for i in 1; do\necho $i\ndone\n");
    assert_eq!(history(&read_live(&live).unwrap()), ["echo b", "for i in 1; do\necho $i\ndone"]);

    // Inside the interval, in the same directory, nothing is rewritten.
    let before = fs::metadata(&live).unwrap().modified().unwrap();
    env.cmd("lokust-shell")
        .args(["snapshot", "--live", "4242", "--interval", "3600", "--history-from", "-"])
        .write_stdin("echo c\0")
        .assert()
        .success()
        .stdout("")
        .stderr("");
    assert_eq!(fs::metadata(&live).unwrap().modified().unwrap(), before);

    // A broken file is replaced by a good one.
    fs::write(&live, "{\"session\":").unwrap();
    live_cmd(&env, "4242", b"echo d\0");
    assert_eq!(history(&read_live(&live).unwrap()), ["echo d"]);

    // Outside the hook, --history-from works for any snapshot.
    let out = env
        .cmd("lokust-shell")
        .args(["snapshot", "-q", "--history-from", "-", "-o", "-"])
        .write_stdin("   7  echo f\n   8  echo g\n")
        .assert()
        .success();
    assert_eq!(history(&json(&out.get_output().stdout)), ["echo f", "echo g"]);

    // From a directory that is gone, the old file stays and nothing is printed.
    let gone = env.root.path().join("gone");
    fs::create_dir_all(&gone).unwrap();
    let out = StdCommand::new("sh")
        .args([
            "-c",
            "cd \"$1\" && rmdir \"$1\" && exec \"$2\" snapshot --live 4242 --history-from /dev/null",
            "sh",
        ])
        .arg(&gone)
        .arg(bin("lokust-shell"))
        .env("HOME", &env.home)
        .env("XDG_STATE_HOME", env.home.join(".local/state"))
        .output()
        .unwrap();
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(history(&read_live(&live).unwrap()), ["echo d"]);

    // The live files of shells long gone are pruned; a recent one stays for --latest.
    let old = live_dir(&env).join("2000000001.lok");
    let recent = live_dir(&env).join("2000000002.lok");
    for p in [&old, &recent] {
        fs::copy(&live, p).unwrap();
    }
    let month_ago = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    fs::File::options().write(true).open(&old).unwrap().set_modified(month_ago).unwrap();
    live_cmd(&env, "4242", b"echo e\0");
    assert!(!old.exists() && recent.exists());
}

#[test]
fn inspect_latest_finds_where_a_lost_shell_was() {
    let env = TestEnv::new();
    let out = env.cmd("lokust-shell").args(["inspect", "--latest"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("no snapshot found"));

    // An export, then the live file of a shell that has ended (no such pid runs).
    let state = env.home.join(".local/state/lokust");
    let export = state.join("exports/work-0.0-x.lok");
    fs::create_dir_all(export.parent().unwrap()).unwrap();
    fs::copy(crate::util::fixtures().join("lok/shell.lok"), &export).unwrap();
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options().write(true).open(&export).unwrap().set_modified(hour_ago).unwrap();
    let out = env.cmd("lokust-shell").args(["inspect", "--latest"]).assert().success();
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("work-0.0-x.lok (tmux export"));

    env.cmd("lokust-shell")
        .current_dir(&env.cwd)
        .args(["snapshot", "--live", "2000000003"])
        .assert()
        .success();
    let out = env.cmd("lokust-shell").args(["inspect", "--latest", "--json"]).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("2000000003.lok (live snapshot of a shell that has ended"), "{err}");
    assert_eq!(json(&out.get_output().stdout)["shell"]["cwd"], env.cwd.to_str().unwrap());
}

/// fish passes no time of its own (it has no clock without a fork), so two refreshes are
/// ordered by when lokust was forked. A refresh forked first but run last (a busy
/// machine) must not put the older directory back: here the first one sleeps between its
/// fork and its start, and the second, forked later in another directory, finishes first.
#[test]
fn a_refresh_forked_earlier_but_run_later_does_not_undo_a_newer_one() {
    let env = TestEnv::new();
    let sub = env.cwd.join("sub");
    fs::create_dir_all(&sub).unwrap();
    let live = live_dir(&env).join("4343.lok");
    let bin = assert_cmd::cargo::cargo_bin("lokust-shell");
    let mut first = std::process::Command::new("sh")
        .arg("-c")
        .arg("sleep 1; exec \"$0\" snapshot --live 4343 --shell fish --history-from /dev/null")
        .arg(&bin)
        .current_dir(&env.cwd)
        .env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_STATE_HOME", env.home.join(".local/state"))
        .env("PWD", &env.cwd)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    env.cmd("lokust-shell")
        .args(["snapshot", "--live", "4343", "--shell", "fish", "--history-from", "/dev/null"])
        .current_dir(&sub)
        .env("PWD", &sub)
        .assert()
        .success();
    assert_eq!(read_live(&live).unwrap()["shell"]["cwd"], sub.to_str().unwrap());
    assert!(first.wait().unwrap().success());
    assert_eq!(read_live(&live).unwrap()["shell"]["cwd"], sub.to_str().unwrap(), "the older refresh won");
}

/// `lokust-shell doctor` run from a real interactive bash with the hook sees it firing.
#[test]
fn doctor_sees_the_hook_firing_in_a_real_shell() {
    if !have("bash") || !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let s = session(&env, "bash");
    let tmux = Tmux::start("doc", &env.cwd, &env.home, &s.command);
    let t = "=doc:";
    wait_screen(&tmux, t, "ready>");
    let pid = tmux.run(&["display-message", "-p", "-t", t, "#{pane_pid}"]).trim().to_string();
    let live = live_dir(&env).join(format!("{pid}.lok"));
    wait_for(20, "the live file", || read_live(&live), || screen(&tmux, t));
    let report = env.root.path().join("doctor.txt");
    let line = format!(
        "SHELL=/bin/bash '{}' doctor > '{}'; echo done-doctor",
        bin("lokust-shell").display(),
        report.display()
    );
    tmux.run(&["send-keys", "-t", t, "-l", &line]);
    tmux.run(&["send-keys", "-t", t, "Enter"]);
    wait_screen(&tmux, t, "\ndone-doctor\n");
    let out = fs::read_to_string(&report).unwrap();
    let hook = out.lines().find(|l| l.contains("prompt hook")).unwrap_or_else(|| panic!("{out}"));
    assert!(hook.starts_with("✓ ") && hook.contains("firing"), "{out}");
}

/// A conversation of the shell's directory close to Claude Code's cleanup: the next prompt
/// after a refresh says so on one line, once; the prompt itself runs no program for it.
fn notice(shell: &str) {
    if !have(shell) || !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let s = session(&env, shell);
    let real = fs::canonicalize(&env.cwd).unwrap();
    let slot =
        env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()));
    fs::create_dir_all(&slot).unwrap();
    fs::write(env.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 30}"#).unwrap();
    let old = slot.join("0b5e7c4a-3f8d-4a51-9e2c-7d1f0a6b8c93.jsonl");
    fs::write(&old, "{}\n").unwrap();
    let when = std::time::SystemTime::now() - Duration::from_secs(28 * 86_400);
    filetime::set_file_mtime(&old, filetime::FileTime::from_system_time(when)).unwrap();
    let tmux = Tmux::start("hook", &env.cwd, &env.home, &s.command);
    let t = "=hook:";
    wait_screen(&tmux, t, "ready>");
    let pid = tmux.run(&["display-message", "-p", "-t", t, "#{pane_pid}"]).trim().to_string();
    let notice = env.home.join(".local/state/lokust/notices").join(&pid);
    wait_for(20, "the notice", || Some(()).filter(|()| notice.exists()), || screen(&tmux, t));
    let type_line = |line: &str| {
        tmux.run(&["send-keys", "-t", t, "-l", line]) + &tmux.run(&["send-keys", "-t", t, "Enter"])
    };
    type_line("echo one");
    let said = wait_screen(&tmux, t, "Claude Code deletes 1 conversation of this project");
    assert!(said.contains("keep them: lokust-shell archive"), "{shell}:\n{said}");
    type_line("echo two");
    type_line("echo three");
    let all = wait_screen(&tmux, t, "\nthree\nready>");
    assert_eq!(all.matches("Claude Code deletes").count(), 1, "{shell}: shown more than once:\n{all}");
    assert_eq!(fs::metadata(&notice).unwrap().len(), 0);
}

#[test]
fn zsh_says_when_conversations_are_about_to_be_deleted() {
    notice("zsh");
}

#[test]
fn bash_says_when_conversations_are_about_to_be_deleted() {
    notice("bash");
}

#[test]
fn fish_says_when_conversations_are_about_to_be_deleted() {
    notice("fish");
}

/// `LOKUST_ARCHIVE=auto`: when a conversation of the shell's directory is close to Claude
/// Code's cleanup, the hook's background refresh archives the project, and the next prompt
/// says it did, once.
#[test]
fn lokust_archive_auto_archives_the_project_from_the_hook() {
    if !have("bash") || !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let s = session(&env, "bash");
    let slot = crate::util::claude::make_project(&env, &env.cwd);
    fs::write(env.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 30}"#).unwrap();
    let when = std::time::SystemTime::now() - Duration::from_secs(28 * 86_400);
    for f in crate::util::files_below(&slot).iter().filter(|f| f.extension().is_some_and(|x| x == "jsonl")) {
        filetime::set_file_mtime(f, filetime::FileTime::from_system_time(when)).unwrap();
    }
    let archive = env.home.join(".local/state/lokust/archive");
    assert!(!archive.exists());
    let tmux = Tmux::start("auto", &env.cwd, &env.home, &format!("LOKUST_ARCHIVE=auto {}", s.command));
    let t = "=auto:";
    wait_screen(&tmux, t, "ready>");
    let pid = tmux.run(&["display-message", "-p", "-t", t, "#{pane_pid}"]).trim().to_string();
    let notice = env.home.join(".local/state/lokust/notices").join(&pid);
    wait_for(30, "the notice", || Some(()).filter(|()| notice.exists()), || screen(&tmux, t));
    let kept: Vec<_> = crate::util::files_below(&archive)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "lok"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    tmux.run(&["send-keys", "-t", t, "-l", "echo one"]);
    tmux.run(&["send-keys", "-t", t, "Enter"]);
    let said = wait_screen(&tmux, t, "archived them (LOKUST_ARCHIVE=auto)");
    assert!(said.contains("Claude Code deletes 2 conversations of this project"), "{said}");
}

/// Six shells refreshing in one project at once: one archive, one notice.
#[test]
fn shells_refreshing_at_once_archive_a_project_once() {
    let env = TestEnv::new();
    let slot = crate::util::claude::make_project(&env, &env.cwd);
    let when = std::time::SystemTime::now() - Duration::from_secs(28 * 86_400);
    for f in crate::util::files_below(&slot).iter().filter(|f| f.extension().is_some_and(|x| x == "jsonl")) {
        filetime::set_file_mtime(f, filetime::FileTime::from_system_time(when)).unwrap();
    }
    // Held at a FIFO, then let go together when it is opened for writing.
    let gate = env.root.path().join("gate");
    assert!(StdCommand::new("mkfifo").arg(&gate).status().unwrap().success());
    let refreshes: Vec<std::process::Child> = (0..6)
        .map(|i| {
            let mut cmd = StdCommand::new("sh");
            cmd.arg("-c")
                .arg("read x < \"$1\"; exec \"$2\" snapshot --live \"$3\" --shell bash --history-from /dev/null")
                .arg("sh")
                .arg(&gate)
                .arg(bin("lokust-shell"))
                .arg(format!("{}", 5000 + i))
                .current_dir(&env.cwd)
                .env_clear()
                .env("HOME", &env.home)
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("PWD", &env.cwd)
                .env("LOKUST_ARCHIVE", "auto");
            cmd.spawn().unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    drop(fs::OpenOptions::new().write(true).open(&gate).unwrap());
    for mut r in refreshes {
        assert!(r.wait().unwrap().success());
    }
    let state = env.home.join(".local/state/lokust");
    let archives = crate::util::files_below(&state.join("archive"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "lok"))
        .count();
    assert_eq!(archives, 1);
    let notices: Vec<String> =
        (0..6).filter_map(|i| fs::read_to_string(state.join(format!("notices/{}", 5000 + i))).ok()).collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].lines().count(), 1, "{notices:?}");
}
