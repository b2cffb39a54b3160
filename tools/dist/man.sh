#!/usr/bin/env bash
# Man pages for twinlab and each of its commands, made by help2man from
# what 'twinlab --help' and 'twinlab COMMAND --help' print (so they cannot
# differ from the help), into DIR:
#
#   bash tools/dist/man.sh build/bin/twinlab DIR
set -euo pipefail

tl=$1
dir=$2
mkdir -p "$dir"
command -v help2man >/dev/null || {
	echo "man.sh: help2man is not installed (Debian package 'help2man')" >&2
	exit 1
}
version=$("$tl" --version)
help2man --no-info --version-string="${version#twinlab }" \
	--name="a digital twin of a ROADM/IP network carrying federated learning tasks" \
	--output="$dir/twinlab.1" "$tl"
# 'twinlab help' lists "  NAME  SYNOPSIS" then the description indented
"$tl" help | awk '
	/^  [a-z]/ { name = $1; next }
	name != "" && /^             / { sub(/^ +/, ""); print name "\t" $0; name = "" }
' | while IFS=$'\t' read -r cmd what; do
	[ "$cmd" = help ] || [ "$cmd" = version ] && continue
	page="$dir/twinlab-$cmd.1"
	help2man --no-info --version-string="${version#twinlab }" \
		--name="$what" --help-option="$cmd --help" \
		--output="$page.tmp" "$tl"
	up=$(printf '%s' "twinlab-$cmd" | tr a-z A-Z)
	sed -e "s/^\.TH TWINLAB /.TH $up /" \
		-e "0,/^twinlab \\\\- /s//twinlab-$cmd \\\\- /" \
		"$page.tmp" >"$page"
	rm -f "$page.tmp"
done
