//! Which paths a carried payload may name: relative, inside the checkout, never into
//! `.git`, and links that stay inside too.

use std::path::{Component, Path};

/// Why `rel` may not be written under the checkout, or `None` when it may.
pub fn refuse_path(rel: &str) -> Option<&'static str> {
    if rel.is_empty() {
        return Some("an empty path");
    }
    if rel.contains('\0') || rel.contains('\\') {
        return Some("a path with a NUL or a backslash");
    }
    // `./x`, `a/./b`, `a//b`: not a plain path (a path's reading drops what is inside).
    if rel.split('/').any(|c| c == "." || c.is_empty()) {
        return Some("a path with a '.' or an empty name in it");
    }
    let path = Path::new(rel);
    for c in path.components() {
        match c {
            Component::Normal(name) => {
                // `.git` in any case: case-insensitive file systems would map `.GIT` onto it.
                if name.to_string_lossy().eq_ignore_ascii_case(".git") {
                    return Some("a path into .git");
                }
            }
            // `./x` and `x/./y`: not a plain path, and what counts depth would miscount.
            Component::CurDir => return Some("a path with a '.' in it"),
            Component::ParentDir => return Some("a path that climbs out with '..'"),
            Component::RootDir | Component::Prefix(_) => return Some("an absolute path"),
        }
    }
    None
}

/// Why a symlink at `rel` pointing at `target` may not be made, or `None`: the target must
/// be relative and, resolved from the link's folder, stay inside the checkout. `..` may
/// only lead the target: after a name it would climb from wherever that name leads, and a
/// carried link (`d -> .`) can make `d/d/../../..` climb out while it reads as staying in.
pub fn refuse_link(rel: &str, target: &str) -> Option<&'static str> {
    if target.is_empty() || target.contains('\0') {
        return Some("a link with an empty target");
    }
    if target.starts_with('/') {
        return Some("a link to an absolute path");
    }
    // Longer than a path may be: it could not be made, after the files before it were.
    if target.len() >= 4096 {
        return Some("a link whose target is longer than a path may be");
    }
    // How deep the link's folder is: its names, not a `.` among them (`./x -> ..` is at
    // the top and climbs out).
    let names = Path::new(rel).components().filter(|c| matches!(c, Component::Normal(_))).count();
    let mut depth: i64 = names as i64 - 1;
    let mut named = false;
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir if named => return Some("a link that climbs with '..' after a name"),
            Component::ParentDir => depth -= 1,
            Component::Normal(name) => {
                if name.to_string_lossy().eq_ignore_ascii_case(".git") {
                    return Some("a link into .git");
                }
                named = true;
                depth += 1
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Some("a link to an absolute path"),
        }
        if depth < 0 {
            return Some("a link that points outside the checkout");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_and_out_of_git() {
        assert_eq!(refuse_path("src/a.rs"), None);
        assert_eq!(refuse_path("caf\u{e9}/x y"), None);
        assert!(refuse_path("../x").is_some());
        assert!(refuse_path("a/../../x").is_some());
        assert!(refuse_path("/etc/passwd").is_some());
        assert!(refuse_path(".git/hooks/post-checkout").is_some());
        assert!(refuse_path("sub/.GIT/config").is_some());
        assert!(refuse_path("").is_some());
    }

    #[test]
    fn links_stay_inside() {
        assert_eq!(refuse_link("a/l", "../b"), None);
        assert_eq!(refuse_link("l", "b/c"), None);
        assert!(refuse_link("l", "../x").is_some());
        assert!(refuse_link("a/l", "../../x").is_some());
        assert!(refuse_link("l", "/etc/passwd").is_some());
        assert!(refuse_link("l", ".git/config").is_some());
        assert!(refuse_link("a/l", "b/../../../x").is_some());
        // `d -> .` makes every `d/` the top again: `..` after a name is refused.
        assert_eq!(refuse_link("d", "."), None);
        assert!(refuse_link("AGENTS.md", "d/d/d/../../../etc/passwd").is_some());
        assert!(refuse_link("l", "b/../c").is_some());
        assert_eq!(refuse_link("a/b/l", "../../c/d"), None);
        // A `.` in the link's own path is no folder to climb from.
        assert!(refuse_link("./evil", "..").is_some());
        assert!(refuse_path("./evil").is_some() && refuse_path("a/./b").is_some());
        assert!(refuse_link("l", &"a/".repeat(2048)).is_some());
    }
}
