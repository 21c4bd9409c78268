//! Sealed `.lok` files, checked against the independent other side: the `age` and
//! `age-keygen` programs and keys made by `ssh-keygen`. lokust seals, `age -d` opens;
//! `age -e` seals, lokust opens; a cut, changed, misnamed or foreign file is refused
//! with nothing written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::claude::{SESSION, make_project};
use crate::util::{TestEnv, have, run_ok};

/// Everything these tests drive; missing ones fail in CI (see `have`).
fn tools() -> bool {
    have("age") && have("age-keygen") && have("ssh-keygen")
}

/// An age key and two SSH keys (ed25519, RSA) made by the reference tools.
struct Keys {
    age: PathBuf,
    age_pub: String,
    ed: PathBuf,
    ed_pub: String,
    rsa: PathBuf,
    rsa_pub: String,
}

fn keys(env: &TestEnv) -> Keys {
    let dir = env.root.path().join("keys");
    fs::create_dir_all(&dir).unwrap();
    let age = dir.join("age.txt");
    run_ok(Command::new("age-keygen").arg("-o").arg(&age));
    let age_pub = run_ok(Command::new("age-keygen").arg("-y").arg(&age)).trim().to_string();
    let ssh = |kind: &[&str], name: &str| {
        let path = dir.join(name);
        run_ok(
            Command::new("ssh-keygen")
                .args(["-q", "-N", "", "-C", "tester@old"])
                .args(kind)
                .arg("-f")
                .arg(&path),
        );
        let public = fs::read_to_string(path.with_extension("pub")).unwrap().trim().to_string();
        (path, public)
    };
    let (ed, ed_pub) = ssh(&["-t", "ed25519"], "id_ed25519");
    let (rsa, rsa_pub) = ssh(&["-t", "rsa", "-b", "2048"], "id_rsa");
    Keys { age, age_pub, ed, ed_pub, rsa, rsa_pub }
}

/// A bundled project, sealed with `seal` flags, then wiped as on a machine that never
/// had it; returns the sealed file.
fn sealed_bundle(env: &TestEnv, seal: &[&str], name: &str) -> PathBuf {
    let project = env.root.path().join("old/proj");
    let slot = make_project(env, &project);
    // Notes that do not compress, so the sealed file spans several 64 KiB age chunks.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let noise: String = (0..40_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{:016x}", x)
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(slot.join("memory/noise.md"), noise).unwrap();
    let out = env.root.path().join(name);
    env.cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .arg("--bundle")
        .args(seal)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    wipe(env);
    out
}

fn wipe(env: &TestEnv) {
    for kind in ["projects", "file-history", "todos", "tasks"] {
        let _ = fs::remove_dir_all(env.home.join(".claude").join(kind));
    }
    let _ = fs::remove_file(env.home.join(".claude/history.jsonl"));
    fs::write(env.home.join(".claude.json"), r#"{"userID":"u","projects":{}}"#).unwrap();
    fs::create_dir_all(env.home.join(".claude/projects")).unwrap();
}

fn age_decrypt(key: &Path, file: &Path) -> Vec<u8> {
    let out = Command::new("age").arg("-d").arg("-i").arg(key).arg(file).output().unwrap();
    assert!(out.status.success(), "age -d failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn slot_of(env: &TestEnv, target: &Path) -> PathBuf {
    let real = fs::canonicalize(target).unwrap();
    env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()))
}

/// Nothing was restored: no project slot, no staging dir, no target dir.
fn assert_nothing_written(env: &TestEnv, target: &Path) {
    let projects = env.home.join(".claude/projects");
    let left: Vec<_> = fs::read_dir(&projects).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(!target.exists(), "{} was created", target.display());
    assert!(!env.home.join(".claude/history.jsonl").exists());
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn lokust_seals_to_ssh_and_age_keys_and_age_opens_both() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let sealed = sealed_bundle(
        &env,
        &["--encrypt-to", &k.age_pub, "--encrypt-to", &k.ed_pub, "-r", &k.rsa_pub],
        "s.lok.age",
    );
    assert_eq!(lokust::fsutil::mode(&sealed).unwrap(), 0o600);
    let bytes = fs::read(&sealed).unwrap();
    assert!(bytes.starts_with(b"age-encryption.org/v1\n"));
    // Sealed means sealed: nothing of the session reads through.
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(SESSION) && !text.contains("format_version") && !text.contains("tester"));
    let mut plain = None;
    for key in [&k.age, &k.ed, &k.rsa] {
        let out = age_decrypt(key, &sealed);
        let doc: serde_json::Value = serde_json::from_slice(&out).expect("age -d gives the JSON .lok");
        assert_eq!(doc["format_version"], 1);
        assert!(doc["bundle"]["data"].as_str().is_some_and(|d| !d.is_empty()));
        if let Some(p) = &plain {
            assert_eq!(p, &out);
        }
        plain = Some(out);
    }
    // What age opened is a .lok lokust reads, with the conversations in it.
    let plain_file = env.write("opened.lok", plain.unwrap());
    let a = env.cmd("lokust-shell").arg("inspect").arg(&plain_file).assert().success();
    assert!(String::from_utf8_lossy(&a.get_output().stdout).contains(SESSION));
}

