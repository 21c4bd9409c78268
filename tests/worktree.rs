//! Issue 14: the work only this machine has — unpushed commits, staged, unstaged and new
//! files — carried by the `git-worktree` payload and laid on a fresh clone, through real git.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use lokust::worktree::{self, ApplyOptions, CaptureOptions};

use crate::util::work::{git, scenario, state, write};

fn carry(work: &Path) -> worktree::Carried {
    let cap = worktree::capture(work, &CaptureOptions::default()).unwrap().expect("a repository");
    let tar = cap.write_tar(Vec::new()).unwrap();
    worktree::read_tar(&tar[..], worktree::DEFAULT_MAX_BYTES).unwrap()
}

#[test]
fn the_issue_scenario_round_trips_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    let m = &cap.meta;
    assert_eq!(m.branch.as_deref(), Some("feature"));
    assert_eq!(m.commits.iter().map(|c| c.subject.as_str()).collect::<Vec<_>>(), ["add c", "add b"]);
    assert!(m.files.iter().any(|f| f.path == "notes/todo.txt" && f.state == "untracked"));
    assert!(!m.files.iter().any(|f| f.path == "debug.log"), "ignored files never travel");
    assert!(
        m.left_out.iter().any(|l| l.path == "deploy.env" && l.why.contains("secret")),
        "{:?}",
        m.left_out
    );
    let tar = cap.write_tar(Vec::new()).unwrap();
    assert!(!tar.windows(10).any(|w| w == b"ghp_aB3dE5"), "the token never enters the payload");
    let carried = worktree::read_tar(&tar[..], worktree::DEFAULT_MAX_BYTES).unwrap();

    let target = tmp.path().join("new place é ü");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    let plan = carried.plan(&target, &opts).unwrap();
    carried.apply(&plan, &opts).unwrap();

    fs::remove_file(work.join("deploy.env")).unwrap();
    let original = state(&work);
    let cached = String::from_utf8_lossy(&original[2]);
    assert!(
        cached.contains("rename to new_name.txt")
            && cached.contains("GIT binary patch")
            && cached.contains("deleted file"),
        "{cached}"
    );
    assert!(
        String::from_utf8_lossy(&original[3]).contains("new mode 100755"),
        "the scenario has an unstaged mode change"
    );
    assert_eq!(state(&target), original);
    assert!(!target.join("debug.log").exists());
    assert!(fs::symlink_metadata(target.join("lib-link")).unwrap().file_type().is_symlink());
    assert_eq!(fs::metadata(target.join("run.sh")).unwrap().permissions().mode() & 0o111, 0o111);
}

#[test]
fn a_target_with_its_own_edits_is_refused_and_force_keeps_a_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let carried = carry(&work);
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    write(&target, "README.md", b"my own edit\n");
    write(&target, "mine.txt", b"my own file\n");
    let before = state(&target);

    let err = carried.plan(&target, &ApplyOptions::default()).unwrap_err().to_string();
    assert!(err.contains("uncommitted changes") && err.contains("--force"), "{err}");
    assert_eq!(state(&target), before, "a refused restore leaves the target whole");

    let force = ApplyOptions { force: true, ..ApplyOptions::default() };
    let plan = carried.plan(&target, &force).unwrap();
    let applied = carried.apply(&plan, &force).unwrap();
    assert!(applied.saved.iter().any(|s| s.contains("stash")), "{:?}", applied.saved);
    // The saved edits come back from the stash.
    let stash = git(&target, &["stash", "show", "-p", "--include-untracked", "stash@{0}"]);
    let stash = String::from_utf8_lossy(&stash);
    assert!(stash.contains("my own edit") && stash.contains("my own file"), "{stash}");
}

