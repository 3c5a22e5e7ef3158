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
