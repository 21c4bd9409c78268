//! Writing the `.lok` with its bundle: tar → parallel deflate → base64 → JSON, streamed,
//! so memory stays flat whatever the project's size.

use super::source::*;
use super::*;

/// A payload of `bundles` written straight into the document, never whole in memory.
pub trait StreamedElement {
    /// Whether there is an element to write; asked once the bundle's data is written, so a
    /// payload prepared meanwhile (on another thread) may be waited for here.
    fn present(&self) -> bool {
        true
    }
    /// Writes the element as one JSON object.
    fn write_to(&self, out: &mut dyn Write) -> anyhow::Result<()>;
}

/// Writes `lok` as pretty JSON to `out` with the Claude Code project of `plan` (when there
/// is one) streamed into `bundle`, and the further payloads of `opts` in `bundles`. The
/// bundle's sizes follow `data` (JSON key order is free), so nothing is held back.
pub fn write_lok<W: Write>(
    lok: &ShellLok,
    plan: Option<&Plan>,
    opts: &BundleOptions,
    mut out: W,
) -> anyhow::Result<BundleStats> {
    let mut lok = lok.clone();
    lok.bundle = None;
    lok.extra.remove("bundles");
    let head = serde_json::to_string_pretty(&lok).context("could not serialise the snapshot")?;
    let head = head.strip_suffix("\n}").context("unexpected JSON layout")?;
    let mut stats = BundleStats::default();
    match plan {
        Some(plan) => write_bundle(head, plan, opts, &mut out, &mut stats)?,
        None => write!(out, "{head}")?,
    }
    let streamed: Vec<_> = opts.streamed.iter().filter(|e| e.present()).collect();
    if !opts.elements.is_empty() || !streamed.is_empty() {
        write!(out, ",\n  \"bundles\": [")?;
        for (i, element) in opts.elements.iter().enumerate() {
            let text = serde_json::to_string(element).context("could not serialise bundles")?;
            write!(out, "{}{text}", if i == 0 { "" } else { ", " })?;
        }
        for (i, element) in streamed.iter().enumerate() {
            write!(out, "{}", if i == 0 && opts.elements.is_empty() { "" } else { ", " })?;
            element.write_to(&mut out)?;
        }
        write!(out, "]")?;
    }
    writeln!(out, "\n}}")?;
    out.flush()?;
    Ok(stats)
}

fn write_bundle<W: Write>(
    head: &str,
    plan: &Plan,
    opts: &BundleOptions,
    mut out: W,
    stats: &mut BundleStats,
) -> anyhow::Result<()> {
    write!(
        out,
        "{head},\n  \"bundle\": {{\n    \"kind\": \"{KIND}\",\n    \"format\": \"{FORMAT}\",\n    \"data\": \""
    )?;
    let gz = super::codec::Writer::new(&mut out, threads(opts.threads), opts.level);
    let gz = write_tar(plan, opts, gz, stats)?;
    let (_, sizes) = gz.finish()?;
    let (count, total) = (sizes.base64, sizes.uncompressed);
    stats.base64_bytes = count;
    stats.uncompressed_bytes = total;
    write!(
        out,
        "\",\n    \"uncompressed_bytes\": {},\n    \"base64_bytes\": {}\n  }}",
        stats.uncompressed_bytes, stats.base64_bytes
    )?;
    Ok(())
}

fn threads(n: usize) -> usize {
    if n > 0 {
        return n;
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4)
}

/// Files a planner thread opens and redacts ahead of the one being written: each one
/// waiting holds only its edits, never its text.
const READ_AHEAD: usize = 2;

/// A file as the planner left it for the writer.
enum Ahead {
    /// Gone between the listing and the read.
    Missing,
    Ready {
        file: File,
        /// The bytes to take (see [`consistent_len`]).
        len: u64,
        /// The redacted size, for the tar header.
        size: u64,
        plans: Option<FilePlan>,
        redactions: Report,
    },
}

/// Opens `src` and finds what redaction changes in it: the first of the two reads.
/// `carried` holds the secrets found in the files before this one, whose echoes are
/// replaced in it too; it learns this file's.
fn read_ahead(
    src: &Path,
    jsonl: bool,
    redactors: Option<&Redactors>,
    carried: &mut Echoes,
) -> anyhow::Result<Ahead> {
    let mut file = match File::open(src) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ahead::Missing),
        Err(e) => return Err(e).with_context(|| format!("could not read {}", src.display())),
    };
    let mut read = |file: &mut File| -> io::Result<Ahead> {
        let len = consistent_len(file, jsonl)?;
        let mut redactions = Report::default();
        let (size, plans) = if let Some(redactors) = redactors {
            let (size, plans) =
                plan_file(Chunker::new(file.try_clone()?, len), jsonl, redactors, &mut redactions, carried)?;
            file.seek(SeekFrom::Start(0))?;
            (size, Some(plans))
        } else {
            (len, None)
        };
        Ok(Ahead::Ready { file: file.try_clone()?, len, size, plans, redactions })
    };
    read(&mut file).with_context(|| format!("could not read {}", src.display()))
}