#[test]
fn a_diverged_branch_is_refused_and_force_keeps_it_on_a_backup_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let carried = carry(&work);
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    git(&target, &["checkout", "-q", "-b", "feature"]);
    write(&target, "other.txt", b"their commit\n");
    git(&target, &["add", "other.txt"]);
    git(&target, &["-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "theirs"]);
    let theirs = git(&target, &["rev-parse", "HEAD"]);

    let err = carried.plan(&target, &ApplyOptions::default()).unwrap_err().to_string();
    assert!(err.contains("branch feature") && err.contains("lose commits"), "{err}");
    let force = ApplyOptions { force: true, ..ApplyOptions::default() };
    let applied = carried.apply(&carried.plan(&target, &force).unwrap(), &force).unwrap();
    let backup =
        applied.saved.iter().find_map(|s| s.strip_prefix("branch ")).unwrap().split(' ').next().unwrap();
    assert_eq!(git(&target, &["rev-parse", backup]), theirs);
}

#[test]
fn a_missing_target_names_the_clone_command_and_clone_makes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    let carried = carry(&work);
    let target = tmp.path().join("absent");
    let err = carried.plan(&target, &ApplyOptions::default()).unwrap_err().to_string();
    assert!(err.contains("git clone -- ") && err.contains("--clone"), "{err}");
    assert!(!target.exists());
    let opts = ApplyOptions { clone: true, ..ApplyOptions::default() };
    carried.apply(&carried.plan(&target, &opts).unwrap(), &opts).unwrap();
    fs::remove_file(work.join("deploy.env")).unwrap();
    assert_eq!(state(&target), state(&work));
}

/// A tar with one hostile entry among good ones.
fn hostile(extra: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> anyhow::Result<worktree::Carried> {
    let mut b = tar::Builder::new(Vec::new());
    let meta =
        br#"{"head":"0123456789012345678901234567890123456789","base":null,"branch":"main","remote":null}"#;
    let mut h = tar::Header::new_gnu();
    h.set_size(meta.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "meta.json", &meta[..]).unwrap();
    extra(&mut b);
    worktree::read_tar(&b.into_inner().unwrap()[..], 1 << 20)
}

fn raw_file(b: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    // Written into the header directly so `..` survives the builder's own checks.
    let field = &mut h.as_old_mut().name;
    field[..name.len()].copy_from_slice(name.as_bytes());
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn link(b: &mut tar::Builder<Vec<u8>>, name: &str, target: &str) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    b.append_link(&mut h, name, target).unwrap();
}

type AddEntries = Box<dyn FnOnce(&mut tar::Builder<Vec<u8>>)>;

#[test]
fn hostile_payloads_are_refused_whole() {
    assert!(hostile(|_| {}).is_ok(), "the minimal payload itself is good");
    let cases: Vec<(&str, AddEntries)> = vec![
        ("climbs", Box::new(|b| raw_file(b, "untracked/../../evil", b"x"))),
        (".git", Box::new(|b| raw_file(b, "untracked/.git/hooks/post-checkout", b"#!/bin/sh\n"))),
        (".GIT", Box::new(|b| raw_file(b, "untracked/sub/.GIT/config", b"x"))),
        ("absolute link", Box::new(|b| link(b, "untracked/l", "/etc/passwd"))),
        ("link out", Box::new(|b| link(b, "untracked/a/l", "../../outside"))),
        ("unknown entry", Box::new(|b| raw_file(b, "run-me.sh", b"x"))),
        ("oversize", Box::new(|b| raw_file(b, "untracked/big", &vec![b'a'; 2 << 20]))),
        (
            "file under file",
            Box::new(|b| {
                raw_file(b, "untracked/a", b"x");
                raw_file(b, "untracked/a/b", b"y");
            }),
        ),
        (
            "patch into .git",
            Box::new(|b| {
                raw_file(
                    b,
                    "index.patch",
                    b"diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n",
                )
            }),
        ),
        (
            "patch climbs",
            Box::new(|b| raw_file(b, "worktree.patch", b"diff --git a/../x b/../x\nnew file mode 100644\n")),
        ),
        (
            "patch link out",
            Box::new(|b| {
                raw_file(b, "index.patch", b"diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../../etc\n\\ No newline at end of file\n")
            }),
        ),
        (
            "device",
            Box::new(|b| {
                let mut h = tar::Header::new_gnu();
                h.set_entry_type(tar::EntryType::Char);
                h.set_size(0);
                b.append_data(&mut h, "untracked/dev", &[][..]).unwrap();
            }),
        ),
    ];
    for (what, add) in cases {
        assert!(hostile(add).is_err(), "{what} was accepted");
    }
}

#[test]
fn a_bad_patch_changes_nothing_in_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    let tar = cap.write_tar(Vec::new()).unwrap();
    // Re-pack with a worktree patch that does not fit the carried head.
    let mut a = tar::Archive::new(&tar[..]);
    let mut b = tar::Builder::new(Vec::new());
    for e in a.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut data).unwrap();
        if name == "worktree.patch" {
            data = b"diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-not there\n+x\n".to_vec();
        }
        let mut h = e.header().clone();
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append_data(&mut h, &name, &data[..]).unwrap();
    }
    let carried = worktree::read_tar(&b.into_inner().unwrap()[..], worktree::DEFAULT_MAX_BYTES).unwrap();
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let before = state(&target);
    let opts = ApplyOptions::default();
    // Found by the plan now, so a dry run shows it too.
    let err = carried.plan(&target, &opts).and_then(|plan| carried.apply(&plan, &opts)).unwrap_err();
    assert!(format!("{err:#}").contains("does not apply"), "{err:#}");
    assert_eq!(state(&target), before);
}

