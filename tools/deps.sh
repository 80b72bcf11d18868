#!/usr/bin/env bash
# Install what building and testing rtmux needs (run by `make deps`). Idempotent: it installs only
# what is missing, and reinstalls the Python tools only when tools/requirements.txt changed.
#
#   1. Debian packages: cross compiler and the arm64 C library (static Linux programs under guest/),
#      picolibc for arm64 (the C library of rtos applications), QEMU, dtc, cpio, clang-format, make,
#      gcc, cmake (the rtos SDK's CMake files are tested), python3 + venv + pip, tmux (the terminal test),
#      diod (the host's copy of the 9P server Linux runs for the rtos: the file client's unit test),
#      u-boot-tools (mkimage: boot.scr's bytes are compared with its own), gdb-multiarch (`./rtmux run
#      --gdb`: the debugger of the rtos, the hypervisor and Linux's kernel; docs/debugging.md).
#   2. The project's virtual environment .venv with the pinned Python tools (pytest, ruff, matplotlib).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
requirements="$root/tools/requirements.txt"
stamp="$venv/.rtmux-requirements.sha256"

packages=(
    gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross picolibc-aarch64-linux-gnu
    qemu-system-arm device-tree-compiler cpio
    clang-format make gcc cmake python3 python3-venv python3-pip tmux diod u-boot-tools
    gdb-multiarch
)

say() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

installed() {
    dpkg -s "$1" 2>/dev/null | grep -qx 'Status: install ok installed'
}

apt_install() {
    # Installs the given Debian packages, or says exactly what to run when not root.
    if [ "$(id -u)" -ne 0 ]; then
        printf 'deps: error: missing Debian packages: %s\n' "$*" >&2
        printf 'deps: install them as root with:\n  apt-get update && apt-get install -y %s\n' "$*" >&2
        printf 'deps: then run `make deps` again.\n' >&2
        exit 1
    fi
    say "installing Debian packages: $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "$@"
}

# -- 1. Debian packages -----------------------------------------------------------------------------
if [ ! -r /etc/debian_version ] || ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
    die "this script supports Debian (and derivatives) only; install by hand: ${packages[*]}"
fi

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    say "Debian packages: all ${#packages[@]} present"
else
    apt_install "${missing[@]}"
fi

# -- 2. Python virtual environment ------------------------------------------------------------------
has_venv() { "$1" -c 'import venv, ensurepip' >/dev/null 2>&1; }

python=""
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && has_venv "$candidate"; then
        python="$candidate"
        break
    fi
done
if [ -z "$python" ]; then
    # Debian splits venv/ensurepip out of python3; the versioned package is what provides them.
    version="$(/usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install python3-venv "python${version}-venv"
    has_venv /usr/bin/python3 || die "python3 still lacks the venv module after installing python3-venv"
    python=/usr/bin/python3
fi

if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'pass' >/dev/null 2>&1; then
    say ".venv is broken (its interpreter does not run); recreating it"
    rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
    say "creating .venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
    rm -f "$stamp"
else
    say ".venv present ($("$venv/bin/python" --version 2>&1))"
fi

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" = "$have" ]; then
    say "Python tools up to date (tools/requirements.txt unchanged)"
else
    say "installing Python tools from tools/requirements.txt into .venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$requirements"
    printf '%s\n' "$want" > "$stamp"
fi
say "done"
