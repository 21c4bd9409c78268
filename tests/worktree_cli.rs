//! Issue 14 through the built binaries: `lokust-shell-snapshot --bundle` in a checkout with
//! unfinished work carries it beside the conversation, and `lokust-shell-restore` lays it
//! on a fresh clone (or clones with --clone), refusing what would destroy something.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::claude::{SESSION, make_project, snapshot};
use crate::util::work::{git, scenario, state, write};
use crate::util::{TestEnv, stderr, stdout};

/// The issue's scenario with a Claude Code project in the checkout, snapshotted.
fn snapshotted(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf, String) {
    let (origin, work) = scenario(env.root.path());
    make_project(env, &work);
    let (lok, summary) = snapshot(env, &work, &[]);
    (origin, work, lok, summary)
}

/// The target's git state equals the original's, the file holding a token aside (it stays
/// behind by design).
fn assert_same_work(target: &Path, work: &Path) {
    let _ = fs::remove_file(work.join("deploy.env"));
    let (got, want) = (state(target), state(work));
    for (i, what) in ["HEAD", "branch", "index", "work tree", "untracked files"].iter().enumerate() {
        assert_eq!(String::from_utf8_lossy(&got[i]), String::from_utf8_lossy(&want[i]), "{what} differs");
    }
}

fn restore(env: &TestEnv, lok: &Path, to: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    env.cmd("lokust-shell-restore").arg(lok).arg("--to").arg(to).args(extra).assert()
}

