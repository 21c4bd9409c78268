//! `lokust-shell doctor [--json] [--strict]`: the checks of [`crate::doctor`], shown.

use std::io::Write;

use crate::cli::DoctorArgs;
use crate::doctor::{self, Status};
use crate::probe::Probe;

pub fn run(args: &DoctorArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let probe = Probe::from_process().unwrap_or_default();
    // SAFETY: getppid has no preconditions and cannot fail.
    let shell = u32::try_from(unsafe { libc::getppid() }).ok();
    let checks = doctor::run(&probe, shell);
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (failed, warned) = (count(Status::Fail), count(Status::Warn));
    if args.json {
        let doc = serde_json::json!({"version": env!("CARGO_PKG_VERSION"), "checks": checks,
            "failed": failed, "warnings": warned});
        writeln!(out, "{doc}")?;
    } else {
        for c in &checks {
            writeln!(out, "{} {:<18} {}", c.status.mark(), c.name, crate::sanitize::for_terminal(&c.detail))?;
            if let Some(fix) = &c.fix {
                writeln!(out, "    fix: {}", crate::sanitize::for_terminal(fix))?;
            }
        }
        writeln!(
            out,
            "\n{} checks: {} failed, {}, {} passed",
            checks.len(),
            failed,
            crate::human::count(warned as u64, "warning"),
            count(Status::Ok)
        )?;
    }
    out.flush()?;
    Ok(if failed > 0 || (args.strict && warned > 0) { crate::exit::ERROR } else { crate::exit::SUCCESS })
}
