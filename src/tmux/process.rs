//! What `/proc` tells about the processes in a pane: the foreground job of its terminal,
//! each process's argv, start time, directory, environment and open files. Read-only,
//! and only the user's own processes are readable; anything unreadable is `None`.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::PathBuf;

/// One process, as `/proc/PID/stat` and `cmdline` describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    /// The foreground process group of the process's terminal (field 8 of `stat`).
    pub tpgid: i64,
    /// Start time in clock ticks after boot (field 22 of `stat`): with the pid, it names
    /// one process even after the pid is reused.
    pub start_ticks: u64,
    pub argv: Vec<String>,
}

/// `/proc/PID/stat` and `cmdline`, or `None` when the process is gone or not readable.
pub fn read(pid: u32) -> Option<Proc> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name in parentheses may hold spaces and parentheses: fields start after the last `)`.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    // fields[0] is field 3 of stat(5).
    let field = |n: usize| fields.get(n - 3).copied();
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Some(Proc {
        pid,
        ppid: field(4)?.parse().ok()?,
        tpgid: field(8)?.parse().ok()?,
        start_ticks: field(22)?.parse().ok()?,
        argv,
    })
}

/// Every process's children, from one pass over `/proc`.
pub fn children() -> HashMap<u32, Vec<u32>> {
    let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if let Some(p) = read(pid) {
            map.entry(p.ppid).or_default().push(pid);
        }
    }
    for kids in map.values_mut() {
        kids.sort_unstable();
    }
    map
}

/// The foreground job of the terminal whose session leader is `shell` (a pane's process):
/// its leader and the leader's descendants, breadth first, at most `depth` levels down.
/// Empty when the shell itself is in the foreground.
pub fn foreground(shell: u32, tree: &HashMap<u32, Vec<u32>>, depth: usize) -> Vec<Proc> {
    let Some(leader) = read(shell).map(|p| p.tpgid).filter(|&t| t > 0 && t != i64::from(shell)) else {
        return Vec::new();
    };
    let Ok(leader) = u32::try_from(leader) else { return Vec::new() };
    let mut found = Vec::new();
    let mut level = vec![leader];
    for _ in 0..=depth {
        let mut next = Vec::new();
        for pid in level {
            if let Some(p) = read(pid) {
                next.extend(tree.get(&pid).into_iter().flatten().copied());
                found.push(p);
            }
        }
        level = next;
    }
    found
}

pub fn cwd(pid: u32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// The process's environment, as it was when it started.
pub fn environment(pid: u32) -> BTreeMap<String, String> {
    let bytes = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    bytes
        .split(|&b| b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The files the process holds open.
pub fn open_files(pid: u32) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| fs::read_link(fd.path()).ok())
        .filter(|p| p.is_absolute())
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Whether `pid` is alive and is the process that started at `start_ticks`.
pub fn is_same(pid: u32, start_ticks: u64) -> bool {
    read(pid).is_some_and(|p| p.start_ticks == start_ticks)
}

/// When process `p` started, in seconds since the epoch.
pub fn started_at(p: &Proc) -> Option<u64> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
    // SAFETY: sysconf reads a constant of the running system and has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = u64::try_from(ticks).ok().filter(|&t| t > 0)?;
    Some(boot + p.start_ticks / ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read_whole() {
        let me = read(std::process::id()).expect("our own /proc entry");
        assert_eq!(me.pid, std::process::id());
        assert!(!me.argv.is_empty());
        assert!(is_same(me.pid, me.start_ticks));
        assert!(!is_same(me.pid, me.start_ticks + 1));
        assert_eq!(cwd(me.pid), std::env::current_dir().ok());
        let parent = children();
        assert!(parent.get(&me.ppid).is_some_and(|kids| kids.contains(&me.pid)));
        let started = started_at(&me).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert!(started <= now + 1 && now - started < 24 * 3600, "{started} vs {now}");
    }

    #[test]
    fn a_missing_process_reads_as_none() {
        assert_eq!(read(u32::MAX), None);
        assert!(environment(u32::MAX).is_empty());
        assert!(open_files(u32::MAX).is_empty());
    }
}