#[test]
fn the_ceiling_leaves_untracked_files_out_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    write(&work, "big.dat", &vec![7u8; 200_000]);
    let opts = CaptureOptions { max_bytes: 100_000, ..CaptureOptions::default() };
    let cap = worktree::capture(&work, &opts).unwrap().unwrap();
    assert!(
        cap.meta.left_out.iter().any(|l| l.path == "big.dat" && l.why.contains("ceiling")),
        "{:?}",
        cap.meta.left_out
    );
    assert!(cap.meta.files.iter().any(|f| f.path == "notes/todo.txt"));
}

#[test]
fn a_secret_in_an_unpushed_commit_keeps_the_work_home_and_names_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    write(&work, "conf/ci.yml", b"token: ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\n");
    git(&work, &["add", "conf/ci.yml"]);
    git(&work, &["commit", "-qm", "ci config"]);
    let err = worktree::capture(&work, &CaptureOptions::default()).err().expect("refused").to_string();
    assert!(err.contains("ci config") && err.contains("conf/ci.yml") && err.contains("secret"), "{err}");
    assert!(!err.contains("ghp_"), "the message never shows the secret: {err}");
}

#[test]
fn links_out_of_the_checkout_stay_behind_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    symlink("/etc/passwd", work.join("staged-out")).unwrap();
    git(&work, &["add", "staged-out"]);
    symlink("../../elsewhere", work.join("notes/untracked-out")).unwrap();
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    for p in ["staged-out", "notes/untracked-out"] {
        assert!(
            cap.meta.left_out.iter().any(|l| l.path == p && l.why.contains("link")),
            "{p}: {:?}",
            cap.meta.left_out
        );
    }
    // What remains still restores.
    let tar = cap.write_tar(Vec::new()).unwrap();
    let carried = worktree::read_tar(&tar[..], worktree::DEFAULT_MAX_BYTES).unwrap();
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    carried.apply(&carried.plan(&target, &opts).unwrap(), &opts).unwrap();
    assert!(fs::symlink_metadata(target.join("staged-out")).is_err());
    assert!(target.join("notes/todo.txt").exists());
}

#[test]
fn an_untracked_file_below_a_link_in_the_target_is_refused_before_anything_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let carried = carry(&work);
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    // An ignored link where the carried notes/ folder goes.
    write(&target, ".git/info/exclude", b"notes\n");
    symlink(&outside, target.join("notes")).unwrap();
    let before = state(&target);
    let opts = ApplyOptions { force: true, ..ApplyOptions::default() };
    let result = carried.plan(&target, &opts).and_then(|plan| carried.apply(&plan, &opts));
    assert!(result.is_err(), "a write through the link was not refused");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "nothing lands outside");
    assert_eq!(state(&target), before);
}

