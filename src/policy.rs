//! The one table of what, laid in a checkout, can run a command or grant a permission
//! when a program opens or enters that checkout: agents' project settings, hooks, MCP
//! servers, plugins and commands; editors' tasks and workspace settings; shells' directory
//! hooks. A restore lays none of these from someone else's file unless `--trust-config`.
//!
//! Each agent declares its own names through `Agent::config_names` (the agent layer
//! assembles the whole table); the names of tools lokust does not move are here, in
//! [`OTHER_TOOLS`]. Names match case-insensitively on path components, at any depth,
//! since a case-insensitive file system maps `.Claude/` onto `.claude/` and an agent
//! started in a subfolder reads that folder's settings.
//!
//! Left out on purpose: instruction files (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`,
//! `.cursorrules`) steer a model but grant nothing, and an agent still asks before it
//! runs what they suggest; build and package files (`Makefile`, `package.json` scripts,
//! `.husky/`, `.pre-commit-config.yaml`) run only when the user runs the build or installs
//! the hooks, as with any checkout they clone.

/// A name a tool reads configuration from, and what it can do from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigName {
    /// `dir/` a folder (everything below it), `*.ext` a file name ending, `a/b` a path of
    /// components, anything else a file name.
    pub pattern: &'static str,
    /// What a program does with it, for `--help`, the plan and SECURITY.md.
    pub what: &'static str,
}

/// Shorthand for the tables.
pub const fn name(pattern: &'static str, what: &'static str) -> ConfigName {
    ConfigName { pattern, what }
}

/// One program's names: an agent's (from the registry) or another tool's.
#[derive(Debug, Clone, Copy)]
pub struct Owner {
    pub tool: &'static str,
    pub names: &'static [ConfigName],
}

/// What other tools run by themselves when a checkout is opened or entered, from their
/// documentation.
pub const OTHER_TOOLS: &[Owner] = &[
    Owner {
        tool: "direnv, mise and other shell directory hooks",
        names: &[
            name(".envrc", "direnv runs it as shell code on cd"),
            name("mise.toml", "mise runs its hooks and tasks, and sources env files, on cd"),
            name(".mise.toml", "mise runs its hooks and tasks, and sources env files, on cd"),
            name("mise.local.toml", "mise runs its hooks and tasks, and sources env files, on cd"),
            name(".mise.local.toml", "mise runs its hooks and tasks, and sources env files, on cd"),
            name(".mise/", "mise's project config and tasks"),
            name("mise/config.toml", "mise's project config and tasks"),
            name(".config/mise/", "mise's project config and tasks"),
            name(".config/mise.toml", "mise's project config and tasks"),
            name(".autoenv.zsh", "zsh-autoenv sources it on cd"),
            name(".autoenv_leave.zsh", "zsh-autoenv sources it on leaving"),
        ],
    },
    Owner {
        tool: "editors",
        names: &[
            name(".vscode/", "VS Code tasks (runOn folderOpen), launch configs, terminal settings"),
            name("*.code-workspace", "VS Code workspace tasks and settings"),
            name(".devcontainer/", "dev container commands (postCreateCommand, initializeCommand)"),
            name(".devcontainer.json", "dev container commands (postCreateCommand, initializeCommand)"),
            name(".idea/", "JetBrains run configurations and startup tasks"),
            name(".zed/", "Zed tasks and language servers"),
            name(".helix/", "Helix language servers (commands it starts on open)"),
            name(".nvim.lua", "Neovim runs it with 'exrc'"),
            name(".nvimrc", "Neovim runs it with 'exrc'"),
            name(".exrc", "Vim runs it with 'exrc'"),
            name(".vimrc", "Vim runs a local one with 'exrc'"),
            name(".dir-locals.el", "Emacs evaluates its eval forms"),
            name(".dir-locals-2.el", "Emacs evaluates its eval forms"),
            name("*.sublime-project", "Sublime Text build systems"),
        ],
    },
    Owner {
        tool: "git and its helpers",
        names: &[
            name(".gitmodules", "submodule URLs git fetches with submodule.recurse"),
            name(".lfsconfig", "the Git LFS endpoint git-lfs sends credentials to"),
        ],
    },
    Owner {
        tool: "other coding agents",
        names: &[
            name(".cursor/", "Cursor MCP servers, hooks and rules"),
            name(".windsurf/", "Windsurf workflows and hooks"),
            name(".continue/", "Continue MCP servers and config"),
            name(".amazonq/", "Amazon Q MCP servers"),
            name(".kiro/", "Kiro hooks that run commands on file events"),
            name(".roo/", "Roo Code MCP servers and modes"),
            name(".aider.conf.yml", "aider's lint-cmd and test-cmd run after each edit"),
            name(
                ".env",
                "aider reads AIDER_LINT_CMD and AIDER_TEST_CMD from it, Gemini CLI its API settings",
            ),
        ],
    },
];

