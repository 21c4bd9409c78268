//! The agents whose sessions lokust moves with a project, one module each: what may
//! travel, and what of an agent's configuration a restore may install. Claude Code is
//! the first; Codex, Gemini CLI, OpenCode, Droid and codeloops come next, each as one
//! module here behind the interface they will share.

pub mod claude;
pub mod gemini;