#[test]
fn a_detached_head_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    git(&work, &["stash", "-q", "--include-untracked"]);
    git(&work, &["checkout", "-q", "--detach", "HEAD~1"]);
    write(&work, "README.md", b"detached edit\n");
    let carried = carry(&work);
    assert_eq!(carried.meta.branch, None);
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    carried.apply(&carried.plan(&target, &opts).unwrap(), &opts).unwrap();
    let head = |d: &Path| git(d, &["rev-parse", "HEAD"]);
    assert_eq!(head(&target), head(&work));
    assert_eq!(git(&target, &["diff"]), git(&work, &["diff"]));
}

#[test]
fn the_element_streams_into_json_and_back_and_inspect_names_what_travels() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    let mut json = Vec::new();
    let stats = worktree::write_element(&cap, &mut json).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&json).expect("the element is JSON");
    let element = value.as_object().unwrap();
    assert_eq!(element["kind"], "git-worktree");
    assert_eq!(element["branch"], "feature");
    assert_eq!(element["base64_bytes"], stats.base64_bytes);
    assert_eq!(element["data"].as_str().unwrap().len() as u64, stats.base64_bytes);
    let carried = worktree::read_element(element, worktree::DEFAULT_MAX_BYTES).unwrap();
    let shown = carried.describe(None).unwrap().join("\n");
    for needle in
        ["add b", "add c", "staged", "unstaged", "untracked", "notes/todo.txt", "deploy.env: holds a secret"]
    {
        assert!(shown.contains(needle), "{needle} missing from:\n{shown}");
    }
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    carried.apply(&carried.plan(&target, &opts).unwrap(), &opts).unwrap();
    fs::remove_file(work.join("deploy.env")).unwrap();
    assert_eq!(state(&target), state(&work));
}

#[test]
fn an_element_that_inflates_past_the_ceiling_is_refused() {
    use base64::Engine;
    use std::io::Write;
    // 64 MB of one byte in a single untracked file, compressed to almost nothing.
    let mut tar = tar::Builder::new(Vec::new());
    let big = vec![b'a'; 64 << 20];
    let mut h = tar::Header::new_gnu();
    h.set_size(big.len() as u64);
    h.set_mode(0o644);
    tar.append_data(&mut h, "untracked/bomb", &big[..]).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
    let element = serde_json::json!({"kind": "git-worktree", "format": "tar.gz+base64",
        "base64_bytes": data.len(), "data": data});
    let err = worktree::read_element(element.as_object().unwrap(), 1 << 20).err().expect("refused");
    assert!(format!("{err:#}").contains("over"), "{err:#}");
}

/// The blobs of changed files are read in one batch; two files with the same content
/// share one blob, and each must still be checked and left behind.
#[test]
fn two_staged_files_with_the_same_secret_both_stay_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, work) = scenario(tmp.path());
    let secret = b"token = \"ghp_Qz8Lm3Vn6Rt9Wk2Pd5Fs7Jb0Gc4Ya8Ue1Io3Nw\"\n";
    write(&work, "a/one.toml", secret);
    write(&work, "b/two.toml", secret);
    git(&work, &["add", "a/one.toml", "b/two.toml"]);
    // Only the index holds it now: the files on disk were edited since.
    write(&work, "a/one.toml", b"token = \"$TOKEN\"\n");
    write(&work, "b/two.toml", b"token = \"$TOKEN\"\n");
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    for p in ["a/one.toml", "b/two.toml"] {
        assert!(cap.meta.left_out.iter().any(|l| l.path == p), "{p} travelled: {:?}", cap.meta.left_out);
    }
    let tar = cap.write_tar(Vec::new()).unwrap();
    assert!(!tar.windows(12).any(|w| w == b"ghp_Qz8Lm3Vn"), "a token entered the payload");
}

/// A payload whose meta.json is `meta`, with nothing else.
fn with_meta(meta: &str) -> anyhow::Result<worktree::Carried> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(meta.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "meta.json", meta.as_bytes()).unwrap();
    worktree::read_tar(&b.into_inner().unwrap()[..], 1 << 20)
}

