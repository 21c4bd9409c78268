use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};

use super::*;

fn conversation(root: &Path, id: &str, rel: &str, data: &[u8]) -> Placement {
    Placement::file(Kind::Conversation, id, root, rel, data.to_vec())
}

fn plan_of(items: Vec<Placement>) -> Plan {
    let mut plan = Plan::new("Agent", "conversation", "store");
    plan.items = items;
    plan
}

#[test]
fn a_new_file_is_private_dated_and_listed_by_the_plan() {
    let home = tempfile::tempdir().unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let plan = plan_of(vec![conversation(home.path(), "a", "s/2026/a.jsonl", b"one").with_mtime(Some(when))]);
    assert_eq!(plan.writes(), [home.path().join("s/2026/a.jsonl")]);
    assert!(plan.describe()[1].contains("a → "), "{:?}", plan.describe());
    let done = apply(&plan, SystemTime::now()).unwrap();
    assert_eq!(done.written, ["a"]);
    let dest = home.path().join("s/2026/a.jsonl");
    assert_eq!(fs::read(&dest).unwrap(), b"one");
    assert_eq!(crate::fsutil::mode(&dest).unwrap(), 0o600);
    assert_eq!(crate::fsutil::mode(&home.path().join("s/2026")).unwrap(), 0o700);
    assert_eq!(fs::metadata(&dest).unwrap().modified().unwrap(), when);
    // Nothing else is left in the folder: no temp file.
    assert_eq!(fs::read_dir(home.path().join("s/2026")).unwrap().count(), 1);
}

#[test]
fn a_link_anywhere_below_the_root_stops_the_write() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), home.path().join("s")).unwrap();
    let plan = plan_of(vec![conversation(home.path(), "a", "s/x/a.jsonl", b"one")]);
    let err = apply(&plan, SystemTime::now()).unwrap_err();
    assert!(format!("{err:#}").contains("is a link or not a folder"), "{err:#}");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);

    // A link at the file's own name is the receiver's: kept, its target untouched.
    let target = elsewhere.path().join("target");
    fs::write(&target, b"theirs").unwrap();
    symlink(&target, home.path().join("b.jsonl")).unwrap();
    let done =
        apply(&plan_of(vec![conversation(home.path(), "b", "b.jsonl", b"ours")]), SystemTime::now()).unwrap();
    assert_eq!(done.kept, ["b"]);
    assert_eq!(fs::read(&target).unwrap(), b"theirs");
}

#[test]
fn a_path_that_climbs_refuses_the_whole_plan_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let plan = plan_of(vec![
        conversation(home.path(), "a", "a.jsonl", b"one"),
        conversation(home.path(), "b", "../b.jsonl", b"two"),
    ]);
    assert!(apply(&plan, SystemTime::now()).is_err());
    assert_eq!(fs::read_dir(home.path()).unwrap().count(), 0);
    let mut folder = conversation(home.path(), "c", "c", b"");
    folder.content = Content::Folder(vec![Entry { rel: "x/../../y".into(), data: vec![], mtime: None }]);
    assert!(apply(&plan_of(vec![folder]), SystemTime::now()).is_err());
}

#[test]
fn a_file_that_appeared_meanwhile_is_kept_and_its_companions_are_skipped() {
    let home = tempfile::tempdir().unwrap();
    fs::write(home.path().join("a.jsonl"), b"theirs").unwrap();
    let plan = plan_of(vec![
        conversation(home.path(), "a", "a.jsonl", b"ours"),
        Placement::file(Kind::Companion, "a", home.path(), "a.settings.json", b"{}".to_vec()),
    ]);
    let done = apply(&plan, SystemTime::now()).unwrap();
    assert_eq!(done.kept, ["a"]);
    assert!(done.written.is_empty());
    assert_eq!(fs::read(home.path().join("a.jsonl")).unwrap(), b"theirs");
    assert!(!home.path().join("a.settings.json").exists());
    // The same bytes: already there.
    let same = apply(&plan_of(vec![conversation(home.path(), "a", "a.jsonl", b"theirs")]), SystemTime::now());
    assert_eq!(same.unwrap().same, 1);
}

