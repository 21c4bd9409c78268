//! The multiplexer section: the tmux session (asked of the tmux server itself, with a
//! deadline) or the zellij session this shell runs in; and the one tmux client every
//! part of lokust talks to tmux through.

use std::ffi::OsStr;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

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
/// (`-S`); without it, the default server of this user. Empty when tmux knows no such
/// target.
pub fn tmux_query(
    socket: Option<&str>,
    target: Option<&str>,
    format: &str,
    deadline: Duration,
) -> Result<String, ExecError> {
    let server = Server { args: socket.map(|s| vec!["-S".into(), s.into()]).unwrap_or_default() };
    Ok(server.query(target, format, deadline)?.unwrap_or_default())
}

/// Which tmux server to talk to: `-S PATH`, `-L NAME`, the one in `$TMUX`, or tmux's
/// default server.
#[derive(Debug, Clone, Default)]
pub struct Server {
    args: Vec<OsString>,
}

impl Server {
    pub fn new(socket_name: Option<&str>, socket_path: Option<&Path>, probe: &Probe) -> Server {
        let args: Vec<OsString> = match (socket_path, socket_name, probe.var("TMUX")) {
            (Some(p), _, _) => vec!["-S".into(), p.into()],
            (None, Some(n), _) => vec!["-L".into(), n.into()],
            (None, None, Some(t)) => {
                vec!["-S".into(), tmux_socket_path(t).into()]
            }
            (None, None, None) => Vec::new(),
        };
        Server { args }
    }

    /// A `tmux` command aimed at this server.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        // -u: without a UTF-8 locale (a key binding's job may have none) tmux 3.3 prints
        // the tabs that separate our fields, and any non-ASCII path, as `_`.
        cmd.arg("-u").args(&self.args);
        cmd
    }

    /// Runs a tmux command within `deadline` and returns its output.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S], deadline: Duration) -> Result<String, ExecError> {
        let mut cmd = self.command();
        cmd.args(args);
        let out = exec::output(cmd, deadline)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// `display-message -p` about `target`; `None` when tmux knows no such target (tmux
    /// 3.3 answers an unknown target with an empty line and success).
    pub fn query(
        &self,
        target: Option<&str>,
        format: &str,
        deadline: Duration,
    ) -> Result<Option<String>, ExecError> {
        let mut args = vec!["display-message", "-p"];
        if let Some(t) = target {
            args.extend(["-t", t]);
        }
        args.push(format);
        let out = self.run(&args, deadline)?;
        let out = out.trim_end_matches('\n');
        Ok((!out.trim().is_empty()).then(|| out.to_string()))
    }

    /// Shows `message` on the status line of the clients looking at `target`. Best effort:
    /// with no client attached there is nobody to tell.
    pub fn display(&self, target: Option<&str>, message: &str, deadline: Duration) {
        let mut args = vec!["display-message"];
        if let Some(t) = target {
            args.extend(["-t", t]);
        }
        // The message is a format: a `#` in a path must not start one.
        let escaped = message.replace('#', "##");
        args.push(&escaped);
        let _ = self.run(&args, deadline);
    }
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
