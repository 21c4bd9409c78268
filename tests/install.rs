//! Installed as a user would install it: `cargo install --path .` yields the four
//! binaries, and the package carries what they need beside them (man pages, the shell
//! hooks, the tmux plugin file, the format's documents and schemas).

use std::path::Path;
use std::process::Command;

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // The build the tests already made: installing reuses it rather than building anew.
    c.env("CARGO_TARGET_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    c
}

#[test]
fn cargo_install_yields_the_four_binaries() {
    let root = tempfile::tempdir().unwrap();
    let out = cargo()
        .args(["install", "--debug", "--locked", "--offline", "--quiet", "--path"])
        .arg(env!("CARGO_MANIFEST_DIR"))
        .arg("--root")
        .arg(root.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo install failed:\n{}", String::from_utf8_lossy(&out.stderr));
    for bin in ["lokust-shell", "lokust-shell-snapshot", "lokust-shell-restore", "lokust-tmux"] {
        let path = root.path().join("bin").join(bin);
        let version = Command::new(&path).arg("--version").output().unwrap();
        assert!(version.status.success(), "{bin} --version");
        assert!(String::from_utf8_lossy(&version.stdout).starts_with(bin), "{bin}");
    }
}

#[test]
fn the_package_carries_what_a_user_needs_and_no_fixtures() {
    let out = cargo()
        .args(["package", "--list", "--locked", "--offline", "--allow-dirty"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list = String::from_utf8_lossy(&out.stdout);
    let files: Vec<&str> = list.lines().collect();
    for need in [
        "man/lokust-shell.1",
        "man/lokust-tmux-import.1",
        "shell-hooks/lokust.zsh",
        "shell-hooks/lokust.bash",
        "shell-hooks/lokust.fish",
        "shell-hooks/lokust.tmux",
        "docs/format.md",
        "schema/lok.schema.json",
        "schema/session-event.schema.json",
        "README.md",
        "SECURITY.md",
        "Cargo.lock",
    ] {
        assert!(files.contains(&need), "{need} is not in the package:\n{list}");
    }
    assert!(!files.iter().any(|f| f.starts_with("fixtures/") || f.starts_with("tests/")), "{list}");
}