#[test]
fn replace_sets_the_receivers_copy_aside_and_never_over_an_earlier_backup() {
    let home = tempfile::tempdir().unwrap();
    let dest = home.path().join("a.jsonl");
    let now = SystemTime::now();
    let mut backups = Vec::new();
    for round in ["first", "second"] {
        fs::write(&dest, round).unwrap();
        let item =
            conversation(home.path(), "a", "a.jsonl", b"ours").with_step(Step::Replace(vec![dest.clone()]));
        let done = apply(&plan_of(vec![item]), now).unwrap();
        assert_eq!(done.written, ["a"]);
        backups.extend(done.backups);
        fs::remove_file(&dest).unwrap();
    }
    assert_eq!(backups.len(), 2);
    assert_ne!(backups[0], backups[1]);
    assert_eq!(fs::read(&backups[0]).unwrap(), b"first");
    assert_eq!(fs::read(&backups[1]).unwrap(), b"second");
}

#[test]
fn a_folder_is_placed_whole_or_kept() {
    let home = tempfile::tempdir().unwrap();
    let entries = vec![
        Entry { rel: "events.jsonl".into(), data: b"e".to_vec(), mtime: None },
        Entry { rel: "files/a.txt".into(), data: b"f".to_vec(), mtime: None },
    ];
    let mut item = conversation(home.path(), "s", "state/s", b"");
    item.content = Content::Folder(entries.clone());
    let done = apply(&plan_of(vec![item]), SystemTime::now()).unwrap();
    assert_eq!(done.written, ["s"]);
    assert_eq!(fs::read(home.path().join("state/s/files/a.txt")).unwrap(), b"f");
    assert_eq!(crate::fsutil::mode(&home.path().join("state/s")).unwrap(), 0o700);

    let mut again = conversation(home.path(), "s", "state/s", b"");
    again.content = Content::Folder(entries);
    let done = apply(&plan_of(vec![again]), SystemTime::now()).unwrap();
    assert_eq!(done.kept, ["s"]);
    assert_eq!(fs::read_dir(home.path().join("state")).unwrap().count(), 1, "no staging folder left");
}

struct Recorder(std::sync::Mutex<Vec<PathBuf>>);

impl Edit for &'static Recorder {
    fn describe(&self) -> String {
        "records".into()
    }

    fn apply(&self, path: &Path) -> anyhow::Result<()> {
        self.0.lock().unwrap().push(path.to_path_buf());
        Ok(())
    }
}

#[test]
fn an_edit_runs_at_its_turn_below_its_root_and_is_reported() {
    static SEEN: Recorder = Recorder(std::sync::Mutex::new(Vec::new()));
    let home = tempfile::tempdir().unwrap();
    let plan = plan_of(vec![
        conversation(home.path(), "a", "a.jsonl", b"one"),
        Placement::edit(Kind::Index, "a", home.path(), "db/index.sqlite", Box::new(&SEEN)),
    ]);
    assert!(plan.describe()[2].ends_with("index.sqlite: records"), "{:?}", plan.describe());
    let done = apply(&plan, SystemTime::now()).unwrap();
    assert_eq!(*SEEN.0.lock().unwrap(), [home.path().join("db/index.sqlite")]);
    assert!(done.report(&plan).iter().any(|l| l.ends_with("index.sqlite: records")));
}

#[test]
fn a_plan_that_cannot_be_written_whole_is_refused_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let long = "x".repeat(256);
    let mut clash = conversation(home.path(), "c", "c", b"");
    clash.content = Content::Folder(vec![
        Entry { rel: "a".into(), data: vec![], mtime: None },
        Entry { rel: "a/b".into(), data: vec![], mtime: None },
    ]);
    for bad in [
        vec![
            conversation(home.path(), "a", "a.jsonl", b"one"),
            conversation(home.path(), "b", long.as_str(), b""),
        ],
        vec![conversation(home.path(), "a", "a.jsonl", b"one"), clash],
        vec![
            conversation(home.path(), "a", "s/a.jsonl", b"one"),
            conversation(home.path(), "b", "s/a.jsonl", b"two"),
        ],
    ] {
        let plan = plan_of(bad);
        assert!(apply(&plan, SystemTime::now()).is_err());
        assert_eq!(fs::read_dir(home.path()).unwrap().count(), 0, "something was written");
    }
}

