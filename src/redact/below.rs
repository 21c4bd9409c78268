//! A secret on the line below the line that names it: what a command that prints one
//! shows (`cat config/master.key`, `kubectl get secret … {.data.password} | base64 -d`,
//! `vault kv get -field=password …`) and what a message announces ("Please use the
//! following password to proceed to installation:", `Your API token:`). The value line
//! has no name of its own, so no reading of it alone finds it; the naming line arms the
//! scanner, and the next non-blank line is judged as that name's value.

use super::value::{Class, Form, name_class, should_redact};

/// Blank lines that may come between the naming line and its value.
pub(crate) const BLANKS: u8 = 2;

/// What a line says of the line below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// Blank lines still allowed before the value.
    pub blanks: u8,
    /// The prompt the command was typed at: output without a final newline runs into the
    /// next prompt (`T9VRSYoVv1GWbReZdev@box:~/proj$ `), which ends the value there.
    pub prompt: Option<Vec<u8>>,
    /// The rule that reports it.
    pub rule: &'static str,
    /// A declaration left open at the end of its line (`const API_KEY =`): the value is a
    /// quoted literal, judged by the name's class.
    pub literal: Option<Class>,
}

/// Whether a word, or two beside each other (`api key`), names a secret as the value
/// judge reads names (`password`, `token`, `initialAdminPassword`, `master.key`).
fn names_a_secret(words: &[&str]) -> bool {
    let named = |w: &str| name_class(w.as_bytes(), Form::Env).is_some();
    words.iter().any(|w| named(w)) || words.windows(2).any(|p| named(&format!("{}_{}", p[0], p[1])))
}

/// Whether `text` (a line past its view's prefix) names a secret that the next line
/// holds.
pub(crate) fn names_what_follows(text: &[u8]) -> Option<Named> {
    let t = std::str::from_utf8(text).ok()?.trim();
    if t.len() > 512 {
        return None;
    }
    if let Some(class) = super::declare::left_open(t.as_bytes()) {
        return Some(Named { blanks: 0, prompt: None, rule: "declaration", literal: Some(class) });
    }
    if let Some((prompt, command)) = prompted(t) {
        return prints_a_secret(command).then(|| Named {
            blanks: 0,
            prompt: Some(prompt.as_bytes().to_vec()),
            rule: "key-file-shown",
            literal: None,
        });
    }
    // A message: a few words ending in a colon, one of the last of them a secret's noun
    // (`…the following password to proceed to installation:`, `…app password for "Mail":`).
    // Written as a sentence is: capitalised, no code's punctuation (`def apop(self,
    // password):` and `for token in self:` are code).
    if !t.ends_with(':')
        || !t.starts_with(|c: char| c.is_ascii_uppercase())
        || t.contains(['(', ')', '[', ']', '{', '}', '=', ';'])
    {
        return None;
    }
    let words: Vec<&str> = t
        .trim_end_matches(':')
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .collect();
    let last = &words[words.len().saturating_sub(8)..];
    (words.len() >= 3 && names_a_secret(last)).then_some(Named {
        blanks: BLANKS,
        prompt: None,
        rule: "prose",
        literal: None,
    })
}

/// The prompt (with the blank after it) and the command of a line typed at a shell.
fn prompted(t: &str) -> Option<(&str, &str)> {
    let end = t.find(['$', '#', '%'])?;
    let (prompt, rest) = t.split_at(end + 1);
    let looks = prompt.contains('@') || prompt.contains(':') || prompt.contains('~') || prompt.len() == 1;
    (looks && !prompt.contains(char::is_whitespace) && rest.starts_with(' '))
        .then(|| (&t[..end + 2], rest[1..].trim()))
}

