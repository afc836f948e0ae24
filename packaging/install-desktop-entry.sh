#!/bin/sh
# Adds Maskscope to the desktop's application menu, for this user: the launcher and the icon
# go to ~/.local/share (XDG_DATA_HOME). Run it from the standalone app's folder, where
# `make package` copies it, or from packaging/ for an installed `maskscope` command.
# `install-desktop-entry.sh --remove` takes them away again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
entry=$data/applications/maskscope.desktop
icon=$data/icons/hicolor/scalable/apps/maskscope.svg

case "${1:-}" in
    ""|--remove) ;;
    *) echo "usage: $0 [--remove]" >&2; exit 2 ;;
esac
if [ "${1:-}" = "--remove" ]; then
    rm -f "$entry" "$icon"
    echo "Removed $entry and $icon"
    exit 0
fi
if [ -x "$here/maskscope" ]; then
    program=$here/maskscope          # the standalone app, wherever its folder is
    svg=$here/_internal/resources/icons/maskscope.svg
else
    program=maskscope                # an installed command, found on PATH
    svg=$here/../resources/icons/maskscope.svg
fi
mkdir -p "$(dirname "$entry")" "$(dirname "$icon")"
cp "$svg" "$icon"
sed -e "s|^Exec=maskscope |Exec=\"$program\" |" -e "s|^TryExec=maskscope$|TryExec=$program|" \
    "$here/maskscope.desktop" > "$entry"
echo "Added $entry (runs $program) and $icon"
