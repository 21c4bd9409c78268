//! Numbers, sizes, times and durations as people read them, the same in every summary,
//! plan and report.

use std::time::{Duration, UNIX_EPOCH};

/// `1776042774000` → `2026-04-13T01:12:54Z`.
pub fn utc(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// `2351.7 KB`, `6.2 KB`, `512 B`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b if b < 1024 * 1024 * 1024 => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
        b => format!("{:.2} GB", b as f64 / (1024.0 * 1024.0 * 1024.0)),
    }
}

/// `365295` → `6m 05s`; under a minute, `30.1s`.
pub fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        s if s < 60 => format!("{:.1}s", ms as f64 / 1000.0),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `49793` → `49,793`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 value`, `3 values`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// [`count`] for a noun whose plural is not `s` added: `1 entry`, `3 entries`.
pub fn count_as(n: u64, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}
