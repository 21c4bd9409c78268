#!/bin/sh
# lokust for tmux: prefix + C-e saves the current pane, with its scrollback, to
# $XDG_STATE_HOME/lokust/exports/ (lokust-tmux export); prefix + M-e saves every window
# and pane of the session, each agent pane with its conversation (export --session).
#
# Load it from tmux.conf with `source-file /path/to/lokust.tmux`, or as a TPM plugin
# (TPM runs this file; the line below hands it back to tmux as a config file). \
exec tmux source-file "$0"
#
# Options, set before this file is loaded:
#   @lokust-export-key  the key after the prefix (default C-e, free in tmux's defaults)
#   @lokust-session-key the key for the whole session (default M-e, free too)
#   @lokust-bin         lokust-tmux's path, when it is not on tmux's PATH
#
# A comment ending in a backslash continues in tmux's parser but not in sh's, which is
# what makes this file both a shell script and a tmux configuration file.
run-shell "'#{?@lokust-bin,#{@lokust-bin},lokust-tmux}' bind --apply"
