//! Integration tests: every test drives the built binaries against real files, a real
//! git, real shells and a real tmux server on a private socket.

mod util;

// The library's modules depend on each other in one direction only.
mod layers;
// The .lok format: schema, fixtures, version and unknown-field handling.
mod format;
// lokust-shell-snapshot against a temp HOME with real histories, git, tmux, Claude trees.
mod snapshot;
// lokust-shell inspect on both variants and on the real sessions in fixtures/real.
mod inspect;
// inspect --transcript: every agent's conversation as normalized events, escaped and redacted.
mod inspect_transcript;
// cargo install yields the binaries; the package carries man pages, hooks and schemas.
mod install;
// lokust-shell doctor: checks, fixes, exit status, JSON without keys.
mod doctor;
// lokust-shell find: a conversation by its id in every agent's store.
mod find;
// The archive keeps what Claude Code deletes; list, prune, and one conversation back.
mod archive;
// lokust-shell move: a project renamed on this machine keeps its conversations.
mod move_project;
// --help, man pages and completions stay in step with the clap definitions.
mod docs;
// lokust-tmux: a key pressed by a real client exports the pane; import brings it back.
mod tmux;
// Whole tmux sessions: every window and pane, each agent pane on its own conversation.
mod tmux_session;
// The prompt hooks in real zsh, bash and fish, and the live snapshots they keep.
mod hooks;
// The redactor over the corpus: recall and false-positive rate, and the filter.
mod redact;
// lokust-shell redact on real transcripts: valid JSON out, only secrets changed.
mod redact_transcript;
// A bounded property test: never a panic, idempotent, JSON in is JSON out, signatures kept.
mod redact_fuzz;
// A corpus apart from the rules: credential files and shell families, every view.
mod redact_scored;
// A corpus written without reading the rules, with a held-out part: recall and clean text.
mod redact_unlisted;
// lokust-shell-snapshot --bundle: the Claude Code project inside the .lok, redacted.
mod bundle;
// lokust-shell-restore: paths rewritten, extras placed, merges, hostile input, interruptions.
mod restore;
// Issue 10: what a restore of someone else's file may install, export and append.
mod trust;
// The real Claude Code CLI resumes a moved conversation against a local Messages API stand-in.
mod claude_cli;
// Sealed .lok files against the age and age-keygen programs and ssh-keygen's keys.
mod seal;
// The real Gemini CLI resumes a moved conversation against a local Gemini API stand-in.
mod gemini_cli;
// The real Codex CLI resumes a moved conversation against a local Responses API stand-in.
mod codex_cli;
// The real Factory Droid resumes a moved session against a local chat-completions stand-in.
mod droid_cli;
// The real OpenCode resumes a moved session against a local chat-completions stand-in.
mod opencode_cli;
// The real GitHub Copilot CLI resumes moved sessions against a local chat-completions stand-in.
mod copilot_cli;
// codeloops session logs, from its format document (no binary is reachable).
mod codeloops;
// A stranger's .lok against the placement policy: payload-read paths, links, grants.
mod placement;
// A property test of the placement policy: hostile elements of every kind stay in their roots.
mod placement_fuzz;
// Issue 14: unpushed commits, index, working tree and untracked files carried and laid back.
mod worktree;
// Issue 14 through the binaries: snapshot --bundle carries the work, restore lays it.
mod worktree_cli;
