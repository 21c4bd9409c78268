//! The modification times restored files get.
//!
//! Claude Code deletes a transcript whose mtime is older than `cleanupPeriodDays`
//! (default 30) at its next start, and its picker orders conversations by mtime. So
//! the restored times keep the original order and all land inside the receiver's
//! window: they are shifted so the newest is now, and when the conversations span more
//! than half the window they are also drawn closer together, in proportion, so even
//! the oldest has half the window left before cleanup. A move reads the files on this
//! machine, inside its window already: their times stay ([`Retimer::same_clock`]).

pub use crate::agent::claude::cleanup_days;

/// Maps the times of a bundle onto the receiver's clock.
#[derive(Debug, Clone, Copy)]
pub struct Retimer {
    newest: u64,
    now: u64,
    /// Numerator and denominator of the compression, 1/1 when none is needed.
    scale: (u64, u64),
}

impl Retimer {
    /// `transcripts`: the conversations' mtimes in the bundle; `days`: the receiver's
    /// cleanup period.
    pub fn new(transcripts: impl IntoIterator<Item = u64>, now: u64, days: u64) -> Retimer {
        let (mut oldest, mut newest) = (u64::MAX, 0);
        for t in transcripts {
            oldest = oldest.min(t);
            newest = newest.max(t);
        }
        if newest == 0 {
            return Retimer { newest: now, now, scale: (1, 1) };
        }
        let span = newest - oldest;
        let room = days.saturating_mul(86_400) / 2;
        let scale = if span > room { (room, span) } else { (1, 1) };
        Retimer { newest, now, scale }
    }

    /// The times of files read on this machine (a move): kept as they are, as `mv` keeps
    /// them; they are inside this machine's window already.
    pub fn same_clock(now: u64) -> Retimer {
        Retimer { newest: now, now, scale: (1, 1) }
    }

    /// The restored time of a file whose time in the bundle was `t`: never in the
    /// future, never before the window, in the same order as before.
    pub fn map(&self, t: u64) -> u64 {
        let age = self.newest.saturating_sub(t) as u128;
        let age = (age * self.scale.0 as u128 / self.scale.1 as u128) as u64;
        let oldest_kept = self.scale.0.max(1);
        // Files older than every conversation (a file-history entry) stay inside too.
        let age = if self.scale != (1, 1) { age.min(oldest_kept) } else { age };
        self.now.saturating_sub(age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    #[test]
    fn on_the_same_clock_times_stay() {
        let r = Retimer::same_clock(1_000 * DAY);
        assert_eq!(r.map(10 * DAY), 10 * DAY);
        assert_eq!(r.map(1_000 * DAY), 1_000 * DAY);
    }

    #[test]
    fn a_short_span_is_only_shifted() {
        let now = 1_000 * DAY;
        let r = Retimer::new([10 * DAY, 12 * DAY], now, 30);
        assert_eq!(r.map(12 * DAY), now);
        assert_eq!(r.map(10 * DAY), now - 2 * DAY);
    }

    #[test]
    fn a_long_span_is_drawn_into_half_the_window_in_order() {
        let now = 1_000 * DAY;
        let times = [100 * DAY, 140 * DAY, 141 * DAY];
        let r = Retimer::new(times, now, 30);
        let mapped: Vec<u64> = times.iter().map(|&t| r.map(t)).collect();
        assert_eq!(mapped[2], now);
        assert!(mapped[0] < mapped[1] && mapped[1] < mapped[2], "{mapped:?}");
        assert!(now - mapped[0] <= 15 * DAY, "{mapped:?}");
        let r = Retimer::new(times, now, 7);
        assert!(now - r.map(times[0]) <= 7 * DAY / 2);
    }

    #[test]
    fn the_receivers_setting_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let cleanup_days = |d: &std::path::Path| cleanup_days(d, None);
        assert_eq!(cleanup_days(dir.path()), 30);
        std::fs::write(dir.path().join("settings.json"), r#"{"cleanupPeriodDays": 7}"#).unwrap();
        assert_eq!(cleanup_days(dir.path()), 7);
        std::fs::write(dir.path().join("settings.json"), r#"{"cleanupPeriodDays": 0}"#).unwrap();
        assert_eq!(cleanup_days(dir.path()), 30);
    }
}
