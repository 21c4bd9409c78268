//! Agents whose conversations lokust moves with a project, one module each.

pub mod gemini;
