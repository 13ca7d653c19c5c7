#!/bin/sh
# racperf offline installer: installs racperf from the wheels beside this script, with no
# network. Usage: sh install.sh [--prefix DIR] [--python PY]
#
# The other nodes of the cluster need nothing: racperf reaches them over SSH with sh and cat.
# The runs store and settings live in the data dir (~/.local/share/racperf, or
# $RACPERF_DATA_DIR), never under the prefix, so an upgrade keeps them.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# the caller's Python settings stay out: a PYTHONPATH naming a racperf checkout made pip find
# racperf "already installed" there and install nothing (and pip's own config and variables:
# --isolated below)
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONUSERBASE PYTHONNOUSERSITE PYTHONSAFEPATH
prefix=""
python=""

say() { printf 'install.sh: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

usage() {
    cat <<USAGE
usage: sh install.sh [--prefix DIR] [--python PY]
  --prefix DIR  where racperf goes (default /opt/racperf as root, else ~/.local/racperf);
                the command is DIR/bin/racperf
  --python PY   the Python to use (3.11 or 3.12; default: python3.12, python3.11, python3 on PATH)
USAGE
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --python) [ $# -ge 2 ] || fail "--python needs a program"; python=$2; shift 2 ;;
        --python=*) python=${1#--python=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; fail "unknown argument: $1" ;;
    esac
done

if [ -z "$prefix" ]; then
    if [ "$(id -u)" = 0 ]; then prefix=/opt/racperf; else prefix=${HOME:?}/.local/racperf; fi
fi

# 1. The bundle is whole: every file it lists, with its checksum (a truncated copy fails here,
#    before anything is written).
[ -f "$here/SHA256SUMS" ] || fail "no SHA256SUMS beside install.sh in $here: unpack the whole racperf-*-offline.tar.gz"
if ! (cd "$here" && sha256sum -c --quiet --strict SHA256SUMS >/dev/null 2>&1); then
    bad=$(cd "$here" && sha256sum -c --quiet SHA256SUMS 2>/dev/null | head -n 3 | tr '\n' ' ')
    fail "the bundle in $here is damaged or incomplete (${bad:-checksums do not match}): copy the .tar.gz again and compare its sha256sum with the one it was built with"
fi
version=$(cat "$here/VERSION")

# 2. This machine's architecture has wheels here.
arch=$(uname -m)
case "$arch" in
    x86_64|aarch64) ;;
    *) fail "this machine is $arch: the bundle holds wheels for x86_64 and aarch64 only" ;;
esac

# 3. A Python of the right version.
os_hint() {
    id=""; ver=""
    if [ -r /etc/os-release ]; then
        id=$(. /etc/os-release && printf '%s' "${ID:-}")
        ver=$(. /etc/os-release && printf '%s' "${VERSION_ID:-}")
    fi
    case "$id" in
        ol|rhel|centos|rocky|almalinux|fedora) printf 'dnf install python3.11 (AppStream; python3.12 on %s %s works too)' "$id" "$ver" ;;
        debian|ubuntu) printf 'apt-get install python3.11 (or python3.12)' ;;
        sles|opensuse*) printf 'zypper install python311' ;;
        *) printf 'install Python 3.11 or 3.12 from your distribution' ;;
    esac
}
python_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
if [ -n "$python" ]; then
    command -v "$python" >/dev/null 2>&1 || fail "--python $python: no such program. racperf needs Python 3.11 or 3.12: $(os_hint)"
    found=$(python_version "$python" || true)
    case "$found" in
        3.11|3.12) ;;
        *) fail "--python $python is Python ${found:-of unknown version}; racperf needs 3.11 or 3.12: $(os_hint)" ;;
    esac
else
    for candidate in python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then
            case "$(python_version "$candidate" || true)" in
                3.11|3.12) python=$(command -v "$candidate"); break ;;
            esac
        fi
    done
    [ -n "$python" ] || fail "no Python 3.11 or 3.12 on PATH (python3 is $(python_version python3 || echo 'missing')); nothing was changed. $(os_hint), then run install.sh again (or give --python)"
fi
pyver=$(python_version "$python")
tag=cp$(printf '%s' "$pyver" | tr -d .)
ls "$here"/wheels/numpy-*-"$tag"-"$tag"-*"$arch"*.whl >/dev/null 2>&1 \
    || fail "the bundle has no wheels for Python $pyver on $arch"
"$python" -c 'import venv' 2>/dev/null || fail "$python has no venv module: $(os_hint) (with its venv package)"

# 4. The prefix is ours to write.
mkdir -p "$prefix" 2>/dev/null || fail "cannot create $prefix as $(id -un): run as root or give --prefix DIR"
[ -w "$prefix" ] || fail "$prefix is not writable by $(id -un): run as root or give --prefix DIR"
prefix=$(cd "$prefix" && pwd)

# 5. Install into a directory of its own (a venv names its path in its scripts, so it is made
#    where it stays), check it, then switch PREFIX/current to it. A failure anywhere before the
#    switch removes that directory and leaves the previous install (or nothing) as it was.
target="$prefix/racperf-$version-py$pyver-$(date +%Y%m%d%H%M%S)-$$"
cleanup() { rm -rf "$target"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
"$python" -m venv --without-pip "$target" || fail "$python -m venv failed in $target"
# pip runs from its wheel: the target Python needs no ensurepip (Debian splits it out)
pip_wheel=$(ls "$here"/wheels/pip-*.whl | head -n 1)
if ! "$target/bin/python" "$pip_wheel/pip" install --isolated --quiet --no-index --no-cache-dir \
        --disable-pip-version-check --find-links "$here/wheels" "racperf_tui==$version"; then
    fail "pip could not install racperf $version from $here/wheels (its message is above); nothing was changed"
fi
if ! said=$("$target/bin/racperf" --version 2>&1); then
    fail "the new racperf does not start ($target/bin/racperf --version: $(printf '%s' "$said" | tail -n 1)); nothing was changed"
fi
"$target/bin/racperf" iostat -x 1 1 >/dev/null 2>&1 || say "warning: 'racperf iostat -x 1 1' failed here (no /proc/diskstats?); installing anyway"

ln -sfn "$(basename "$target")" "$prefix/current.new.$$"
mv -T "$prefix/current.new.$$" "$prefix/current"
mkdir -p "$prefix/bin"
ln -sfn ../current/bin/racperf "$prefix/bin/racperf.new.$$"
mv -T "$prefix/bin/racperf.new.$$" "$prefix/bin/racperf"
trap - EXIT INT TERM
# earlier installs go once the new one is in place
for old in "$prefix"/racperf-*; do
    if [ -d "$old" ] && [ "$old" != "$target" ]; then rm -rf "$old"; fi
done

echo "racperf $version installed in $target (Python $pyver, $arch)"
echo "run: $prefix/bin/racperf   (runs and settings stay in the data dir: ~/.local/share/racperf)"