#[test]
fn armored_output_is_text_that_age_opens() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let a = env
        .cmd("lokust-shell-snapshot")
        .args(["--armor", "-R"])
        .arg(k.ed.with_extension("pub"))
        .assert()
        .success();
    let out = a.get_output().stdout.clone();
    let text = String::from_utf8(out.clone()).expect("armor is text");
    assert!(text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----\n"), "{text}");
    assert!(text.trim_end().ends_with("-----END AGE ENCRYPTED FILE-----"));
    let file = env.write("a.lok.age", &out);
    let doc: serde_json::Value = serde_json::from_slice(&age_decrypt(&k.ed, &file)).unwrap();
    assert_eq!(doc["session"]["kind"], "shell");
    // lokust opens its own armor too.
    env.cmd("lokust-shell").arg("inspect").arg("-i").arg(&k.ed).arg(&file).assert().success();
}

#[test]
fn a_file_age_sealed_is_restored_by_lokust_from_a_file_and_from_a_pipe() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let project = env.root.path().join("old/proj");
    make_project(&env, &project);
    let plain = env.root.path().join("plain.lok");
    env.cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .arg("--bundle")
        .arg("-o")
        .arg(&plain)
        .assert()
        .success();
    wipe(&env);
    // Binary to an age key, armored to an SSH key: both are what `age -e` makes.
    let binary = env.root.path().join("by-age.lok.age");
    run_ok(Command::new("age").args(["-e", "-r", &k.age_pub, "-o"]).arg(&binary).arg(&plain));
    let armored = env.root.path().join("by-age-armored.lok.age");
    run_ok(Command::new("age").args(["-e", "-a", "-r", &k.ed_pub, "-o"]).arg(&armored).arg(&plain));

    let target = env.root.path().join("new/proj");
    env.cmd("lokust-shell-restore")
        .arg(&binary)
        .arg("-i")
        .arg(&k.age)
        .arg("--to")
        .arg(&target)
        .assert()
        .success();
    assert!(slot_of(&env, &target).join(format!("{SESSION}.jsonl")).is_file());

    let target2 = env.root.path().join("new/proj2");
    env.cmd("lokust-shell-restore")
        .args(["-", "--identity"])
        .arg(&k.ed)
        .arg("--to")
        .arg(&target2)
        .write_stdin(fs::read(&armored).unwrap())
        .assert()
        .success();
    let main = fs::read_to_string(slot_of(&env, &target2).join(format!("{SESSION}.jsonl"))).unwrap();
    let real = fs::canonicalize(&target2).unwrap();
    assert!(main.contains(&format!("\"cwd\":\"{}\"", real.display())), "paths rewritten");
}

