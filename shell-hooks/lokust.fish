# lokust prompt hook for fish: keeps $XDG_STATE_HOME/lokust/live/<shell pid>.lok current.
#
# Load it from ~/.config/fish/config.fish with: lokust-shell init fish | source
# LOKUST_HOOK=0 turns it off; LOKUST_HOOK_INTERVAL (seconds, default 30) is the least
# time between two refreshes in the same directory. Private mode is respected.
#
# fish has no clock without a fork, so the hook runs lokust when the directory or the
# newest history entry changed, and lokust itself skips a refresh inside the interval.
# Sourcing twice is harmless: the function and its event handler are simply redefined.

set -g __lokust_bin lokust-shell
set -g __lokust_pwd ''
set -g __lokust_last ''
# A notice for this shell (conversations about to be deleted), left by a refresh.
if set -q XDG_STATE_HOME; and test -n "$XDG_STATE_HOME"
    set -g __lokust_notice $XDG_STATE_HOME/lokust/notices/$fish_pid
else
    set -g __lokust_notice $HOME/.local/state/lokust/notices/$fish_pid
end

function __lokust_hook --on-event fish_prompt
    set -l __lokust_status $status
    # Builtins only; emptied so it shows once.
    if test -s $__lokust_notice
        read -l __lokust_line <$__lokust_notice
        echo $__lokust_line >&2
        echo -n >$__lokust_notice
    end
    if test "$LOKUST_HOOK" = 0; or set -q fish_private_mode
        return $__lokust_status
    end
    set -l last (builtin history search --max 1 2>/dev/null)
    if test "$PWD" != "$__lokust_pwd"; or test "$last" != "$__lokust_last"
        set -g __lokust_pwd $PWD
        set -g __lokust_last "$last"
        set -l interval 30
        if string match -qr '^[0-9]+$' -- "$LOKUST_HOOK_INTERVAL"
            set interval $LOKUST_HOOK_INTERVAL
        end
        # The in-memory history, oldest first, NUL-terminated; fish hides a command
        # typed with a leading space but keeps the last one in memory, so lokust drops
        # those (--ignore-space). A disowned job is never reaped by fish 3.6 (one zombie
        # per refresh), so sh starts lokust in the background and exits at once: fish
        # reaps sh, and lokust no longer is fish's child. sh gives a background job
        # /dev/null as input unless told otherwise, hence fd 3.
        builtin history search --null --reverse --max 200 2>/dev/null | command sh -c 'exec 3<&0; "$@" <&3 3<&- >/dev/null 2>&1 &' sh $__lokust_bin snapshot --live $fish_pid --shell fish --history-from - --ignore-space --interval $interval
    end
    return $__lokust_status
end
