# The desktop capture app (src-tauri/ + ui/): install, build, test, run.
# Sourced (after scripts/lib.sh) by scripts/test, which calls app_tests, and
# by scripts/run, which calls app_run. Everything it needs it installs.

APP_CRATE=understudy-app
# The window's assets are embedded in the binary (no dev server).
APP_FEATURES=(--features tauri/custom-protocol)
APP_VENV=target/e2e-venv

# The system packages the app needs; `--tests` adds what the end-to-end
# tests need (Xvfb, WebKitWebDriver). Node comes from apt only when the
# machine has none. scripts/test installs these in the background early.
app_system_packages() {
  local pkgs=(libwebkit2gtk-4.1-dev build-essential pkg-config curl ca-certificates fonts-dejavu-core)
  if [ "${1:-}" = "--tests" ]; then
    pkgs+=(xvfb xauth webkit2gtk-driver imagemagick python3-venv xdotool)
  fi
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    pkgs+=(nodejs npm)
  fi
  echo "${pkgs[@]}"
}

# ui/'s npm packages, installed exactly from the lockfile. A stamp holding
# the lockfile's hash skips the reinstall when nothing changed since (the
# background job in scripts/test may have done it already).
APP_NPM_STAMP=target/npm-ci.stamp
app_npm_ci() {
  local want
  want=$(sha256sum ui/package-lock.json | cut -d' ' -f1)
  if [ -d ui/node_modules ] && [ "$(cat "$APP_NPM_STAMP" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  step "app: npm ci (ui/)"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  mkdir -p target
  echo "$want" >"$APP_NPM_STAMP"
}

# System and language dependencies. `app_install_deps --tests` adds what
# the end-to-end tests need (Xvfb, WebKitWebDriver, tauri-driver, selenium).
app_install_deps() {
  # shellcheck disable=SC2046 # the list is words by design
  apt_install $(app_system_packages "${1:-}")
  app_npm_ci
  if [ "${1:-}" = "--tests" ]; then
    if ! command -v tauri-driver >/dev/null 2>&1; then
      # A debug build: it only relays WebDriver requests, and an optimised
      # build would cost CI a minute more of compiling.
      step "app: installing tauri-driver"
      # Not linted: it is not ours (lint_every_build's wrapper would lint it).
      env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS cargo install tauri-driver --locked --quiet --debug
    fi
    app_e2e_venv
  fi
}

# The end-to-end tests' Python (pytest, selenium). scripts/test fills it in
# the background early; here it is a no-op then.
app_e2e_venv() {
  if [ ! -x "$APP_VENV/bin/pytest" ]; then
    step "app: Python venv for the end-to-end tests"
    python3 -m venv "$APP_VENV"
    "$APP_VENV/bin/pip" install --quiet --disable-pip-version-check -r tests-e2e/requirements.txt
  fi
}

# Builds ui/dist, then the app. `app_build --release` for an optimised one.
app_build() {
  step "app: building the window (ui/dist)"
  (cd ui && npx vite build --logLevel warn)
  step "app: building $APP_CRATE ${1:-}"
  cargo build -p "$APP_CRATE" --locked "${APP_FEATURES[@]}" ${1:-}
}

# Runs the end-to-end suite against the real window: Xvfb, tauri-driver
# (WebKitWebDriver) and selenium, and for the hub's test (test_hub.py) a
# throwaway PostgreSQL (scripts/hub.sh) and the hub's binaries. A trap
# stops all of them, whatever happens.
app_e2e() (
  local dir xvfb_pid="" driver_pid="" display_file
  dir=$(mktemp -d)
  display_file="$dir/display"
  cleanup() {
    [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
    # The app and WebKit's helpers die with the X server; wait briefly.
    sleep 0.5
    if declare -F hub_pg_stop >/dev/null; then hub_pg_stop; fi
    rm -rf "$dir"
  }
  trap cleanup EXIT
  # The hub's stage (scripts/test) stops its PostgreSQL when it ends: this
  # stage starts its own.
  if ! declare -F hub_pg_start >/dev/null; then source scripts/hub.sh; fi
  hub_pg_start || return 1
  export HUB_BINARY="$PWD/target/debug/understudy-hub" UNDERSTUDY_CLI="$PWD/target/debug/understudy"
  # No background sync during the suite: the hub test sends with the
  # button and checks what waits before it does.
  export UNDERSTUDY_HUB_SYNC_SECS=3600
  Xvfb -displayfd 3 -screen 0 1440x900x24 -nolisten tcp 3>"$display_file" 2>"$dir/xvfb.log" &
  xvfb_pid=$!
  for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
  if [ ! -s "$display_file" ]; then
    echo "Xvfb did not start:" >&2; cat "$dir/xvfb.log" >&2
    return 1
  fi
  export DISPLAY=":$(cat "$display_file")"
  # Two checkouts on one machine can run their suites at once by choosing
  # another E2E_DRIVER_PORT (the native WebKitWebDriver takes the next one).
  local port="${E2E_DRIVER_PORT:-4444}"
  tauri-driver --port "$port" --native-port "$((port + 1))" >"$dir/tauri-driver.log" 2>&1 &
  driver_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1 && break; sleep 0.1; done
  if ! curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1; then
    echo "tauri-driver did not start (is port $port in use?):" >&2; cat "$dir/tauri-driver.log" >&2
    return 1
  fi
  mkdir -p artifacts/e2e
  TAURI_DRIVER_URL="http://127.0.0.1:$port" \
  APP_BINARY="$PWD/target/debug/understudy-app" WORLDS_DIR="$PWD/fixtures/worlds" \
    "$APP_VENV/bin/pytest" -q tests-e2e "$@" || {
      echo "--- tauri-driver log (tail) ---"; tail -n 40 "$dir/tauri-driver.log"
      return 1
    }
)

app_tests() {
  app_install_deps --tests
  step "app: TypeScript (tsc --noEmit)"
  (cd ui && npx tsc --noEmit)
  step "app: component tests (Vitest)"
  (cd ui && npx vitest run)
  step "app: building the window (ui/dist)"
  (cd ui && npx vite build --logLevel warn)
  # export_bindings rewrites ui/src/bindings: the types (ts-rs, the engine's
  # `ts` feature included) and commands.ts (every command's name, arguments
  # and result). Any difference from the committed files fails the run.
  step "app: Rust tests, and the TypeScript bindings (types and commands) are current"
  cargo test -p "$APP_CRATE" --locked "${APP_FEATURES[@]}"
  if ! git diff --exit-code -- ui/src/bindings || [ -n "$(git status --porcelain -- ui/src/bindings)" ]; then
    echo "ui/src/bindings is out of date with the Rust types or commands: run 'cargo test -p $APP_CRATE export_bindings' and commit the result" >&2
    return 1
  fi
  if [ -z "${CLIPPY_ARGS:-}" ]; then
    # scripts/test lints every build (lint_every_build); run alone, lint here.
    step "app: clippy (warnings are errors)"
    cargo clippy -p "$APP_CRATE" --no-deps --all-targets --locked "${APP_FEATURES[@]}" -- -D warnings
  fi
  step "app: building $APP_CRATE"
  cargo build -p "$APP_CRATE" --locked "${APP_FEATURES[@]}"
  step "app: building the hub server and the CLI (for the hub's end-to-end test)"
  cargo build --locked -p understudy-hub --bin understudy-hub -p understudy-cli --bin understudy
  step "app: end-to-end tests in the real window"
  app_e2e
}

# Installs what is missing, builds a release and opens the app on the
# user's display, with the bundled worlds and the store in the user data
# folder (or UNDERSTUDY_DATA_DIR / --data-dir).
app_run() {
  app_install_deps
  app_build --release
  if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    echo "Understudy is a desktop app and no display was found (DISPLAY is not set)." >&2
    echo "Run it from a desktop session, or over 'ssh -X'." >&2
    return 1
  fi
  step "app: starting Understudy"
  ./target/release/understudy-app "$@"
}