#[test]
fn snapshot_piped_into_restore_opens_with_the_default_ssh_key() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    // The user's usual key, where lokust looks without -i.
    fs::create_dir_all(env.home.join(".ssh")).unwrap();
    fs::copy(&k.ed, env.home.join(".ssh/id_ed25519")).unwrap();
    let project = env.root.path().join("old/proj");
    make_project(&env, &project);
    let snap = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "-q", "--encrypt-to", &k.ed_pub])
        .output()
        .unwrap();
    assert!(snap.status.success());
    assert!(snap.stdout.starts_with(b"age-encryption.org/v1\n"));
    wipe(&env);
    let target = env.root.path().join("there");
    env.cmd("lokust-shell-restore")
        .args(["-", "--to"])
        .arg(&target)
        .write_stdin(snap.stdout.clone())
        .assert()
        .success();
    assert!(slot_of(&env, &target).join(format!("{SESSION}.jsonl")).is_file());

    // An age identity in $XDG_CONFIG_HOME/lokust/identities is found too.
    let config = env.root.path().join("config");
    fs::create_dir_all(config.join("lokust")).unwrap();
    fs::copy(&k.age, config.join("lokust/identities")).unwrap();
    let sealed_ed = env.write("from-snapshot.lok.age", &snap.stdout);
    let plain = env.write("plain.lok", age_decrypt(&k.ed, &sealed_ed));
    let sealed = env.root.path().join("x.lok.age");
    run_ok(Command::new("age").args(["-e", "-r", &k.age_pub, "-o"]).arg(&sealed).arg(&plain));
    env.cmd("lokust-shell")
        .env("XDG_CONFIG_HOME", &config)
        .arg("inspect")
        .arg(&sealed)
        .assert()
        .success()
        .stdout(predicates::str::contains("Shell session"));
}

#[test]
fn env_recipients_seal_and_latest_finds_the_sealed_file() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let recipients =
        env.write("recipients.txt", format!("# laptop\n{}\n\n# server\n{}\n", k.age_pub, k.rsa_pub));
    let exports = env.home.join(".local/state/lokust/exports");
    fs::create_dir_all(&exports).unwrap();
    let file = exports.join("work-0.0-20260101T000000Z.lok.age");
    env.cmd("lokust-shell-snapshot")
        .env("LOKUST_RECIPIENTS_FILE", &recipients)
        .arg("-o")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicates::str::contains("Sealed:"));
    age_decrypt(&k.rsa, &file);
    let a = env.cmd("lokust-shell").args(["inspect", "--latest", "-i"]).arg(&k.age).assert().success();
    assert!(String::from_utf8_lossy(&a.get_output().stdout).contains("Shell session"));
    // LOKUST_ENCRYPT_TO takes several keys, comma-separated.
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("LOKUST_ENCRYPT_TO", format!("{},{}", k.age_pub, k.ed_pub))
        .output()
        .unwrap();
    let f = env.write("e.lok.age", out.stdout);
    age_decrypt(&k.ed, &f);
    age_decrypt(&k.age, &f);
    // A flag wins over the environment, and an empty variable is unset.
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("LOKUST_ENCRYPT_TO", &k.age_pub)
        .args(["-q", "--encrypt-to", &k.rsa_pub])
        .output()
        .unwrap();
    let f = env.write("flag.lok.age", out.stdout);
    age_decrypt(&k.rsa, &f);
    let by_age = Command::new("age").arg("-d").arg("-i").arg(&k.age).arg(&f).output().unwrap();
    assert!(!by_age.status.success(), "the environment's recipient was added to the flag's");
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("LOKUST_ENCRYPT_TO", "")
        .env("LOKUST_RECIPIENTS_FILE", "")
        .arg("-q")
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.starts_with(b"{"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn wrong_key_truncation_tampering_and_a_misnamed_plain_file_are_refused_with_nothing_written() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let sealed = sealed_bundle(&env, &["--encrypt-to", &k.ed_pub], "s.lok.age");
    let bytes = fs::read(&sealed).unwrap();
    assert!(bytes.len() > 3 * 65536, "the bundle spans several age chunks ({} bytes)", bytes.len());
    let target = env.root.path().join("new/proj");
    let refuse = |file: &Path, key: &Path, what: &str| {
        let a = env
            .cmd("lokust-shell-restore")
            .arg(file)
            .arg("-i")
            .arg(key)
            .arg("--to")
            .arg(&target)
            .assert()
            .code(2);
        let err = stderr(&a);
        assert!(err.contains(what), "expected {what:?} in: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_nothing_written(&env, &target);
        err
    };

    // The wrong key: the message says what the file is sealed to and what was tried.
    let err = refuse(&sealed, &k.rsa, "none of the keys tried opens");
    let ed_blob = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        k.ed_pub.split_whitespace().nth(1).unwrap(),
    )
    .unwrap();
    let tag = lokust::seal::ssh_tag(&ed_blob);
    assert!(err.contains(&format!("ssh-ed25519 key {tag}")), "{err}");
    assert!(err.contains(&k.rsa.display().to_string()) && err.contains("ssh-rsa key"), "{err}");
    // An age key that is not the one: inspect says so as well.
    let a = env.cmd("lokust-shell").arg("inspect").arg("-i").arg(&k.age).arg(&sealed).assert().code(2);
    assert!(stderr(&a).contains("age key age1"), "{}", stderr(&a));

    // Cut in the middle of a chunk, and cut at a chunk boundary (whole chunks lost).
    let cut = env.write("cut.lok.age", &bytes[..bytes.len() / 2]);
    refuse(&cut, &k.ed, "cut short or changed");
    let header_len = bytes.windows(4).position(|w| w == b"\n---").unwrap();
    let header_end = header_len + bytes[header_len + 1..].iter().position(|&b| b == b'\n').unwrap() + 2;
    let chunk = 65536 + 16;
    let boundary = header_end + 16 + 2 * chunk;
    let cut = env.write("cut-boundary.lok.age", &bytes[..boundary]);
    refuse(&cut, &k.ed, "truncated");
    let cut = env.write("cut-header.lok.age", &bytes[..header_end - 10]);
    refuse(&cut, &k.ed, "truncated");

    // One byte changed: in the last chunk, in the first, and in the header.
    for (name, at) in [("tail", bytes.len() - 5), ("body", header_end + 16 + 100), ("header", header_end - 5)]
    {
        let mut t = bytes.clone();
        t[at] ^= 0x01;
        let f = env.write(format!("tampered-{name}.lok.age"), &t);
        let a = env
            .cmd("lokust-shell-restore")
            .arg(&f)
            .arg("-i")
            .arg(&k.ed)
            .arg("--to")
            .arg(&target)
            .assert()
            .code(2);
        let err = stderr(&a);
        assert!(
            err.contains("changed") || err.contains("damaged") || err.contains("not a valid age file"),
            "{name}: {err}"
        );
        assert_nothing_written(&env, &target);
    }

    // A plain .lok under a sealed name: whoever named it expected a sealed one.
    let plain = env.write("plain.lok.age", age_decrypt(&k.ed, &sealed));
    refuse(&plain, &k.ed, "is not an age file");
    let a = env.cmd("lokust-shell").arg("inspect").arg(&plain).assert().code(2);
    assert!(stderr(&a).contains("is not an age file"));
    // And the untouched file still restores: the refusals were about the files.
    env.cmd("lokust-shell-restore")
        .arg(&sealed)
        .arg("-i")
        .arg(&k.ed)
        .arg("--to")
        .arg(&target)
        .assert()
        .success();
}

