# The hub stage: a throwaway PostgreSQL server (Debian's package, installed
# when missing), the hub's tests against it, and the server stopped and its
# files removed whatever happens. Sourced by scripts/test after lib.sh.
#
# initdb refuses to run as root, so as root the cluster belongs to the
# `postgres` user the package creates. It listens on 127.0.0.1 on a free
# port and on a socket in its own temporary folder, never the system's.

# The system packages the hub's stage needs: Debian's PostgreSQL, unless a
# server is installed already.
hub_system_packages() {
  ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || echo postgresql
}

# Starts the cluster; sets HUB_PG_DIR and exports UNDERSTUDY_HUB_TEST_DATABASE.
hub_pg_start() {
  # shellcheck disable=SC2046 # empty or one word
  apt_install $(hub_system_packages)
  HUB_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  HUB_PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/understudy-pg.XXXXXX")
  HUB_PG_AS=()
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$HUB_PG_DIR"
    HUB_PG_AS=(runuser -u postgres --)
  fi
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if ! "${HUB_PG_AS[@]}" "$HUB_PG_BIN/initdb" -D "$HUB_PG_DIR/data" -U hub -A trust -E UTF8 --no-sync >"$HUB_PG_DIR/initdb.log" 2>&1; then
    cat "$HUB_PG_DIR/initdb.log" >&2
    return 1
  fi
  # A test database: durability off (the cluster is thrown away), room
  # for the fault tests' many connections.
  if ! "${HUB_PG_AS[@]}" "$HUB_PG_BIN/pg_ctl" -D "$HUB_PG_DIR/data" -l "$HUB_PG_DIR/server.log" -w -t 60 \
      -o "-p $port -k $HUB_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start >/dev/null; then
    cat "$HUB_PG_DIR/server.log" >&2
    return 1
  fi
  export UNDERSTUDY_HUB_TEST_DATABASE="postgres://hub@127.0.0.1:$port/postgres"
  echo "PostgreSQL $("$HUB_PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($HUB_PG_DIR)"
}

# Stops the cluster (open sessions are cut: it is thrown away) and removes
# its folder.
hub_pg_stop() {
  [ -n "${HUB_PG_DIR:-}" ] || return 0
  if [ -f "$HUB_PG_DIR/data/postmaster.pid" ]; then
    "${HUB_PG_AS[@]}" "$HUB_PG_BIN/pg_ctl" -D "$HUB_PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
  fi
  # pg_ctl returns when the postmaster is gone; wait out its last children.
  local i
  for i in $(seq 50); do
    pgrep -f "$HUB_PG_DIR" >/dev/null || break
    sleep 0.1
  done
  rm -rf "$HUB_PG_DIR"
  HUB_PG_DIR=
  echo "PostgreSQL stopped"
}

# The stage. A subshell, so its trap stops the server on success, failure
# or interrupt without touching the caller's traps.
hub_tests() (
  set -euo pipefail
  step "hub (PostgreSQL)"
  trap hub_pg_stop EXIT
  trap 'exit 130' INT TERM
  hub_pg_start
  cargo test --locked -p understudy-hub
  # The command line's team run against the same server (ignored elsewhere:
  # it needs PostgreSQL).
  cargo test --locked -p understudy-cli --test it hub_team -- --ignored
)