#[test]
fn a_failed_replace_puts_the_receivers_copy_back() {
    let home = tempfile::tempdir().unwrap();
    let theirs = home.path().join("state/s");
    fs::create_dir_all(&theirs).unwrap();
    fs::write(theirs.join("events.jsonl"), b"theirs").unwrap();
    // Their copy is named in the plan, but something else is at the placement's own
    // name: the rename in fails, and their copy must come back.
    let mut item = conversation(home.path(), "s", "state/t", b"");
    item.content =
        Content::Folder(vec![Entry { rel: "events.jsonl".into(), data: b"ours".to_vec(), mtime: None }]);
    fs::create_dir_all(home.path().join("state/t")).unwrap();
    fs::write(home.path().join("state/t/x"), b"in the way").unwrap();
    let done = apply(&plan_of(vec![item.with_step(Step::Replace(vec![theirs.clone()]))]), SystemTime::now())
        .unwrap();
    assert_eq!(done.kept, ["s"]);
    assert!(done.backups.is_empty());
    assert_eq!(fs::read(theirs.join("events.jsonl")).unwrap(), b"theirs");
    assert_eq!(
        fs::read_dir(home.path().join("state")).unwrap().count(),
        2,
        "a staging folder or backup was left"
    );
}

#[test]
fn settling_reads_what_is_there_and_an_edit_never_writes_through_a_link() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    fs::write(home.path().join("same.jsonl"), b"one").unwrap();
    symlink(elsewhere.path().join("x"), home.path().join("link.jsonl")).unwrap();
    let mut plan = plan_of(vec![
        conversation(home.path(), "a", "same.jsonl", b"one"),
        conversation(home.path(), "b", "link.jsonl", b"two"),
        conversation(home.path(), "c", "new.jsonl", b"three"),
    ]);
    plan.newest = Some("b".into());
    settle(&mut plan);
    assert_eq!(plan.items[0].step, Step::Same);
    assert!(matches!(plan.items[1].step, Step::Keep(_)));
    assert_eq!(plan.items[2].step, Step::Write);
    assert_eq!(plan.newest, None, "a kept conversation is not the one to resume");

    static NEVER: Recorder = Recorder(std::sync::Mutex::new(Vec::new()));
    symlink(elsewhere.path().join("db"), home.path().join("index.sqlite")).unwrap();
    let plan =
        plan_of(vec![Placement::edit(Kind::Index, "a", home.path(), "index.sqlite", Box::new(&NEVER))]);
    assert!(check(&plan).is_err());
    assert!(NEVER.0.lock().unwrap().is_empty());
}

#[test]
fn a_checkout_file_keeps_its_mode_and_a_link_is_laid_as_a_link() {
    let checkout = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let staged = staging.path().join("u0");
    fs::write(&staged, b"#!/bin/sh\n").unwrap();
    let item = |rel: &str, content: Content| Placement {
        kind: Kind::Checkout,
        session: String::new(),
        root: checkout.path().to_path_buf(),
        rel: rel.into(),
        content,
        step: Step::Write,
    };
    let plan = plan_of(vec![
        item("tools/run.sh", Content::Copy { from: staged.clone(), mode: 0o755 }),
        item("tools/latest", Content::Link("run.sh".into())),
    ]);
    apply(&plan, SystemTime::now()).unwrap();
    assert_eq!(crate::fsutil::mode(&checkout.path().join("tools/run.sh")).unwrap(), 0o755);
    assert_eq!(fs::read_link(checkout.path().join("tools/latest")).unwrap(), Path::new("run.sh"));
    // A checkout's folder is made as the umask says, not private like a session store's.
    let umask = fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
        .unwrap();
    assert_eq!(crate::fsutil::mode(&checkout.path().join("tools")).unwrap(), 0o777 & !umask);
    // Laid again: what is there is kept, never replaced.
    let again = plan_of(vec![item("tools/run.sh", Content::Copy { from: staged, mode: 0o644 })]);
    assert_eq!(apply(&again, SystemTime::now()).unwrap().left, [checkout.path().join("tools/run.sh")]);
    assert_eq!(crate::fsutil::mode(&checkout.path().join("tools/run.sh")).unwrap(), 0o755);
}