#[test]
fn a_hostile_meta_names_no_option_and_no_transport_helper() {
    let id = "0123456789012345678901234567890123456789";
    for bad in [
        format!(r#"{{"head":"{id}","branch":"--upload-pack=touch x"}}"#),
        format!(r#"{{"head":"{id}","branch":"a..b"}}"#),
        r#"{"head":"HEAD~1"}"#.to_string(),
        format!(r#"{{"head":"{id}","base":"--all"}}"#),
    ] {
        assert!(with_meta(&bad).is_err(), "{bad} was accepted");
    }
    let tmp = tempfile::tempdir().unwrap();
    let opts = ApplyOptions { clone: true, ..ApplyOptions::default() };
    for remote in ["ext::sh -c touch% /tmp/lokust-pwned", "--upload-pack=touch x", "fd::3"] {
        let carried =
            with_meta(&format!(r#"{{"head":"{id}","remote":{}}}"#, serde_json::json!(remote))).unwrap();
        let Err(err) = carried.plan(&tmp.path().join("absent"), &opts) else { panic!("{remote}: accepted") };
        let err = err.to_string();
        assert!(err.contains("not a URL lokust will clone"), "{remote}: {err}");
    }
}

#[test]
fn a_target_edited_between_plan_and_apply_is_not_laid_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    let carried = carry(&work);
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    let plan = carried.plan(&target, &opts).unwrap();
    write(&target, "src/lib.rs", b"an edit made while the restore ran\n");
    let before = state(&target);
    let err = carried.apply(&plan, &opts).unwrap_err().to_string();
    assert!(err.contains("changed while restoring"), "{err}");
    assert_eq!(state(&target), before);
}

#[test]
fn a_staged_or_edited_file_holding_a_secret_stays_behind_and_the_rest_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let (origin, work) = scenario(tmp.path());
    write(&work, "config/prod.toml", b"api_key = \"sk-proj-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9\"\n");
    git(&work, &["add", "config/prod.toml"]);
    // A tracked file edited to hold one: its unstaged change stays behind too.
    write(
        &work,
        "src/lib.rs",
        b"pub fn a() {}\npub fn b() {}\nconst T: &str = \"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\";\n",
    );
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    for p in ["config/prod.toml", "src/lib.rs"] {
        assert!(
            cap.meta.left_out.iter().any(|l| l.path == p && l.why.contains("secret")),
            "{p}: {:?}",
            cap.meta.left_out
        );
    }
    let tar = cap.write_tar(Vec::new()).unwrap();
    for token in [&b"sk-proj-aB3d"[..], b"ghp_aB3dE5"] {
        assert!(!tar.windows(token.len()).any(|w| w == token), "a token entered the payload");
    }
    let carried = worktree::read_tar(&tar[..], worktree::DEFAULT_MAX_BYTES).unwrap();
    let target = tmp.path().join("target");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let opts = ApplyOptions::default();
    carried.apply(&carried.plan(&target, &opts).unwrap(), &opts).unwrap();
    assert!(!target.join("config/prod.toml").exists());
    assert_eq!(
        fs::read(target.join("src/lib.rs")).unwrap(),
        b"pub fn a() {}\npub fn b() {}\n",
        "as committed"
    );
    assert_eq!(fs::read(target.join("README.md")).unwrap(), fs::read(work.join("README.md")).unwrap());
}

/// Why the git work of `work` is not carried; `what` names the case when it is.
fn refusal(work: &Path, what: &str) -> String {
    match worktree::capture(work, &CaptureOptions::default()) {
        Ok(_) => panic!("{what}: the git work was carried"),
        Err(e) => format!("{e:#}"),
    }
}

/// Makes one commit in the checkout it is given.
type MakeCommit<'a> = Box<dyn Fn(&Path) -> Vec<u8> + 'a>;

/// A commit carries its message and every file it adds, text or not, under the file's
/// name: a secret in any of them travels inside the git bundle, which cannot be redacted
/// without rewriting history. Each refuses the git work, and the refusal never shows it.
#[test]
fn a_secret_in_a_commit_message_a_binary_file_or_a_file_name_keeps_the_work_home() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let cases: [(&str, MakeCommit); 4] = [
        (
            "the subject",
            Box::new(|w| git(w, &["commit", "-q", "--allow-empty", "-m", &format!("use {token}")])),
        ),
        (
            "the body",
            Box::new(|w| {
                git(
                    w,
                    &["commit", "-q", "--allow-empty", "-m", "deploy", "-m", "db password: Xq7#vR2!mK9pL4wZ"],
                )
            }),
        ),
        (
            "a binary file",
            Box::new(|w| {
                let mut bytes = vec![0u8, 1, 2, 0xff, 0];
                bytes.extend_from_slice(format!("\nGITHUB_TOKEN={token}\n").as_bytes());
                bytes.extend([0u8, 0xfe, 0]);
                write(w, "assets/blob.bin", &bytes);
                git(w, &["add", "assets/blob.bin"]);
                git(w, &["commit", "-qm", "add blob"])
            }),
        ),
        (
            "a file's name",
            Box::new(|w| {
                write(w, &format!("keys/{token}.txt"), b"nothing here\n");
                git(w, &["add", "keys"]);
                git(w, &["commit", "-qm", "add keys"])
            }),
        ),
    ];
    for (what, make) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (_origin, work) = scenario(tmp.path());
        make(&work);
        let err = refusal(&work, what);
        assert!(err.contains("secret"), "{what}: {err}");
        assert!(!err.contains("ghp_aB3d") && !err.contains("Xq7#vR2"), "{what}: the refusal shows it: {err}");
    }
}

/// A changed or untracked file whose name holds a secret stays behind, named redacted:
/// the name is in the payload's tar and in what `inspect` prints.
#[test]
fn a_changed_or_untracked_file_whose_name_holds_a_secret_stays_behind_unnamed() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    write(&work, &format!("staged-{token}.txt"), b"staged\n");
    git(&work, &["add", &format!("staged-{token}.txt")]);
    write(&work, &format!("notes/{token}"), b"untracked\n");
    let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
    let left: Vec<&str> = cap.meta.left_out.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left.iter().filter(|p| p.contains("[REDACTED")).count(), 2, "{left:?}");
    let tar = cap.write_tar(Vec::new()).unwrap();
    assert!(!tar.windows(8).any(|w| w == b"ghp_aB3d"), "a name holding the token entered the payload");
    // The rest still travels.
    assert!(cap.meta.files.iter().any(|f| f.path == "notes/todo.txt"));
}

