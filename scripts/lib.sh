# Shared helpers for scripts/run and scripts/test. Sourced, not executed.

# Each step prints the time since the run began, so a slow stage shows in
# CI's log without a profiler.
STEP_START=${STEP_START:-$(date +%s)}
export STEP_START
step() { printf '\n==> [%4ss] %s\n' "$(( $(date +%s) - STEP_START ))" "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

APT_UPDATED=0
apt_install() {
  # apt holds one lock: a foreground install waits for the background one.
  apt_wait || return 1
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  step "installing ${missing[*]}"
  if [ "$APT_UPDATED" = 0 ]; then
    as_root apt-get update -qq
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# System packages that later stages need (GUI libraries, PostgreSQL, Xvfb)
# install in the background while the Rust build keeps the CPU busy: apt
# waits on the network and the disk. The job writes its exit status to
# APT_BG_DONE, so apt_wait works from any subshell (a stage's `( … )`
# cannot `wait` for a process its parent started). Extra commands to run
# after apt (such as npm ci, which needs node from apt) go after `--`.
APT_BG_LOG=target/apt-install.log
APT_BG_DONE=target/apt-install.status
apt_install_in_background() {
  local pkgs=() after=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do pkgs+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  after=("$@")
  mkdir -p target
  rm -f "$APT_BG_DONE"
  (
    rc=0
    apt_install "${pkgs[@]}" || rc=$?
    if [ "$rc" = 0 ] && [ ${#after[@]} -gt 0 ]; then "${after[@]}" || rc=$?; fi
    echo "$rc" >"$APT_BG_DONE"
  ) >"$APT_BG_LOG" 2>&1 &
  # Set after the fork, so the job's own apt_install does not wait for itself.
  export APT_BG_STARTED=1
}

# Waits for apt_install_in_background's job, if one was started, and fails
# with its log if it failed.
apt_wait() {
  [ "${APT_BG_STARTED:-0}" = 1 ] || return 0
  if [ ! -f "$APT_BG_DONE" ]; then
    step "waiting for the system packages being installed in the background"
    while [ ! -f "$APT_BG_DONE" ]; do sleep 1; done
  fi
  APT_BG_STARTED=0
  local rc
  rc=$(cat "$APT_BG_DONE")
  if [ "$rc" != 0 ]; then
    cat "$APT_BG_LOG" >&2
    echo "installing the system packages failed (exit status $rc); the log is above" >&2
    return 1
  fi
}

ensure_build_tools() {
  apt_install build-essential pkg-config curl ca-certificates python3 python3-venv
}

ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1; then
    [ -f "$HOME/.cargo/env" ] && source "$HOME/.cargo/env"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    step "installing Rust (rustup)"
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
    source "$HOME/.cargo/env"
  fi
  rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt >/dev/null 2>&1 || true
}

# Lints every workspace crate as it is compiled for the tests, instead of in a
# `cargo clippy` pass of its own. Cargo runs RUSTC_WORKSPACE_WRAPPER on
# workspace members only, and clippy-driver is rustc plus the lints, reading
# its flags from CLIPPY_ARGS as `cargo clippy` passes them. So dependencies
# compile once, for the tests, and not a second time in check mode (that pass
# was six minutes of a clean CI run). Crates compiled this way get their own
# hashes, so a crate built by a plain `cargo build` is never taken as linted.
lint_every_build() {
  RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"
  export RUSTC_WORKSPACE_WRAPPER
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}
