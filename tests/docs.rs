//! Help, man pages and completions come from the clap definitions and stay in step.

use std::path::Path;

use crate::util::schema::check_generated;
use crate::util::{TestEnv, have};

#[test]
fn man_pages_are_current_and_lint_clean() {
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for (name, cmd) in lokust::cli::man_pages() {
        let page = man.join(format!("{name}.1"));
        check_generated(&page, &lokust::cli::render_man(cmd));
    }
    if have("mandoc") {
        for (name, _) in lokust::cli::man_pages() {
            let page = man.join(format!("{name}.1"));
            let out = std::process::Command::new("mandoc")
                .args(["-man", "-Tlint", "-Wwarning"])
                .arg(&page)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && text.trim().is_empty(), "mandoc on {name}.1:\n{text}");
        }
    }
}

#[test]
fn every_long_flag_in_help_is_in_its_man_page() {
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for (name, cmd) in lokust::cli::man_pages() {
        let page = std::fs::read_to_string(man.join(format!("{name}.1"))).unwrap();
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                assert!(
                    page.contains(&format!("\\-\\-{}", long.replace('-', "\\-"))),
                    "--{long} missing from {name}.1"
                );
            }
        }
    }
}

#[test]
fn short_help_fits_and_long_help_lists_the_environment() {
    let env = TestEnv::new();
    for bin in ["lokust-shell", "lokust-shell-snapshot", "lokust-shell-restore"] {
        let out = env.cmd(bin).arg("-h").assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.lines().all(|l| l.chars().count() < 100), "{bin} -h:\n{text}");
        let out = env.cmd(bin).arg("--help").assert().success();
        let long = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(long.contains("LOKUST_TIMEOUT_MS") && long.contains("Exit status"), "{bin} --help:\n{long}");
        assert!(long.len() > text.len());
    }
    // Rare flags hide from -h but show in --help.
    let out = env.cmd("lokust-shell-snapshot").arg("-h").assert().success();
    assert!(!String::from_utf8_lossy(&out.get_output().stdout).contains("--history-file"));
}

#[test]
fn help_works_from_a_deleted_directory() {
    let env = TestEnv::new();
    let bin = assert_cmd::cargo::cargo_bin("lokust-shell-snapshot");
    let script = "mkdir gone && cd gone && rmdir ../gone && exec \"$0\" --help";
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .arg(bin)
        .current_dir(&env.cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--history-lines"));
}

#[test]
fn completions_load_in_each_shell() {
    let env = TestEnv::new();
    for (shell, check) in
        [("bash", vec!["bash", "-n"]), ("zsh", vec!["zsh", "-n"]), ("fish", vec!["fish", "--no-execute"])]
    {
        let out = env.cmd("lokust-shell").args(["completions", shell]).assert().success();
        let script = out.get_output().stdout.clone();
        let text = String::from_utf8_lossy(&script);
        assert!(text.contains("lokust-shell-snapshot") && text.contains("history-lines"), "{shell}");
        if have(check[0]) {
            let file = env.write(format!("completion.{shell}"), &script);
            crate::util::run_ok(std::process::Command::new(check[0]).args(&check[1..]).arg(&file));
        }
    }
}

/// SECURITY.md shows the policy table the code applies, not a list kept by hand.
#[test]
fn security_md_shows_the_policy_table_the_code_applies() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("SECURITY.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- policy table: start -->\n", "<!-- policy table: end -->");
    let from = text.find(start).expect("the start marker") + start.len();
    let to = text.find(end).expect("the end marker");
    let want = lokust::agent::policy().markdown();
    if std::env::var_os("LOKUST_BLESS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert_eq!(&text[from..to], want, "SECURITY.md's policy table is stale; run with LOKUST_BLESS=1");
}

/// docs/format.md names every kind the agent registry writes, so a new agent cannot ship
/// an undocumented element.
#[test]
fn the_format_document_names_every_agents_kind() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format.md")).unwrap();
    for agent in lokust::agent::AGENTS {
        let kind = format!("`{}`", agent.kind());
        assert!(text.matches(&kind).count() >= 2, "docs/format.md lists and describes no {kind}");
    }
}

/// The snapshot's and the restore's long help name every agent the registry holds, so the
/// help cannot describe last month's tool.
#[test]
fn the_long_help_names_every_agent() {
    let env = TestEnv::new();
    for bin in ["lokust-shell-snapshot", "lokust-shell-restore"] {
        let out = env.cmd(bin).arg("--help").assert().success();
        let long = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        for agent in lokust::agent::AGENTS {
            let cmd = agent.id();
            assert!(
                long.contains(agent.name()) || long.contains(cmd),
                "{bin} --help does not name {}",
                agent.name()
            );
        }
    }
}

/// ARCHITECTURE.md and lib.rs stay true: every file or folder they name exists (relative
/// to the repository or to `src/`), and every module of `src/` is named in both.
#[test]
fn the_architecture_names_what_exists_and_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let arch = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    for text in [&arch, &lib] {
        for quoted in text.split('`').skip(1).step_by(2) {
            let path_like = quoted.ends_with(".rs") || (quoted.ends_with('/') && !quoted.contains(' '));
            if !path_like || quoted.contains('<') || quoted.contains('*') {
                continue;
            }
            assert!(
                root.join(quoted).exists() || root.join("src").join(quoted).exists(),
                "{quoted} is named but does not exist"
            );
        }
    }
    for entry in std::fs::read_dir(root.join("src")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name == "lib" {
            continue;
        }
        assert!(
            lib.contains(&format!("pub mod {name};")) && lib.contains(&format!("[`{name}`]"))
                || lib.contains(&format!("`{name}`")),
            "lib.rs does not describe {name}"
        );
        assert!(
            arch.contains(&format!(" {name} "))
                || arch.contains(&format!("{name}/"))
                || arch.contains(&format!("· {name}")),
            "ARCHITECTURE.md does not name {name}"
        );
    }
}

/// The project's code and documents cite what the repository holds (`docs/`), never the
/// research notes it was built from, which a clone does not have.
#[test]
fn nothing_cites_material_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md"), root.join("SECURITY.md")];
    let mut dirs = vec![root.join("src"), root.join("tests"), root.join("benches"), root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                files.push(path);
            }
        }
    }
    // Spelled in parts so that this file does not name them itself.
    let shared = format!("{}/shared", "..");
    let note = format!("{}/", "research");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(&shared), "{} cites {shared}, which a clone does not have", file.display());
        // A note by its file name is a citation; an agent's own folder of that name is not.
        for (at, _) in text.match_indices(&note) {
            let rest = &text[at + note.len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            assert!(
                name.is_empty() || !rest[name.len()..].starts_with(".md"),
                "{} cites {note}{name}.md, which a clone does not have",
                file.display()
            );
        }
    }
}