/// `inspect` prints what a stranger's `.lok` says of its git work: commit subjects, file
/// names and the branch pass the redactor first, whoever wrote them.
#[test]
fn inspect_redacts_what_a_strangers_git_work_says() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let meta = format!(
        r#"{{"head":"0123456789abcdef0123456789abcdef01234567","branch":"fix-{token}",
        "commits":[{{"id":"0123456789abcdef0123456789abcdef01234567","subject":"token {token}"}}],
        "left_out":[{{"path":"secret-{token}","why":"holds {token}"}}]}}"#
    );
    let carried = with_meta(&meta).unwrap();
    let shown = carried.describe(None).unwrap().join("\n");
    assert!(!shown.contains("ghp_aB3d"), "{shown}");
    assert!(shown.contains("[REDACTED"), "{shown}");
}

/// A change carries both its sides: a token taken out of a pushed file is in the patch's
/// `-` lines, and a deletion's are all `-`. Staged, unstaged, deleted: the change stays
/// behind, named, and the token is nowhere in the payload.
#[test]
fn a_secret_a_change_takes_away_stays_behind_with_it() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    type Change<'a> = Box<dyn Fn(&Path) + 'a>;
    let cases: [(&str, Change); 3] = [
        (
            "staged",
            Box::new(|w| {
                write(w, "cfg.py", b"x = 1\ny = 2\n");
                git(w, &["add", "cfg.py"]);
            }),
        ),
        ("unstaged", Box::new(|w| write(w, "cfg.py", b"x = 1\ny = 2\n"))),
        ("deleted", Box::new(|w| drop(git(w, &["rm", "-q", "cfg.py"])))),
    ];
    for (what, change) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (_origin, work) = scenario(tmp.path());
        write(&work, "cfg.py", format!("x = 1\ntoken = \"{token}\"\ny = 2\n").as_bytes());
        git(&work, &["add", "cfg.py"]);
        git(&work, &["commit", "-qm", "cfg"]);
        git(&work, &["push", "-q", "origin", "feature"]);
        change(&work);
        let cap = worktree::capture(&work, &CaptureOptions::default()).unwrap().unwrap();
        assert!(cap.meta.left_out.iter().any(|l| l.path == "cfg.py"), "{what}: {:?}", cap.meta.left_out);
        let tar = cap.write_tar(Vec::new()).unwrap();
        assert!(!tar.windows(8).any(|w| w == b"ghp_aB3d"), "{what}: the token entered the payload");
    }
}

