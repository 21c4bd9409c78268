//! `lokust-shell find ID`: a conversation looked up by its id in every agent's store on
//! this machine, read-only, with the line that resumes it.

use std::io::Write;
use std::path::Path;

use crate::cli::FindArgs;
use crate::probe::Probe;
use crate::sanitize::for_terminal as safe;
use crate::shell::{Quote, posix_quote};

/// Not found anywhere.
pub const NOT_FOUND: u8 = 1;

struct Hit {
    agent: &'static str,
    path: String,
    dir: Option<String>,
    resume: Option<String>,
}

pub fn run(args: &FindArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let probe = Probe::from_process().unwrap_or_default();
    let id = args.id.trim();
    if id.is_empty() || id.contains(['/', '\0']) || id.starts_with('.') {
        anyhow::bail!("{:?} is not a conversation id", safe(id));
    }
    let mut hits = Vec::new();
    for agent in crate::agent::known::Known::all() {
        if let Some(found) = agent.find(&probe, id)? {
            hits.push(Hit {
                agent: agent.name(),
                path: found.path.to_string_lossy().into_owned(),
                dir: found.dir,
                resume: agent.resume_stored(id),
            });
        }
    }
    if args.json {
        let list: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                serde_json::json!({"agent": h.agent, "id": id, "path": h.path, "project_dir": h.dir,
                    "project_dir_exists": h.dir.as_deref().is_some_and(|d| Path::new(d).is_dir()),
                    "resume": line(h)})
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(list))?;
    } else {
        for h in &hits {
            let here = match h.dir.as_deref() {
                Some(d) if Path::new(d).is_dir() => format!("{} (exists)", safe(d)),
                Some(d) => format!("{} (not on this machine)", safe(d)),
                None => "no directory recorded".to_string(),
            };
            writeln!(out, "{}: {}", h.agent, safe(id))?;
            writeln!(out, "  kept in:   {}", safe(&h.path))?;
            writeln!(out, "  project:   {here}")?;
            if let Some(l) = line(h) {
                writeln!(out, "  resume:    {}", safe(&l))?;
            }
        }
    }
    out.flush()?;
    if hits.is_empty() {
        eprintln!("lokust: no agent on this machine has a conversation {}", safe(id));
        return Ok(NOT_FOUND);
    }
    Ok(crate::exit::SUCCESS)
}

/// `cd DIR && RESUME`, or the resume alone without a directory.
fn line(h: &Hit) -> Option<String> {
    let resume = h.resume.as_deref()?;
    Some(match h.dir.as_deref() {
        Some(d) => format!("cd {} && {resume}", posix_quote(d, Quote::WhenNeeded)),
        None => resume.to_string(),
    })
}
