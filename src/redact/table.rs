//! A secret whose name heads its column: a Markdown table (`| env | user | password |`,
//! its `|---|` line, then rows) gives each cell the name of its column, and a cell is
//! judged as that name's value would be. A diff's sign before a row is read past.
//!
//! A table a command draws in a box (`+-----+-----+` rules around `| a | b |` rows, as
//! `confluent api-key create`, `openstack` and MySQL print one) is read the same way,
//! its rule below the header standing for the `|---|` line; and in either kind a row of
//! two cells whose first names a secret (`| API Secret | … |`) gives its second that
//! name, as a label gives its value.

use super::span::Span;
use super::value::{Class, Form, name_class, should_redact};

/// A table whose header named a secret, as far as it has been read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// What each column's name says its values are.
    columns: Vec<Option<Class>>,
    /// The `|---|` line was seen: rows follow.
    confirmed: bool,
}

/// A box's rule: `+`, then `-` or `=` (`:` for alignment) and `+` only, as
/// `+------+-------+` and `+======+` draw one.
fn is_rule(body: &[u8]) -> bool {
    let t = body.trim_ascii();
    t.len() >= 3
        && t.starts_with(b"+")
        && t.ends_with(b"+")
        && t.iter().all(|b| matches!(b, b'+' | b'-' | b'=' | b':'))
        && t.iter().any(|b| matches!(b, b'-' | b'='))
}

/// The class a row's label gives the cell beside it, when the row is two cells and the
/// first names a secret (`| API Secret | … |`, `| password | … |`). A label's value is
/// judged by its shape at the least, as a document's `| password | string |` names a
/// type, not one.
fn label_class(body: &[u8], cells: &[(usize, usize)]) -> Option<Class> {
    let [(s, e), _] = cells else { return None };
    let name: Vec<u8> = body[*s..*e].iter().map(|b| if *b == b' ' { b'_' } else { *b }).collect();
    match name_class(&name, Form::Colon)? {
        Class::Password => Some(Class::Secret),
        c => Some(c),
    }
}

/// The span of a cell judged as a value of `class`: one token (a code span's backticks
/// are Markdown's), not a sentence.
fn cell_span(body: &[u8], (s, e): (usize, usize), class: Class) -> Option<Span> {
    // A code span's backticks (`` `sk_live_…` ``) are Markdown's, not the value's.
    let (s, e) = code_span(body, s, e);
    // A cell of several words is a sentence (`| Condition to pass |` heads
    // `| Regex must pass |`), not a password.
    let sentence = body[s..e].iter().any(u8::is_ascii_whitespace);
    (s < e && !sentence && should_redact(class, &body[s..e])).then_some(Span { start: s, end: e, rule: "kv" })
}

/// The cells of a table line as byte ranges of `body`, trimmed; `None` when the line is
/// no table line.
fn cells(body: &[u8]) -> Option<Vec<(usize, usize)>> {
    let start = body.iter().position(|b| !matches!(b, b'+' | b'-' | b' ' | b'\t'))?;
    if body[start] != b'|' || body.trim_ascii_end().last() != Some(&b'|') || body.len() > 4096 {
        return None;
    }
    let end = body.len() - (body.len() - body.trim_ascii_end().len()) - 1;
    let mut out = Vec::new();
    let mut from = start + 1;
    let mut i = from;
    while i <= end {
        let at_bar = i == end || (body[i] == b'|' && body[i - 1] != b'\\');
        if at_bar {
            let cell = &body[from..i];
            let lead = cell.len() - cell.trim_ascii_start().len();
            let trail = cell.len() - cell.trim_ascii_end().len();
            out.push((from + lead, (i - trail).max(from + lead)));
            from = i + 1;
        }
        i += 1;
    }
    (out.len() >= 2).then_some(out)
}

/// A delimiter row's cell: one hyphen or more, a colon at either end (GitHub Flavored
/// Markdown 0.29, 4.10: `|:--|`, `| - |`).
fn is_separator(cell: &[u8]) -> bool {
    let dashes = cell.trim_ascii().trim_ascii_start();
    let inner = dashes.strip_prefix(b":").unwrap_or(dashes);
    let inner = inner.strip_suffix(b":").unwrap_or(inner);
    !inner.is_empty() && inner.iter().all(|b| *b == b'-')
}

/// Reads one line: opens a table at a header that names a secret, confirms it at its
/// `|---|` line, ends it at a line that is no table line, and gives the spans of the cells
/// of a row under a secret's column.
pub(crate) fn read(table: &mut Option<Table>, body: &[u8]) -> Vec<Span> {
    if is_rule(body) {
        // Below a header, a box's rule stands for the `|---|` line; between rows or
        // below them, it goes on with the table.
        if let Some(t) = table {
            t.confirmed = true;
        }
        return Vec::new();
    }
    let Some(cells) = cells(body) else {
        *table = None;
        return Vec::new();
    };
    // A row that is a label and its value, in a table or a box or alone.
    let labelled = label_class(body, &cells).and_then(|class| cell_span(body, cells[1], class));
    if let Some(t) = table {
        if !t.confirmed {
            if cells.iter().all(|(s, e)| is_separator(&body[*s..*e])) {
                t.confirmed = true;
                return Vec::new();
            }
            *table = None;
        } else {
            let by_column: Vec<Span> = cells
                .iter()
                .zip(&t.columns)
                .filter_map(|(&cell, class)| cell_span(body, cell, (*class)?))
                .collect();
            return if by_column.is_empty() { labelled.into_iter().collect() } else { by_column };
        }
    }
    if labelled.is_some() {
        return labelled.into_iter().collect();
    }
    let columns = header(body, &cells);
    if columns.iter().any(Option::is_some) {
        *table = Some(Table { columns, confirmed: false });
    }
    Vec::new()
}

