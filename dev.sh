#!/bin/sh
# Set-up and entry point for a fresh Debian machine (root, Python 3.11, nothing else):
#   ./dev.sh run    installs racperf into .venv and starts the dashboard
#   ./dev.sh test   installs fio, sysstat, iperf3, openssh-server and the test deps, runs the suite
# Everything else lives in the Makefile; this only makes sure `make` itself is there.
set -e
cd "$(dirname "$0")"
if ! command -v make >/dev/null 2>&1; then
    echo "dev.sh: installing make with apt-get" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make
fi
target=${1:-run}
[ $# -gt 0 ] && shift
exec make --no-print-directory "$target" "$@"
