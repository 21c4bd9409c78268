# shellcheck shell=bash
# lokust prompt hook for bash: keeps $XDG_STATE_HOME/lokust/live/<shell pid>.lok current.
#
# Load it from ~/.bashrc with: eval "$(lokust-shell init bash)"
# LOKUST_HOOK=0 turns it off; LOKUST_HOOK_INTERVAL (seconds, default 30) is the least
# time between two refreshes in the same directory.
#
# The decision is made in bash (no fork); only when the directory changed, or new
# commands ran and the interval passed, does one background job run lokust. The hook
# joins PROMPT_COMMAND (string or bash 5.1 array) in front, so the commands already
# there still see the status of the user's command. Sourcing twice is harmless.

__lokust_bin='lokust-shell'
# A notice for this shell (conversations about to be deleted), left by a refresh.
__lokust_notice="${XDG_STATE_HOME:-${HOME}/.local/state}/lokust/notices/$$"
__lokust_pwd=''
__lokust_histcmd=-1
__lokust_at=0

# Runs in the background: fc -l lists the in-memory history, which is fresher than
# HISTFILE (bash writes that at exit unless history -a runs).
__lokust_save() {
  # shellcheck disable=SC2312 # nobody is there to hear fc's status
  \builtin fc -l -200 2>/dev/null |
    \command "${__lokust_bin}" snapshot --live "$1" --as-of "$2" --shell bash --history-from - >/dev/null 2>&1
}

__lokust_hook() {
  \builtin local __lokust_status=$?
  # Builtins only (read, printf, a redirection): emptied so it shows once.
  if [[ -s ${__lokust_notice} ]]; then
    \builtin local __lokust_line=''
    IFS= \builtin read -r __lokust_line <"${__lokust_notice}"
    \builtin printf '%s\n' "${__lokust_line}" >&2
    : >"${__lokust_notice}"
  fi
  if [[ ${LOKUST_HOOK:-1} != 0 ]]; then
    # EPOCHREALTIME is bash 5; before it, only a change of directory refreshes.
    \builtin local __lokust_now=${EPOCHREALTIME:-0}
    __lokust_now=${__lokust_now%%[.,]*}
    \builtin local __lokust_every=30
    # Only digits reach arithmetic: "1m" would print an error at every prompt.
    if [[ ${LOKUST_HOOK_INTERVAL:-} =~ ^[0-9]+$ ]]; then
      __lokust_every=${LOKUST_HOOK_INTERVAL}
    fi
    if [[ ${PWD} != "${__lokust_pwd}" ]] ||
      ((${HISTCMD:-0} != __lokust_histcmd && __lokust_now - __lokust_at >= __lokust_every)); then
      __lokust_pwd=${PWD}
      __lokust_histcmd=${HISTCMD:-0}
      __lokust_at=${__lokust_now}
      # The time orders the writes: one forked earlier may be scheduled later.
      # An interactive bash announces a background job ("[1] 1234") unless job control
      # is off while it starts; disown keeps the "Done" line away.
      if [[ $- == *m* ]]; then
        \builtin set +m
        __lokust_save "$$" "${EPOCHREALTIME:-}" &
        \builtin disown $!
        \builtin set -m
      else
        __lokust_save "$$" "${EPOCHREALTIME:-}" &
        \builtin disown $!
      fi
    fi
  fi
  return "${__lokust_status}"
}

if [[ ${PROMPT_COMMAND+set} == set && ${PROMPT_COMMAND@a} == *a* ]]; then
  if [[ " ${PROMPT_COMMAND[*]} " != *" __lokust_hook "* ]]; then
    PROMPT_COMMAND=(__lokust_hook "${PROMPT_COMMAND[@]}")
  fi
elif [[ ${PROMPT_COMMAND:-} != *__lokust_hook* ]]; then
  # shellcheck disable=SC2128,SC2178 # this branch is the plain string form
  PROMPT_COMMAND="__lokust_hook${PROMPT_COMMAND:+;${PROMPT_COMMAND}}"
fi
