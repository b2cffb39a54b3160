#!/usr/bin/env bash
# Set up twinlab on a fresh Debian 12 machine (as root) and run one job:
#
#   bash tools/bootstrap.sh demo    install, build, run the default demo
#   bash tools/bootstrap.sh check   install, build, run the test suite
#
# Installing is skipped for packages already present, so it is cheap to
# run again.
set -euo pipefail

cd "$(dirname "$0")/.."

packages=(
	gcc make pkg-config
	libyaml-dev libjson-c-dev libcriterion-dev
	libmnl-dev libnetfilter-queue-dev libcgroup-dev libsqlite3-dev
	libglpk-dev libmetis-dev libmicrohttpd-dev
	iproute2 iptables iputils-ping time
	graphviz gnuplot-nox help2man
	clang libclang-rt-14-dev
)

job=${1:-}
case "$job" in
demo|check) ;;
*)
	echo "usage: bash tools/bootstrap.sh demo|check" >&2
	exit 2
	;;
esac

# the tests drive Debian's chromium against the live view, and check
# exported topology files against containerlab's schema
if [ "$job" = check ]; then
	packages+=(chromium python3 python3-jsonschema python3-yaml)
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: missing packages: ${missing[*]}; run as root" >&2
		exit 1
	fi
	echo "bootstrap: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# the live view's graph library, from npm by the lock file (twinlab view
# serves the page without it, saying so)
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	echo "bootstrap: installing npm (for the live view's page)"
	apt-get install -y -q --no-install-recommends npm ||
		echo "bootstrap: warning: npm could not be installed" >&2
fi
if command -v npm >/dev/null 2>&1; then
	npm ci --prefix tools/view --no-audit --no-fund --loglevel=error ||
		echo "bootstrap: warning: npm could not install the view's" \
			"graph library; 'twinlab view' will list loads only" >&2
	if [ "$job" = check ]; then
		npm ci --prefix tests/browser --no-audit --no-fund \
			--loglevel=error ||
			echo "bootstrap: warning: npm could not install" \
				"playwright-core; the browser test is skipped" >&2
	fi
else
	echo "bootstrap: warning: no npm; 'twinlab view' will list loads" \
		"only" >&2
fi

make -j"$(nproc)"
make "$job"