/// Whether a command prints a secret on its own: a file whose name says it holds one, a
/// secret store's read of one field, or a Kubernetes secret decoded.
fn prints_a_secret(command: &str) -> bool {
    let lower = command.to_ascii_lowercase();
    let stages: Vec<&str> = lower.split('|').map(str::trim).collect();
    let last = stages.last().copied().unwrap_or_default();
    let words: Vec<&str> = last.split_whitespace().collect();
    // A path, a field or a JSON path names a secret when one of its words does.
    let named = |s: &str| names_a_secret(&s.split(|c: char| "/{}[]\"'=:,".contains(c)).collect::<Vec<_>>());
    // `… | base64 -d` of a field named as a secret.
    if matches!(words.as_slice(), ["base64", "-d" | "--decode" | "-D"]) {
        return stages.len() > 1 && named(&stages[..stages.len() - 1].join("|"));
    }
    match words.as_slice() {
        ["cat" | "head" | "tail" | "more" | "less" | "sudo", rest @ ..] => rest
            .iter()
            .filter(|w| !w.starts_with('-') && **w != "cat")
            .any(|path| named(path.rsplit('/').next().unwrap_or(path))),
        ["vault", "kv" | "read", ..] => words.iter().any(|w| w.starts_with("-field=") && named(w)),
        ["op", "read", ..] | ["pass", "show", ..] | ["gopass", "show", ..] => true,
        ["security", "find-generic-password" | "find-internet-password", ..] => words.contains(&"-w"),
        ["gcloud", "secrets", "versions", "access", ..] => true,
        ["aws", "secretsmanager", "get-secret-value", ..] => lower.contains("secretstring"),
        _ => false,
    }
}

/// Where in `text` (the line below a naming line) the named value is: the line's one
/// word, cut where the next prompt starts; `None` when the line is not one value.
pub(crate) fn value_below(text: &[u8], named: &Named) -> Option<(usize, usize)> {
    if let Some(class) = named.literal {
        return super::declare::literal_line(text, class);
    }
    let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
    let mut end = text.len() - text.iter().rev().position(|b| !b.is_ascii_whitespace()).unwrap_or(0);
    if let Some(prompt) = named.prompt.as_deref().map(<[u8]>::trim_ascii_end).filter(|p| !p.is_empty())
        && let Some(at) = memchr::memmem::find(&text[start..end], prompt).filter(|&at| at > 0)
    {
        end = start + at;
    }
    let v = &text[start..end];
    let one_word = !v.iter().any(u8::is_ascii_whitespace) && (8..=512).contains(&v.len());
    (one_word && should_redact(Class::Secret, v) || is_grouped_app_password(v)).then_some((start, end))
}

/// An app password as Google and Apple show one: four groups of four lower-case letters.
fn is_grouped_app_password(v: &[u8]) -> bool {
    let groups: Vec<&[u8]> = v.split(|b| *b == b' ').collect();
    groups.len() == 4 && groups.iter().all(|g| g.len() == 4 && g.iter().all(u8::is_ascii_lowercase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_messages_that_name_the_line_below() {
        for line in [
            "dev@box:~/proj$ cat config/master.key",
            "dev@box:~/proj$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{.data.password}\" | base64 -d",
            "$ sudo cat /var/jenkins_home/secrets/initialAdminPassword",
            "u@h:~$ vault kv get -field=password secret/db",
            "Please use the following password to proceed to installation:",
            "Google generated this app password for \"Nextcloud mail\":",
        ] {
            assert!(names_what_follows(line.as_bytes()).is_some(), "{line}");
        }
        for line in [
            "dev@box:~/proj$ cat README.md",
            "dev@box:~/proj$ base64 -d notes.txt",
            "password:",
            "    def apop(self, user, password):",
            "        for token in self:",
            "The steps are:",
            "Run the following command:",
        ] {
            assert!(names_what_follows(line.as_bytes()).is_none(), "{line}");
        }
    }

    #[test]
    fn the_value_below_is_one_word_cut_at_the_next_prompt() {
        let command = names_what_follows(b"dev@box:~/proj$ cat config/master.key").unwrap();
        let line = b"T9VRSYoVv1GWbReZdev@box:~/proj$ ";
        assert_eq!(value_below(line, &command), Some((0, 16)));
        assert_eq!(value_below(b"c5214417d8d3998e485a368a2b3bc694", &command), Some((0, 32)));
        let message = names_what_follows(b"Your new API token:").unwrap();
        assert_eq!(value_below(b"    djjb wzcj lfcx lxqv", &message), Some((4, 23)));
        for not in [&b"File encrypted and saved."[..], b"see the docs", b"short", b"/var/lib/secret.txt"] {
            assert_eq!(value_below(not, &message), None, "{}", String::from_utf8_lossy(not));
        }
    }
}