/// A store folder the user linked to another disk: a staged file is copied there and
/// renamed in, keeping its time. Runs where `/dev/shm` is another file system than the
/// temp dir, as on Linux.
#[test]
fn renaming_in_across_file_systems_copies_with_no_replace() {
    use std::os::unix::fs::MetadataExt;
    let staging = tempfile::tempdir().unwrap();
    let Ok(other) = tempfile::tempdir_in("/dev/shm") else { return };
    if fs::metadata(other.path()).unwrap().dev() == fs::metadata(staging.path()).unwrap().dev() {
        return;
    }
    let staged = staging.path().join("f");
    fs::write(&staged, b"conversation").unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    fs::File::options().write(true).open(&staged).unwrap().set_modified(when).unwrap();
    assert!(rename_in(other.path(), Path::new("s/f.jsonl"), &staged).unwrap());
    let placed = other.path().join("s/f.jsonl");
    assert_eq!(fs::read(&placed).unwrap(), b"conversation");
    assert_eq!(crate::fsutil::mode(&placed).unwrap(), 0o600);
    assert_eq!(fs::metadata(&placed).unwrap().modified().unwrap(), when);
    assert!(!staged.exists());
    fs::write(&staged, b"other").unwrap();
    assert!(!rename_in(other.path(), Path::new("s/f.jsonl"), &staged).unwrap());
    assert_eq!(fs::read(&placed).unwrap(), b"conversation");
    assert_eq!(fs::read_dir(other.path().join("s")).unwrap().count(), 1, "a temp file was left");
}

fn staged(root: &Path, id: &str, rel: &str, from: &Path) -> Placement {
    let mut p = conversation(root, id, rel, b"");
    p.content = Content::Staged(from.to_path_buf());
    p
}

#[test]
fn a_staged_folder_goes_in_whole_and_a_staged_file_never_over_the_receivers() {
    let home = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let tree = staging.path().join("tree");
    fs::create_dir_all(tree.join("a")).unwrap();
    fs::write(tree.join("a.jsonl"), b"ours").unwrap();
    fs::write(tree.join("a/sub.jsonl"), b"sub").unwrap();
    let plan = plan_of(vec![staged(home.path(), "", "projects/slot", &tree)]);
    assert_eq!(apply(&plan, SystemTime::now()).unwrap().placed, [Some(Placed::Written)]);
    assert_eq!(fs::read(home.path().join("projects/slot/a/sub.jsonl")).unwrap(), b"sub");
    assert!(!tree.exists());

    // The receiver's own file: the same bytes count as there, others are kept.
    let slot = home.path().join("projects/slot");
    let (same, other) = (staging.path().join("same"), staging.path().join("other"));
    fs::write(&same, b"ours").unwrap();
    fs::write(&other, b"changed").unwrap();
    for from in [&same, &other] {
        let done = apply(&plan_of(vec![staged(&slot, "a", "a.jsonl", from)]), SystemTime::now()).unwrap();
        let expected = if from == &same { Placed::Same } else { Placed::Kept };
        assert_eq!(done.placed, [Some(expected)]);
        assert_eq!(fs::read(slot.join("a.jsonl")).unwrap(), b"ours");
    }
    let names: Vec<String> = fs::read_dir(&slot)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "a temp file was left: {names:?}");
}

#[test]
fn what_a_killed_run_left_in_a_folder_is_swept_before_writing_there() {
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join("s")).unwrap();
    // No process has a pid this high; one that is alive keeps its temp file.
    let dead = home.path().join(format!("s/{}99999999-x.tmp", crate::fsutil::TEMP_PREFIX));
    let alive = home.path().join(format!("s/{}{}-x.tmp", crate::fsutil::TEMP_PREFIX, std::process::id()));
    fs::write(&dead, b"partial").unwrap();
    fs::write(&alive, b"in use").unwrap();
    apply(&plan_of(vec![conversation(home.path(), "a", "s/a.jsonl", b"one")]), SystemTime::now()).unwrap();
    assert!(!dead.exists() && alive.exists());
}

#[test]
fn a_staged_file_replaces_only_as_the_plan_says_keeping_a_backup() {
    let home = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let from = staging.path().join("f");
    fs::write(&from, b"ours").unwrap();
    fs::write(home.path().join("a.jsonl"), b"theirs").unwrap();
    let p = staged(home.path(), "a", "a.jsonl", &from)
        .with_step(Step::Replace(vec![home.path().join("a.jsonl")]));
    let done = apply(&plan_of(vec![p]), SystemTime::now()).unwrap();
    assert_eq!(fs::read(home.path().join("a.jsonl")).unwrap(), b"ours");
    assert_eq!(done.backups.len(), 1);
    assert_eq!(fs::read(&done.backups[0]).unwrap(), b"theirs");
    assert!(done.backups[0].to_string_lossy().contains(".lokust-backup-"));

    // A link on the way to a staged placement stops it, and the staged file stays.
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), home.path().join("s")).unwrap();
    fs::write(&from, b"again").unwrap();
    assert!(apply(&plan_of(vec![staged(home.path(), "b", "s/b.jsonl", &from)]), SystemTime::now()).is_err());
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    assert!(from.exists());
}