/// What each column's name in a header row says its values are.
fn header(body: &[u8], cells: &[(usize, usize)]) -> Vec<Option<Class>> {
    cells
        .iter()
        .map(|(s, e)| {
            let name: Vec<u8> = body[*s..*e].iter().map(|b| if *b == b' ' { b'_' } else { *b }).collect();
            // A column that says only `Key` beside a service's name: a key when its values
            // have a key's shape (a JSON object's `"key"` names nothing, so the name alone
            // does not say it).
            let bare_key = name.eq_ignore_ascii_case(b"key") || name.eq_ignore_ascii_case(b"keys");
            name_class(&name, Form::Colon).or(bare_key.then_some(Class::Generated))
        })
        .collect()
}

/// The inside of a cell that is one code span (`` `x` ``), else the cell.
fn code_span(body: &[u8], s: usize, e: usize) -> (usize, usize) {
    let cell = &body[s..e];
    if cell.len() > 2
        && cell[0] == b'`'
        && cell[cell.len() - 1] == b'`'
        && !cell[1..cell.len() - 1].contains(&b'`')
    {
        (s + 1, e - 1)
    } else {
        (s, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(lines: &[&str]) -> Vec<String> {
        let mut table = None;
        let mut out = Vec::new();
        for line in lines {
            for s in read(&mut table, line.as_bytes()) {
                out.push(line[s.start..s.end].to_string());
            }
        }
        out
    }

    #[test]
    fn a_column_named_as_a_secret_gives_its_cells_that_name() {
        let got = redacted(&[
            "| env | user | password |",
            "|-----|------|:--------:|",
            "| staging | svc_app | Fjord_Maple8497 |",
            "+| prod | svc_app | Fjord=Pixel3131 |",
            "| reporting | readonly | $DB_PASSWORD |",
            "",
            "| prod | svc_app | after-the-table1 |",
        ]);
        assert_eq!(got, ["Fjord_Maple8497", "Fjord=Pixel3131"]);
        let keys = redacted(&[
            "| Service | API key |",
            "| --- | --- |",
            "| Stripe | sk_test_4eC39HqLyjWDarjtT1zdp7dc |",
        ]);
        assert_eq!(keys, ["sk_test_4eC39HqLyjWDarjtT1zdp7dc"]);
        // A code span's backticks stay; a column that says only `Key` takes a key's shape.
        let spans = redacted(&[
            "| Service | Key |",
            "|:--|:--|",
            "| Algolia admin | `922a30cf94fb24b17e333c00702c878f` |",
            "| Docs | `see the wiki` |",
        ]);
        assert_eq!(spans, ["922a30cf94fb24b17e333c00702c878f"]);
    }

    /// A box a command draws: its rule below the header stands for `|---|`, and a row
    /// whose label names a secret gives its value that name.
    #[test]
    fn a_box_and_a_rows_label_name_their_cells() {
        let labelled = redacted(&[
            "+------------+------------------------------------------------------------------+",
            "| API Key    | XI8Q25J7NGRYKF39                                                 |",
            "| API Secret | awooPgdAgf5Fz88FQ6Vc+Jk+pb67vEmZR0xgmuk+G91u81G9cis12wGLPbaEnFJf |",
            "+------------+------------------------------------------------------------------+",
        ]);
        assert_eq!(
            labelled,
            ["XI8Q25J7NGRYKF39", "awooPgdAgf5Fz88FQ6Vc+Jk+pb67vEmZR0xgmuk+G91u81G9cis12wGLPbaEnFJf"]
        );
        let boxed = redacted(&[
            "+----------------------+------------------------------------------+",
            "| Key                  | Secret                                   |",
            "+----------------------+------------------------------------------+",
            "| HZRV4QJ6X3PA7MLE     | nS0kUq3mJ7x8yZ9Wb2Lc5Vd1Ef4Gh6Jk8Mn0Pq2R |",
            "+----------------------+------------------------------------------+",
        ]);
        // A column that says only `Key` takes a key's shape, as in a Markdown table.
        assert_eq!(boxed, ["HZRV4QJ6X3PA7MLE", "nS0kUq3mJ7x8yZ9Wb2Lc5Vd1Ef4Gh6Jk8Mn0Pq2R"]);
    }

    #[test]
    fn boxes_and_labels_that_name_no_secret_or_hold_no_value_are_left() {
        assert!(
            redacted(&[
                "+------+--------+",
                "| Name | Status |",
                "+------+--------+",
                "| web  | Up2Days8x |"
            ])
            .is_empty()
        );
        assert!(
            redacted(&["| password | string |", "| token | The token to use |", "| api_key | required |"])
                .is_empty()
        );
        assert!(redacted(&["| id | 8d98455d9e5b4bebab097d14a89028f8 |", "| Field | Value |"]).is_empty());
        assert!(redacted(&["| package | keyring-24.3.1 |", "| secret_name | prod/db/password |"]).is_empty());
    }

    #[test]
    fn tables_without_a_secrets_column_and_prose_with_bars_are_left() {
        assert!(redacted(&["| name | size |", "|---|---|", "| a | 1 |"]).is_empty());
        assert!(redacted(&["| password |", "not a separator", "| hunter2 |"]).is_empty());
        assert!(redacted(&["a | b | c"]).is_empty());
    }
}
