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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_the_epoch_reads_as_the_epoch() {
        assert_eq!(since_epoch(UNIX_EPOCH - Duration::from_secs(5)), Duration::ZERO);
        assert_eq!(since_epoch(UNIX_EPOCH + Duration::from_millis(1500)).as_millis(), 1500);
        assert!(now().as_secs() > 1_700_000_000);
    }
}
