//! Pieces of YAML's own syntax (YAML 1.2.2) that several readings meet: blanks, node
//! properties, a block scalar's style, and what a tag says of the value after it.

/// How many blanks (spaces, tabs) `text` starts with.
pub(crate) fn blanks(text: &[u8]) -> usize {
    text.iter().take_while(|b| matches!(b, b' ' | b'\t')).count()
}

/// `|`, `>-`, `|2+`: a block scalar's style and indicators, which a `name: value`
/// reading must not take for the value.
pub(crate) fn is_style(v: &[u8]) -> bool {
    matches!(v.first(), Some(b'|' | b'>'))
        && v.len() <= 3
        && v[1..].iter().all(|b| matches!(b, b'1'..=b'9' | b'-' | b'+'))
}

/// What stands after a key's `:` when its value is on the lines below: nothing but node
/// properties and a comment. Returns the tags, each after a blank, for the `name: value`
/// reading (an anchor names the node and says nothing of the value).
pub(crate) fn properties(mut after: &[u8]) -> Option<Vec<u8>> {
    let mut tags = Vec::new();
    loop {
        let sep = blanks(after);
        if sep == after.len() {
            return Some(tags);
        }
        if sep == 0 {
            return None;
        }
        after = &after[sep..];
        let word = after.iter().take_while(|b| !matches!(b, b' ' | b'\t')).count();
        match after[0] {
            b'#' => return Some(tags),
            b'&' if word > 1 => {}
            b'!' => {
                tags.push(b' ');
                tags.extend_from_slice(&after[..word]);
            }
            _ => return None,
        }
        after = &after[word..];
    }
}

/// What a YAML tag before a value says of it (YAML 1.2.2, 6.9.1: `!local`, `!!core`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    /// The node names another: CloudFormation's intrinsic functions in their short form
    /// (`!Ref DBPassword`, `!GetAtt Db.Endpoint`, `!ImportValue shared-db-password`,
    /// `!If [c, !Ref A, !Ref B]`), and Home Assistant's and ESPHome's `!secret name`,
    /// `!env_var NAME`, `!include file`. Nothing on such a line is the secret.
    Reference,
    /// A core type (`!!str`, `!!binary`): the value after it is judged, the tag kept.
    Core,
    /// A tag whose value is a literal still (`!Sub 'text'`, `!Base64 text`, Ansible's
    /// `!unsafe`): the value after it is judged, the tag kept. A `${…}` or `{{resolve:…}}`
    /// in a `!Sub` is a reference as anywhere else.
    Literal,
    /// Any other: in text that is no YAML it may be a password's first word
    /// (`password: !Hunter2 xyz`), so it goes with the value.
    Other,
}

pub(crate) fn yaml_tag(tag: &[u8]) -> Tag {
    // CloudFormation's short forms (the intrinsic function reference and its condition
    // functions); `Fn::Length`, `Fn::ToJsonString` and `Fn::ForEach` have none.
    const REFERENCES: &[&[u8]] = &[
        b"!Ref",
        b"!GetAtt",
        b"!GetAZs",
        b"!ImportValue",
        b"!FindInMap",
        b"!Join",
        b"!Select",
        b"!Split",
        b"!Cidr",
        b"!Transform",
        b"!If",
        b"!And",
        b"!Or",
        b"!Not",
        b"!Equals",
        b"!Condition",
        b"!secret",
        b"!env_var",
        b"!input",
    ];
    if REFERENCES.contains(&tag) || tag.starts_with(b"!include") {
        Tag::Reference
    } else if tag.starts_with(b"!!") && tag.len() > 2 && tag[2..].iter().all(u8::is_ascii_lowercase) {
        Tag::Core
    } else if matches!(tag, b"!Sub" | b"!Base64" | b"!unsafe") {
        Tag::Literal
    } else {
        Tag::Other
    }
}