#[test]
fn bad_recipients_are_refused_before_anything_is_written() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let out = env.root.path().join("x.lok.age");
    for (args, what) in [
        (vec!["--encrypt-to", "age1notakey"], "not a valid age public key"),
        (vec!["--encrypt-to", "bob@example.com"], "is not a recipient"),
        (vec!["--encrypt-to", "ssh-ed25519 AAAAnotbase64"], "not a valid SSH public key"),
        (vec!["-R", "/nonexistent/recipients"], "could not read the recipients file"),
        (vec!["--armor"], "--armor needs something to seal to"),
    ] {
        let a = env.cmd("lokust-shell-snapshot").args(&args).arg("-o").arg(&out).assert().code(2);
        assert!(stderr(&a).contains(what), "{args:?}: {}", stderr(&a));
        assert!(!out.exists());
    }
    // An ECDSA key, which age cannot seal to.
    let a = env
        .cmd("lokust-shell-snapshot")
        .args([
            "--encrypt-to",
            "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBA==",
        ])
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("cannot receive age files") || stderr(&a).contains("not a valid SSH"),
        "{}",
        stderr(&a)
    );
}

/// Drives a program through a pseudo-terminal, answering every passphrase prompt with
/// `pass`; prints what the program wrote and exits with its status.
const PTY_DRIVER: &str = r#"
import os, pty, re, sys, select
pw = sys.argv[1].encode() + b"\n"
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
seen = b""
answered = 0
while True:
    try:
        r, _, _ = select.select([fd], [], [], 30)
    except InterruptedError:
        continue
    if not r:
        break
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    # A prompt is "…passphrase…: " or "…again: "; the summary's "for a passphrase" is not.
    prompts = len(re.findall(rb"(?i)(passphrase|again)[^\r\n]*: ", seen))
    while answered < prompts:
        os.write(fd, pw)
        answered += 1
