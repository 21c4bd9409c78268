//! PEM and OpenSSH private-key blocks: their body, on one line or over many.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};

lazy_re!(PEM_BEGIN, r"-----BEGIN ([A-Z0-9][A-Z0-9 ._-]{0,40})-----");

/// Words of the labels of blocks that hold nothing secret: RFC 7468's certificates, CRLs,
/// requests, public keys and parameters, signatures, and messages or files encrypted to
/// someone (OpenPGP's `MESSAGE`, age's `ENCRYPTED FILE`). Every other block is taken for a
/// secret: private keys of every kind, and what else a tool armors (cloudflared's
/// `ARGO TUNNEL TOKEN`, a NATS `USER JWT` or `NKEY SEED`).
const PUBLIC_LABEL_WORDS: &[&[u8]] = &[
    b"PUBLIC",
    b"CERTIFICATE",
    b"CRL",
    b"PARAMETERS",
    b"SIGNATURE",
    b"SIGNED",
    b"PKCS7",
    b"CMS",
    b"MESSAGE",
    b"OCSP",
    // `gpg --enarmor`'s output: any file, armored.
    b"ARMORED",
];

/// Whether a block with this label holds a secret.
fn is_secret_label(label: &[u8]) -> bool {
    let words: Vec<&[u8]> = label.split(|b| *b == b' ').collect();
    let has = |word: &[u8]| words.contains(&word);
    // A TLS session's parameters hold its master key.
    has(b"PRIVATE") || has(b"SESSION") || !(has(b"ENCRYPTED") || PUBLIC_LABEL_WORDS.iter().any(|w| has(w)))
}

/// The headers in `line` that open a secret's block.
fn secret_begins(line: &[u8]) -> impl Iterator<Item = regex::bytes::Match<'_>> {
    PEM_BEGIN.captures_iter(line).filter(|c| is_secret_label(&c[1])).filter_map(|c| c.get(0))
}

fn is_b64_body(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Does the PEM header at the end of this line open a block whose body follows on the
/// next lines? Used by the line-by-line state machine.
pub(crate) fn pem_opens_block(line: &[u8]) -> bool {
    if putty_private_lines(line) {
        return true;
    }
    let Some(m) = secret_begins(line).last() else {
        return false;
    };
    let rest = line[m.end()..].trim_ascii();
    rest.is_empty() || rest == b"\\" || (rest.len() == 1 && matches!(rest[0], b'"' | b'\''))
}

/// PuTTY's `.ppk` says how many lines of private key follow: `Private-Lines: 14`.
fn putty_private_lines(line: &[u8]) -> bool {
    line.trim_ascii().strip_prefix(b"Private-Lines:").is_some_and(|n| {
        let n = n.trim_ascii();
        !n.is_empty() && n.len() <= 4 && n.iter().all(u8::is_ascii_digit)
    })
}

/// What may stand between a block's header and its body without ending it: the blank line
/// and the armor headers of an OpenPGP block (RFC 4880: `Version:`, `Comment:`, `Hash:`,
/// `Charset:`, `MessageID:`).
pub(crate) fn pem_before_body(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    t.is_empty()
        || [&b"Version:"[..], b"Comment:", b"Hash:", b"Charset:", b"MessageID:"]
            .iter()
            .any(|h| t.starts_with(h))
}

/// A body line inside a PEM block: base64, or an RFC 1421 header (`Proc-Type: …`).
pub(crate) fn pem_body_line(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    let t = t.strip_suffix(b"\\").unwrap_or(t).trim_ascii_end();
    !t.is_empty()
        && (t.iter().copied().all(is_b64_body)
            || [&b"Proc-Type:"[..], b"DEK-Info:", b"Comment:"].iter().any(|p| t.starts_with(p)))
}

/// A whole block on one line, the body written with literal `\n` or spaces.
pub(crate) fn pem_inline(line: &[u8], out: &mut Vec<Span>) {
    // Each header's body ends at the next END or the next header, found once for the whole
    // line: a line of nothing but headers must not be read once per header.
    let begins: Vec<(usize, usize)> = secret_begins(line).map(|m| (m.start(), m.end())).collect();
    if begins.is_empty() {
        return;
    }
    let ends: Vec<usize> = memchr::memmem::find_iter(line, b"-----END").collect();
    for (i, &(_, header_end)) in begins.iter().enumerate() {
        let mut s = header_end;
        let next_end = ends.get(ends.partition_point(|&e| e < s)).copied().unwrap_or(line.len());
        let next_begin = begins.get(i + 1).map_or(line.len(), |b| b.0);
        let limit = next_end.min(next_begin);
        // Skip the separator after the header: spaces, a literal `\n`, `\r\n`.
        loop {
            if line[s..limit].starts_with(b"\\n") || line[s..limit].starts_with(b"\\r") {
                s += 2;
            } else if s < limit && matches!(line[s], b' ' | b'\t') {
                s += 1;
            } else {
                break;
            }
        }
        // The body runs over base64, literal `\n`, spaces and RFC 1421 headers.
        let mut e = s;
        let mut b64 = 0;
        while e < limit {
            let b = line[e];
            if is_b64_body(b) {
                b64 += 1;
                e += 1;
            } else if matches!(b, b' ' | b'\t' | b':' | b',' | b'-') || b == b'\\' {
                e += 1;
            } else {
                break;
            }
        }
        // Trim a trailing separator so the END line keeps its `\n`.
        while e > s && matches!(line[e - 1], b' ' | b'\t' | b'\\' | b'n' | b'-') {
            if line[e - 1] == b'n' && !(e >= 2 + s && line[e - 2] == b'\\') {
                break;
            }
            e -= if line[e - 1] == b'n' { 2 } else { 1 };
        }
        if b64 >= 16 && e > s {
            out.push(Span { start: s, end: e, rule: "private-key" });
        }
    }
}

#[cfg(test)]
mod tests {
    /// Whatever its label, an armored block is a secret's unless the label says it is
    /// public (a certificate, a public key, parameters, a signature) or encrypted to
    /// someone; over lines and on one line with `\n` escapes.
    #[test]
    fn a_block_is_judged_by_what_its_label_says_it_holds() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq3x9ZkR2pLmW8sYtV4nJcH6eD1fG0aB5iK7oP3uT9wXyZ2rQ";
        for label in [
            "PRIVATE KEY",
            "ARGO TUNNEL TOKEN",
            "NATS USER JWT",
            "USER NKEY SEED",
            "ENCRYPTED PRIVATE KEY",
            "ML-DSA-65 PRIVATE KEY",
            "SSL SESSION PARAMETERS",
        ] {
            let block = format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n");
            let out = crate::redact::redact(&block);
            assert!(
                !out.contains("q3x9ZkR2pLmW8s") && out.contains(&format!("-----END {label}-----")),
                "{out}"
            );
            let inline = block.replace('\n', "\\n");
            let json = format!("{{\"pem\": \"{inline}\"}}\n");
            let out = crate::redact::redact(&json);
            assert!(!out.contains("q3x9ZkR2pLmW8s"), "{out}");
        }
        for label in [
            "CERTIFICATE",
            "CERTIFICATE REQUEST",
            "X509 CRL",
            "PUBLIC KEY",
            "PGP PUBLIC KEY BLOCK",
            "PGP MESSAGE",
            "PGP SIGNATURE",
            "SSH SIGNATURE",
            "DH PARAMETERS",
            "AGE ENCRYPTED FILE",
            "PKCS7",
            "OCSP RESPONSE",
            "PGP ARMORED FILE",
        ] {
            let block = format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n");
            assert_eq!(crate::redact::redact(&block), block);
        }
    }
}