#[test]
fn unfinished_work_travels_with_the_conversation_and_lands_byte_for_byte() {
    let env = TestEnv::new();
    let (origin, work, lok, summary) = snapshotted(&env);
    assert!(summary.contains("git work:    2 commits unpushed"), "{summary}");
    assert!(summary.contains("deploy.env stays behind") && summary.contains("secret"), "{summary}");
    let text = fs::read_to_string(&lok).unwrap();
    assert!(!text.contains("ghp_aB3dE5fG7hJ9"), "a token entered the file");
    let listing = stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(listing.contains("add c") && listing.contains("notes/todo.txt"), "{listing}");
    assert!(listing.contains("deploy.env"), "{listing}");

    let target = env.root.path().join("new place/ünï cödé");
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    git(env.root.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let plan = stdout(&restore(&env, &lok, &target, &["--dry-run"]).success());
    assert!(plan.contains("fetch 2 unpushed commits") && plan.contains("check out branch feature"), "{plan}");
    // Each untracked file is listed with the path it would be written at.
    let real = fs::canonicalize(&target).unwrap();
    assert!(plan.contains(&format!("→ {}/notes/todo.txt", real.display())), "{plan}");
    assert_eq!(
        git(&target, &["rev-parse", "--abbrev-ref", "HEAD"]),
        b"main\n",
        "a dry run changed the checkout"
    );

    let out = stdout(&restore(&env, &lok, &target, &[]).success());
    assert!(out.contains("git work laid on"), "{out}");
    assert_same_work(&target, &work);
    assert!(!target.join("debug.log").exists(), "an ignored file travelled");
    assert!(!target.join("deploy.env").exists(), "the file holding a token travelled");
    // The conversation came too, for the new path.
    let real = fs::canonicalize(&target).unwrap();
    let slot = lokust::capture::claude::slot_name(real.to_str().unwrap());
    assert!(env.home.join(".claude/projects").join(slot).join(format!("{SESSION}.jsonl")).exists());
    // Next steps come after the work is in place, so they describe the checkout as it is.
    let next = &out[out.find("Next:").expect("next steps")..];
    assert!(next.contains("as in the snapshot") && next.contains("claude --resume"), "{next}");
}

#[test]
fn a_checkout_with_its_own_edits_is_kept_whole_unless_forced_and_force_keeps_them() {
    let env = TestEnv::new();
    let (origin, work, lok, _) = snapshotted(&env);
    let target = env.root.path().join("target");
    git(env.root.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    write(&target, "src/lib.rs", b"an edit of the receiver's own\n");
    let before = state(&target);
    let a = restore(&env, &lok, &target, &[]).code(2);
    assert!(stderr(&a).contains("has uncommitted changes of its own"), "{}", stderr(&a));
    assert_eq!(state(&target), before, "the receiver's edit was touched");
    // The conversation was restored all the same.
    assert!(stdout(&a).contains("Restored into"), "{}", stdout(&a));

    let a = restore(&env, &lok, &target, &["--force"]).success();
    assert!(stdout(&a).contains("stash"), "{}", stdout(&a));
    assert_same_work(&target, &work);
    let stashed = git(&target, &["stash", "show", "-p", "stash@{0}"]);
    assert!(
        String::from_utf8_lossy(&stashed).contains("an edit of the receiver's own"),
        "the edit is not recoverable"
    );
}

#[test]
fn clone_makes_the_checkout_and_without_it_restore_names_the_command() {
    let env = TestEnv::new();
    let (_, work, lok, _) = snapshotted(&env);
    let target = env.root.path().join("fresh");
    let out = stdout(&restore(&env, &lok, &target, &[]).success());
    assert!(out.contains("has no checkout") && out.contains("git clone -- "), "{out}");
    fs::remove_dir_all(&target).unwrap();
    let out = stdout(&restore(&env, &lok, &target, &["--clone"]).success());
    assert!(out.contains("clone "), "{out}");
    assert_same_work(&target, &work);
}

#[test]
fn a_hostile_remote_is_never_cloned_nor_suggested() {
    let env = TestEnv::new();
    let (_, _, lok, _) = snapshotted(&env);
    // The element's tar says what the remote is: rewrite it to a transport helper.
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(&lok).unwrap()).unwrap();
    let element =
        doc["bundles"].as_array_mut().unwrap().iter_mut().find(|e| e["kind"] == "git-worktree").unwrap();
    let carried = lokust::worktree::read_element(element.as_object().unwrap(), 1 << 30).unwrap();
    let canary = env.root.path().join("pwned");
    let mut meta = carried.meta.clone();
    meta.remote = Some(format!("ext::sh -c touch% {}", canary.display()));
    let mut tar = tar::Builder::new(Vec::new());
    let meta_json = serde_json::to_vec(&meta).unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_size(meta_json.len() as u64);
    h.set_mode(0o600);
    tar.append_data(&mut h, "meta.json", &meta_json[..]).unwrap();
    let tar = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
    element["data"] = data.clone().into();
    element["base64_bytes"] = data.len().into();
    element["uncompressed_bytes"] = tar.len().into();
    element["remote"] = meta.remote.clone().into();
    let hostile = env.root.path().join("hostile.lok");
    fs::write(&hostile, serde_json::to_vec(&doc).unwrap()).unwrap();
    for extra in [&[][..], &["--clone"][..]] {
        let target = env.root.path().join(format!("t{}", extra.len()));
        let a = restore(&env, &hostile, &target, extra);
        let said = format!("{}{}", stdout(&a), stderr(&a));
        assert!(said.contains("not a URL lokust will clone"), "{extra:?}: {said}");
        assert!(!said.contains("git clone -- ext::"), "{extra:?}: suggested running it");
        assert!(!canary.exists(), "{extra:?}: the transport helper ran");
        assert!(
            fs::read_dir(&target).map(|mut d| d.next().is_none()).unwrap_or(true),
            "{extra:?}: wrote into the target"
        );
    }
}

/// Someone else's `.lok` must not plant what an agent runs in a checkout the user already
/// trusts: carried work that adds a Claude Code hook or an MCP server is not laid unless
/// `--trust-config`.
#[test]
fn carried_work_that_plants_agent_configuration_needs_trust_config() {
    let env = TestEnv::new();
    let (origin, work) = scenario(env.root.path());
    let _ = fs::remove_file(work.join("deploy.env"));
    write(
        &work,
        ".claude/settings.json",
        br#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/x"}]}]}}"#,
    );
    write(&work, ".mcp.json", br#"{"mcpServers":{"x":{"command":"sh","args":["-c","true"]}}}"#);
    make_project(&env, &work);
    let (lok, _) = snapshot(&env, &work, &[]);
    let target = env.root.path().join("target");
    git(env.root.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let before = state(&target);
    let a = restore(&env, &lok, &target, &[]).code(2);
    let err = stderr(&a);
    assert!(
        err.contains(".claude/settings.json") && err.contains(".mcp.json") && err.contains("--trust-config"),
        "{err}"
    );
    assert_eq!(state(&target), before, "something was laid");
    assert!(!target.join(".claude/settings.json").exists());
    restore(&env, &lok, &target, &["--trust-config"]).success();
    assert_same_work(&target, &work);
}