_, status = os.waitpid(pid, 0)
sys.stderr.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;

fn through_pty(env: &TestEnv, pass: &str, program: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new("python3")
        .arg("-c")
        .arg(PTY_DRIVER)
        .arg(pass)
        .args(program)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("LANG", "C.UTF-8")
        .current_dir(&env.cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_passphrase_typed_on_a_terminal_seals_and_opens_and_age_agrees() {
    if !tools() || !have("python3") {
        return;
    }
    let env = TestEnv::new();
    let snapshot = assert_cmd::cargo::cargo_bin("lokust-shell-snapshot");
    let shell = assert_cmd::cargo::cargo_bin("lokust-shell");
    let file = env.root.path().join("p.lok.age");
    let out = through_pty(
        &env,
        "correct horse",
        &[snapshot.as_os_str(), "--passphrase".as_ref(), "-o".as_ref(), file.as_os_str()],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Type it again"), "asked twice: {said}");
    assert!(!said.contains("correct horse"), "the passphrase was echoed: {said}");
    assert!(fs::read(&file).unwrap().starts_with(b"age-encryption.org/v1\n-> scrypt "));
    // lokust opens it on the terminal …
    let out = through_pty(&env, "correct horse", &[shell.as_os_str(), "inspect".as_ref(), file.as_os_str()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Shell session"));
    // … and so does age.
    let out = through_pty(&env, "correct horse", &["age".as_ref(), "-d".as_ref(), file.as_os_str()]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("format_version"));
    // A wrong passphrase is a clear error.
    let out = through_pty(&env, "wrong horse", &[shell.as_os_str(), "inspect".as_ref(), file.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("wrong passphrase"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without a terminal there is nobody to ask: a clear error, no file, no hang.
    if have("setsid") {
        let none = env.root.path().join("none.lok.age");
        let out = Command::new("setsid")
            .arg(&snapshot)
            .args(["--passphrase", "-o"])
            .arg(&none)
            .env("HOME", &env.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no terminal"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!none.exists());
        let out = Command::new("setsid")
            .arg(&shell)
            .arg("inspect")
            .arg(&file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no terminal"));
    }
}

#[test]
fn a_passphrase_protected_ssh_key_is_asked_for_only_when_the_file_is_sealed_to_it() {
    if !tools() || !have("python3") {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let locked = env.root.path().join("keys/locked");
    run_ok(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "key pass", "-f"]).arg(&locked));
    let locked_pub = fs::read_to_string(locked.with_extension("pub")).unwrap();
    let shell = assert_cmd::cargo::cargo_bin("lokust-shell");
    let mine = env.root.path().join("mine.lok.age");
    env.cmd("lokust-shell-snapshot")
        .args(["--encrypt-to", locked_pub.trim(), "-o"])
        .arg(&mine)
        .assert()
        .success();
    let out = through_pty(
        &env,
        "key pass",
        &[shell.as_os_str(), "inspect".as_ref(), "-i".as_ref(), locked.as_os_str(), mine.as_os_str()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A file for another key opens with that key without asking for this one's passphrase.
    let other = env.root.path().join("other.lok.age");
    env.cmd("lokust-shell-snapshot").args(["--encrypt-to", &k.age_pub, "-o"]).arg(&other).assert().success();
    let a = env
        .cmd("lokust-shell")
        .arg("inspect")
        .arg("-i")
        .arg(&locked)
        .arg("-i")
        .arg(&k.age)
        .arg(&other)
        .assert()
        .success();
    assert!(!stderr(&a).to_lowercase().contains("passphrase"), "asked for the wrong key: {}", stderr(&a));
}

#[test]
fn a_tmux_export_sealed_from_the_environment_is_imported_with_the_key() {
    if !tools() || !have("tmux") {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    let project = env.root.path().join("proj");
    make_project(&env, &project);
    let tmux = crate::util::Tmux::start("work", &project, &env.home, "sh");
    let sock = tmux.socket.to_str().unwrap().to_string();
    // No flag: the key binding's environment names the recipient.
    let out = env
        .cmd("lokust-tmux")
        .env("LOKUST_ENCRYPT_TO", &k.age_pub)
        .args(["-S", &sock, "export", "--bundle", "-t", "work:0.0"])
        .assert()
        .success();
    let path = PathBuf::from(String::from_utf8_lossy(&out.get_output().stdout).trim());
    assert!(path.to_string_lossy().ends_with(".lok.age"), "{}", path.display());
    assert!(path.starts_with(env.home.join(".local/state/lokust/exports")));
    let doc: serde_json::Value = serde_json::from_slice(&age_decrypt(&k.age, &path)).unwrap();
    assert_eq!(doc["bundle"]["kind"], "claude-code-project");
    wipe(&env);

    let target = env.root.path().join("moved");
    env.cmd("lokust-tmux")
        .args(["-S", &sock, "import", "--session", "back", "--to"])
        .arg(&target)
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("none of the keys tried"));
    assert!(!target.exists());
    let out = env
        .cmd("lokust-tmux")
        .args(["-S", &sock, "import", "--session", "back", "-i"])
        .arg(&k.age)
        .arg("--to")
        .arg(&target)
        .arg(&path)
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout).trim(), "back");
    assert!(slot_of(&env, &target).join(format!("{SESSION}.jsonl")).is_file());
}

/// The prompt hook seals its live file when the environment names a recipient, keeps
/// the session across refreshes when the user's own key opens the last one, and never
/// asks for anything.
#[test]
fn the_prompt_hooks_live_file_is_sealed_from_the_environment() {
    if !tools() {
        return;
    }
    let env = TestEnv::new();
    let k = keys(&env);
    fs::create_dir_all(env.home.join(".ssh")).unwrap();
    fs::copy(&k.ed, env.home.join(".ssh/id_ed25519")).unwrap();
    let live = env.home.join(".local/state/lokust/live/4242.lok");
    let refresh = |history: &str| {
        env.cmd("lokust-shell-snapshot")
            .env("LOKUST_ENCRYPT_TO", &k.ed_pub)
            .args(["--live", "4242", "--shell", "zsh", "--history-from", "-"])
            .write_stdin(history.to_string())
            .assert()
            .success()
            .stdout("")
            .stderr("");
    };
    refresh("echo first\0");
    let bytes = fs::read(&live).unwrap();
    assert!(bytes.starts_with(b"age-encryption.org/v1\n"));
    assert!(!String::from_utf8_lossy(&bytes).contains("echo first"));
    assert_eq!(lokust::fsutil::mode(&live).unwrap(), 0o600);
    let first: serde_json::Value = serde_json::from_slice(&age_decrypt(&k.ed, &live)).unwrap();
    refresh("echo second\0");
    let second: serde_json::Value = serde_json::from_slice(&age_decrypt(&k.ed, &live)).unwrap();
    assert_eq!(second["shell"]["history_tail"], serde_json::json!(["echo second"]));
    assert_eq!(first["session"]["id"], second["session"]["id"], "one shell, one session id");
    // --latest opens it with the usual key.
    let a = env.cmd("lokust-shell").args(["inspect", "--latest"]).assert().success();
    assert!(String::from_utf8_lossy(&a.get_output().stdout).contains("echo second"));
}

/// Ctrl-C at a passphrase prompt ends the program and leaves the terminal echoing, as
/// it was: a shell left without echo looks broken to whoever typed.
#[test]
fn ctrl_c_at_the_passphrase_prompt_turns_echo_back_on() {
    if !have("python3") {
        return;
    }
    const DRIVER: &str = r#"
import os, pty, sys, select, time, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b""
deadline = time.time() + 30
while b"Passphrase" not in seen and time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 1)
    if r:
        seen += os.read(fd, 4096)
time.sleep(0.3)
os.write(fd, b"\x03")
_, status = os.waitpid(pid, 0)
echo = termios.tcgetattr(fd)[3] & termios.ECHO
print("signal" if os.WIFSIGNALED(status) else "exit", "echo-on" if echo else "echo-off")
"#;
    let env = TestEnv::new();
    let file = env.root.path().join("never.lok.age");
    let snapshot = assert_cmd::cargo::cargo_bin("lokust-shell-snapshot");
    let out = Command::new("python3")
        .arg("-c")
        .arg(DRIVER)
        .arg(&snapshot)
        .args(["--passphrase", "-o"])
        .arg(&file)
        .env("HOME", &env.home)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.trim(), "signal echo-on", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!file.exists());
}
