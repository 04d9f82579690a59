#!/usr/bin/env bash
# Writes the man page migsched(1) to stdout from the CLI's own help text:
# `migsched --help` gives the command list and `migsched CMD --help` each
# command's section, so the page can never disagree with --help. Called by
# `make install` (mk/install.mk); the help text is written verbatim (.nf),
# with roff's special characters escaped.
#
#   bash scripts/man.sh path/to/migsched VERSION > migsched.1
set -eu
bin=${1:?usage: scripts/man.sh MIGSCHED VERSION}
version=${2:-0.0.0}

# roff-safe text: a backslash doubled, a leading . or ' made literal
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

cmds=$("$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
echo ".TH MIGSCHED 1 \"\" \"migsched $version\" \"User Commands\""
echo ".SH NAME"
echo "migsched \\- fragmentation-aware scheduler and simulator for NVIDIA Multi-Instance GPUs"
echo ".SH SYNOPSIS"
echo ".B migsched"
echo ".I command"
echo "[\\fIoptions\\fR]"
echo ".SH DESCRIPTION"
echo ".nf"
"$bin" --help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $cmds; do
    echo ".SS $c"
    echo ".nf"
    "$bin" "$c" --help | esc
    echo ".fi"
done
cat <<'ROFF'
.SH EXIT STATUS
.TP
.B 0
success (for \fBcheck\fR: the schedule is valid)
.TP
.B 1
bad input data or a failure while running; the message names the file,
line and field (for \fBcheck\fR: the schedule has violations)
.TP
.B 2
bad usage: an unknown or missing option, or an option value outside its
documented range; the message names the option and the range
.SH FILES
Formats of traces, schedules and metrics: docs/formats.md in the source.
.SH SEE ALSO
The library: \fBpkg-config \-\-cflags \-\-libs migsched\fR.
ROFF