/// What the bundle packs is what is judged: a merge's own resolution, a commit's author,
/// a root commit hidden by `log.showRoot=false`, a commit hidden behind `git replace`.
#[test]
fn a_secret_anywhere_in_a_commit_the_bundle_packs_keeps_the_work_home() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let refused = |work: &Path, what: &str| {
        let err = refusal(work, what);
        assert!(err.contains("secret") && !err.contains("ghp_aB3d"), "{what}: {err}");
    };
    // A merge whose resolution adds the secret; both sides are clean.
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    git(&work, &["stash", "-q", "-u"]);
    git(&work, &["checkout", "-q", "-b", "side"]);
    write(&work, "side.txt", b"side\n");
    git(&work, &["add", "side.txt"]);
    git(&work, &["commit", "-qm", "side"]);
    git(&work, &["checkout", "-q", "feature"]);
    git(&work, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
    write(&work, "evil.cfg", format!("token = \"{token}\"\n").as_bytes());
    git(&work, &["add", "evil.cfg"]);
    git(&work, &["commit", "-qm", "merge side"]);
    refused(&work, "a merge's resolution");

    // An author's name.
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    git(&work, &["-c", &format!("user.name={token}"), "commit", "-q", "--allow-empty", "-m", "plain"]);
    refused(&work, "an author's name");

    // The root commit of a repository whose remote has none of its history.
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("fresh");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    git(&work, &["config", "log.showRoot", "false"]);
    write(&work, "c.yml", format!("token: {token}\n").as_bytes());
    git(&work, &["add", "c.yml"]);
    git(&work, &["commit", "-qm", "first"]);
    refused(&work, "a root commit with log.showRoot=false");

    // A commit replaced, for log and show, by a clean one.
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    write(&work, "bad.cfg", format!("token = \"{token}\"\n").as_bytes());
    git(&work, &["add", "bad.cfg"]);
    git(&work, &["commit", "-qm", "bad"]);
    let bad = String::from_utf8(git(&work, &["rev-parse", "HEAD"])).unwrap();
    git(&work, &["reset", "-q", "--soft", "HEAD~1"]);
    git(&work, &["rm", "-q", "--cached", "bad.cfg"]);
    git(&work, &["commit", "-q", "--allow-empty", "-m", "bad"]);
    let good = String::from_utf8(git(&work, &["rev-parse", "HEAD"])).unwrap();
    git(&work, &["reset", "-q", "--hard", bad.trim()]);
    git(&work, &["replace", bad.trim(), good.trim()]);
    refused(&work, "a replaced commit");
}

/// A changed file whose name is not UTF-8 could not be left out of a patch exactly (git
/// is handed names back): the git work is not carried, and says why.
#[test]
fn a_changed_file_whose_name_is_not_utf8_keeps_the_git_work_home() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let (_origin, work) = scenario(tmp.path());
    let name = std::ffi::OsStr::from_bytes(b"sec\xffret.txt");
    std::fs::write(work.join(name), b"token = \"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\"\n").unwrap();
    git(&work, &["add", "-A"]);
    let err = refusal(&work, "a name that is not UTF-8");
    assert!(err.contains("not UTF-8") && !err.contains("ghp_aB3d"), "{err}");
}