/// The whole table: every agent's names and [`OTHER_TOOLS`].
#[derive(Debug, Clone)]
pub struct Policy {
    owners: Vec<Owner>,
}

/// A path the policy withholds, with whose name it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub tool: &'static str,
    pub name: ConfigName,
}

impl Policy {
    pub fn new(owners: impl IntoIterator<Item = Owner>) -> Policy {
        Policy { owners: owners.into_iter().collect() }
    }

    /// The table as SECURITY.md shows it (a test keeps the two the same): one row per
    /// program, its names and what each does.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| program | names (any case, at any depth) | what it does with them |\n| --- | --- | --- |\n",
        );
        for owner in &self.owners {
            let names: Vec<String> = owner.names.iter().map(|n| format!("`{}`", n.pattern)).collect();
            let mut whats: Vec<&str> = owner.names.iter().map(|n| n.what).collect();
            whats.dedup();
            out.push_str(&format!("| {} | {} | {} |\n", owner.tool, names.join(", "), whats.join("; ")));
        }
        out
    }

    /// The entry `rel` (a path relative to a checkout, `/`-separated) falls under, if any.
    pub fn matches(&self, rel: &str) -> Option<Match> {
        let parts: Vec<String> = rel.split('/').filter(|c| !c.is_empty() && *c != ".").map(fold).collect();
        self.owners.iter().find_map(|owner| {
            owner
                .names
                .iter()
                .find(|n| pattern_matches(n.pattern, &parts))
                .map(|n| Match { tool: owner.tool, name: *n })
        })
    }
}

/// A name as a case-insensitive file system compares it, for the ASCII names of the
/// table: lower case, and the two letters Unicode folds onto ASCII ones (the long s onto
/// `s`; the Kelvin sign already lowers to `k`).
fn fold(name: &str) -> String {
    name.chars().flat_map(char::to_lowercase).map(|c| if c == '\u{17f}' { 's' } else { c }).collect()
}

/// Whether a path's lower-cased components hold `pattern` (see [`ConfigName::pattern`]).
fn pattern_matches(pattern: &str, parts: &[String]) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    if let Some(ending) = pattern.strip_prefix('*') {
        return parts.last().is_some_and(|last| last.ends_with(ending) && last.len() > ending.len());
    }
    let folder = pattern.ends_with('/');
    let want: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    if want.len() > parts.len() {
        return false;
    }
    (0..=parts.len() - want.len()).any(|at| {
        let fits = parts[at..at + want.len()].iter().zip(&want).all(|(p, w)| p == w);
        // A folder holds what is below it (or is itself being made); a file name must be
        // the last component.
        fits && (folder || at + want.len() == parts.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT: Owner = Owner {
        tool: "Claude Code",
        names: &[name(".claude/", "settings"), name(".mcp.json", "MCP servers")],
    };

    fn policy() -> Policy {
        Policy::new(std::iter::once(AGENT).chain(OTHER_TOOLS.iter().copied()))
    }

    #[test]
    fn names_match_in_any_case_at_any_depth() {
        let p = policy();
        for hit in [
            ".claude/settings.json",
            ".Claude/settings.json",
            "./.CLAUDE/commands/x.md",
            "sub/.claude/settings.local.json",
            ".mcp.json",
            "pkg/.MCP.JSON",
            ".envrc",
            "a/b/.VSCode/tasks.json",
            "team.code-workspace",
            ".mcp.j\u{17f}on",
            ".\u{212a}iro/hooks/x",
            ".config/mise/config.toml",
            ".env",
        ] {
            assert!(p.matches(hit).is_some(), "{hit}");
        }
        for miss in [
            "src/claude/settings.json",
            "docs/.mcp.json.md",
            ".envrc.example/x",
            "README.md",
            "CLAUDE.md",
            ".code-workspace-notes/x",
            ".github/workflows/ci.yml",
            "x.claude",
        ] {
            assert_eq!(p.matches(miss), None, "{miss}");
        }
    }

    #[test]
    fn a_match_names_its_tool() {
        assert_eq!(policy().matches(".envrc").unwrap().tool, OTHER_TOOLS[0].tool);
        assert_eq!(policy().matches(".claude/x").unwrap().tool, "Claude Code");
    }
}