fn write_tar<W: Write>(
    plan: &Plan,
    opts: &BundleOptions,
    sink: W,
    stats: &mut BundleStats,
) -> anyhow::Result<W> {
    // Redaction and compression took turns on the cores: the files are now planned
    // (read and redacted, by the redactors) on a thread of their own while the writer
    // sends the ones before them to the compressors.
    std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<anyhow::Result<Ahead>>(READ_AHEAD);
        let redactors = opts.redact.then(|| Redactors::start(s, threads(opts.threads)));
        s.spawn(move || {
            // One project's files are one document to the echo pass, in the order they
            // are read (a subagent's transcript before the main one that quotes it).
            let mut carried = Echoes::default();
            for item in &plan.items {
                let Item::File { src, jsonl, .. } = item else { continue };
                if crate::interrupt::interrupted() {
                    let _ = tx.send(Err(io::Error::other(crate::interrupt::Interrupted).into()));
                    return;
                }
                // The writer stopped (an error): nothing more is wanted.
                if tx.send(read_ahead(src, *jsonl, redactors.as_ref(), &mut carried)).is_err() {
                    return;
                }
            }
        });
        let result = write_items(plan, opts, sink, stats, &rx);
        // An early return drops `rx`, so the planner stops at its next send.
        drop(rx);
        result
    })
}

/// The bar `--bundle` shows on a terminal for a large project.
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "bundling {bar:30} {binary_bytes}/{binary_total_bytes} {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// `bytes` redacted line by line, each line's ending kept.
fn redacted_lines(bytes: &[u8], report: &mut crate::redact::Report) -> Vec<u8> {
    crate::redact::redact_document(bytes, true, report, |body, report| {
        crate::redact::redact_line_bytes(body, true, report)
    })
    .into_owned()
}

fn write_items<W: Write>(
    plan: &Plan,
    opts: &BundleOptions,
    sink: W,
    stats: &mut BundleStats,
    ahead: &Receiver<anyhow::Result<Ahead>>,
) -> anyhow::Result<W> {
    let progress = opts.progress.then(|| progress_bar(plan.total_bytes));
    let mut tar = tar::Builder::new(sink);
    stats.sessions = plan.sessions.len() as u64;
    for path in &plan.skipped {
        stats.warnings.push(format!("bundle: left out {path}: not a regular file or directory"));
    }
    for item in &plan.items {
        if crate::interrupt::interrupted() {
            return Err(io::Error::other(crate::interrupt::Interrupted).into());
        }
        let mut header = tar::Header::new_gnu();
        header.set_uid(0);
        header.set_gid(0);
        match item {
            Item::Dir { path, mtime } => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o700);
                header.set_mtime(*mtime);
                header.set_size(0);
                tar.append_data(&mut header, path, io::empty())?;
            }
            Item::Data { path, bytes, mtime } => {
                let red = if opts.redact && !path.ends_with("/manifest.json") {
                    redacted_lines(bytes, &mut stats.redactions)
                } else {
                    bytes.to_vec()
                };
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o600);
                header.set_mtime(*mtime);
                header.set_size(red.len() as u64);
                tar.append_data(&mut header, path, &red[..])?;
                stats.files += 1;
            }
            Item::File { path, src, mtime, jsonl } => {
                let planned = ahead.recv().map_err(|_| io::Error::other("the bundle's reader stopped"))??;
                let Ahead::Ready { file, len, size, plans, redactions } = planned else {
                    stats.warnings.push(format!("bundle: {} disappeared while being read", src.display()));
                    continue;
                };
                stats.redactions.merge(&redactions);
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o600);
                header.set_mtime(*mtime);
                header.set_size(size);
                let mut reader = Exact::new(
                    Chunker::new(file, len),
                    plans,
                    *jsonl,
                    size,
                    &mut stats.redactions,
                    progress.as_ref(),
                );
                tar.append_data(&mut header, path, &mut reader)
                    .with_context(|| format!("could not bundle {}", src.display()))?;
                if reader.changed {
                    stats.warnings.push(format!(
                        "bundle: {} was rewritten while being read; its copy was cut at a line end",
                        src.display()
                    ));
                }
                stats.files += 1;
            }
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(tar.into_inner()?)
}
