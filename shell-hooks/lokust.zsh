# lokust prompt hook for zsh: keeps $XDG_STATE_HOME/lokust/live/<shell pid>.lok current.
#
# Load it from ~/.zshrc with: eval "$(lokust-shell init zsh)"
# LOKUST_HOOK=0 turns it off; LOKUST_HOOK_INTERVAL (seconds, default 30) is the least
# time between two refreshes in the same directory.
#
# The prompt is sacred: the decision is made in zsh (no fork), and only when the
# directory changed, or new commands ran and the interval passed, does one background
# job (&!: no job table entry, no "done" message) run lokust. Sourcing twice is harmless.

# EPOCHREALTIME needs zsh/datetime; $history (the in-memory history) needs zsh/parameter.
\builtin zmodload -F zsh/datetime p:EPOCHREALTIME 2>/dev/null
\builtin zmodload -F zsh/parameter p:history 2>/dev/null

typeset -g __lokust_bin='lokust-shell'
# A notice for this shell (conversations about to be deleted), left by a refresh.
typeset -g __lokust_notice="${XDG_STATE_HOME:-$HOME/.local/state}/lokust/notices/$$"
typeset -g __lokust_pwd=''
typeset -gi __lokust_histcmd=-1 __lokust_at=0

# Runs in the background. $history lists the newest entry first, so the newest 200 are
# reversed and handed over NUL-terminated (fc -l would escape newlines ambiguously).
__lokust_save() {
  # With hist_ignore_space zsh keeps the last such command in memory until the next one:
  # lokust drops it too. Read before emulate resets the options.
  \builtin local __lokust_hide=
  [[ -o hist_ignore_space ]] && __lokust_hide=--ignore-space
  \builtin emulate -L zsh # 1-based arrays even under ksh_arrays; it runs in the background
  \builtin print -rN -- "${(@Oa)${(@v)history}[1,200]}" 2>/dev/null |
    \command "$__lokust_bin" snapshot --live "$1" --as-of "$2" --shell zsh --history-from - $__lokust_hide >/dev/null 2>&1
}

__lokust_precmd() {
  \builtin local -i __lokust_status=$?
  # $(<file) reads without a fork; emptied so it shows once.
  if [[ -s $__lokust_notice ]]; then
    \builtin print -ru2 -- "$(<$__lokust_notice)"
    : >|$__lokust_notice
  fi
  if [[ ${LOKUST_HOOK:-1} != 0 ]]; then
    \builtin local -i __lokust_now=${${EPOCHREALTIME:-0}%%[.,]*} __lokust_every=30
    # Only digits reach arithmetic: "1m" would print a math error at every prompt.
    [[ ${LOKUST_HOOK_INTERVAL:-} == <-> ]] && __lokust_every=$LOKUST_HOOK_INTERVAL
    if [[ $PWD != "$__lokust_pwd" ]] ||
      ((HISTCMD != __lokust_histcmd && __lokust_now - __lokust_at >= __lokust_every)); then
      __lokust_pwd=$PWD
      __lokust_histcmd=$HISTCMD
      __lokust_at=$__lokust_now
      # The time orders the writes: one forked earlier may be scheduled later.
      __lokust_save $$ "${EPOCHREALTIME:-}" &!
    fi
  fi
  return $__lokust_status
}

# In a function, so the user's nounset and ksh_arrays cannot break the array edit.
() {
  \builtin emulate -L zsh
  \builtin typeset -ga precmd_functions
  precmd_functions=(${precmd_functions:#__lokust_precmd} __lokust_precmd)
}
