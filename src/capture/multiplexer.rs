//! The multiplexer section: the tmux session (asked of the tmux server itself, with a
//! deadline) or the zellij session this shell runs in.

use std::time::Duration;

use tmux_interface::{DisplayMessage, Tmux};

use crate::exec::{self, ExecError};
use crate::lok::Multiplexer;
use crate::probe::Probe;

/// The socket path inside a `$TMUX` value (`<socket>,<server pid>,<session index>`).
pub fn tmux_socket_path(tmux_var: &str) -> &str {
    // The socket path itself may contain commas; the last two fields are numbers.
    let mut parts = tmux_var.rsplitn(3, ',');
    let (Some(_), Some(_), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return tmux_var;
    };
    path
}

/// Asks the tmux server for `format` about `target`. `socket` selects the server
/// (`-S`); without it, the default server of this user.
pub fn tmux_query(
    socket: Option<&str>,
    target: Option<&str>,
    format: &str,
    deadline: Duration,
) -> Result<String, ExecError> {
    let mut query = DisplayMessage::new().print();
    if let Some(t) = target {
        query = query.target_pane(t);
    }
    let mut tmux = Tmux::new();
    if let Some(s) = socket {
        tmux = tmux.socket_path(s);
    }
    let cmd = tmux.command(query.message(format)).into_command();
    let out = exec::output(cmd, deadline)?;
    Ok(String::from_utf8_lossy(&out).trim_end_matches('\n').to_string())
}

/// The multiplexer this shell runs in. `named_session` (from `--tmux SESSION`) asks the
/// server about that session instead of the one in `$TMUX`.
pub fn capture(
    probe: &Probe,
    named_session: Option<&str>,
    deadline: Duration,
) -> Result<Option<Multiplexer>, ExecError> {
    let tmux_var = probe.var("TMUX");
    if tmux_var.is_some() || named_session.is_some() {
        let socket = tmux_var.map(tmux_socket_path);
        let target = match named_session {
            // A trailing colon makes tmux read the name as a session, not a pane.
            // `=` asks for that exact name, not a prefix match.
            Some(s) => Some(format!("={s}:")),
            None => probe.var("TMUX_PANE").map(str::to_string),
        };
        let answer = tmux_query(socket, target.as_deref(), "#{session_name}\t#{socket_path}", deadline)?;
        let (session, socket_path) = answer.split_once('\t').unwrap_or((answer.as_str(), ""));
        // tmux answers an unknown target with an empty line and success.
        if session.is_empty() {
            return Err(ExecError::NotFound(match (named_session, target) {
                (Some(s), _) => format!("the tmux server has no session named {s:?}"),
                (None, Some(t)) => format!("the tmux server has no pane {t} (from $TMUX_PANE)"),
                (None, None) => "the tmux server named no session".to_string(),
            }));
        }
        // `$TMUX` as the spec shows it; the server's socket path when we were not inside.
        let socket = tmux_var.map(str::to_string).or_else(|| Some(socket_path.to_string()));
        return Ok(Some(Multiplexer {
            kind: "tmux".into(),
            socket: socket.filter(|s| !s.is_empty()),
            session: Some(session.to_string()),
            ..Multiplexer::default()
        }));
    }
    if probe.var("ZELLIJ").is_some() || probe.var("ZELLIJ_SESSION_NAME").is_some() {
        return Ok(Some(Multiplexer {
            kind: "zellij".into(),
            socket: None,
            session: probe.var("ZELLIJ_SESSION_NAME").map(str::to_string),
            ..Multiplexer::default()
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn socket_path_from_tmux_var() {
        assert_eq!(tmux_socket_path("/tmp/tmux-501/default,12345,0"), "/tmp/tmux-501/default");
        assert_eq!(tmux_socket_path("/tmp/a,b/sock,1,2"), "/tmp/a,b/sock");
        assert_eq!(tmux_socket_path("/tmp/odd"), "/tmp/odd");
    }

    #[test]
    fn zellij_from_its_variables() {
        let probe = Probe::fake([("ZELLIJ", "0"), ("ZELLIJ_SESSION_NAME", "work")], Path::new("/"));
        let m = capture(&probe, None, Duration::from_secs(1)).unwrap().unwrap();
        assert_eq!((m.kind.as_str(), m.session.as_deref()), ("zellij", Some("work")));
        let none = Probe::fake([], Path::new("/"));
        assert_eq!(capture(&none, None, Duration::from_secs(1)).unwrap(), None);
    }
}
