//! Time as seconds since the Unix epoch, the one way every module reads it: a clock set
//! before 1970 reads as the epoch rather than failing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t` as time since the epoch; zero before it.
pub fn since_epoch(t: SystemTime) -> Duration {
    t.duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Now, as time since the epoch.
pub fn now() -> Duration {
    since_epoch(SystemTime::now())
}

/// When this process was forked, in microseconds since the epoch (Linux: from
/// `/proc/self/stat` and the boot time, to the kernel's clock tick); `None` elsewhere.
pub fn process_started_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces and parentheses: fields count from the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok().filter(|t| *t > 0)?;
    Some(boot * 1_000_000 + ticks * 1_000_000 / per_second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_the_epoch_reads_as_the_epoch() {
        assert_eq!(since_epoch(UNIX_EPOCH - Duration::from_secs(5)), Duration::ZERO);
        assert_eq!(since_epoch(UNIX_EPOCH + Duration::from_millis(1500)).as_millis(), 1500);
        assert!(now().as_secs() > 1_700_000_000);
        // This test process started before now, and not long before (boot time has a
        // one-second resolution).
        let started = process_started_us().expect("a Linux /proc");
        let now_us = now().as_micros() as u64;
        assert!(
            started <= now_us + 1_000_000 && now_us.saturating_sub(started) < 3_600_000_000,
            "{started} vs {now_us}"
        );
    }
}
