# Python checks: real Python clients against what the engine produces.
# Sourced (after scripts/lib.sh) by scripts/test, which calls python_tests.
#
# To add a check: add its packages to PY_PACKAGES, write a python_check_*
# function below, and call it from python_tests. Everything runs in one
# venv (PY_VENV), created and filled here, so a fresh machine needs only
# python3 and python3-venv (installed by ensure_build_tools); verifiers,
# whose pins clash with the MCP test's, has its own (PY_VERIFIERS_VENV).

PY_VENV=target/venv-ci
# pip requirement specifiers, installed into PY_VENV.
PY_PACKAGES=(
  "datasets>=5,<6"   # the `json` feature type the dataset card declares
  "openenv-core==0.3.0"   # OpenEnv's GenericEnvClient and validator (tests/python/test_openenv.py)
  "minari==0.5.4"   # loads the Minari export (clients/python/tests/test_minari.py)
  "ray==2.60.0"   # a local cluster runs episodes on actors (tests/python/test_ray.py)
  "mcp==2.3.0"   # the official MCP SDK's ClientSession over stdio and streamable HTTP (tests/python/test_mcp.py)
  "inspect-ai==0.3.285"   # inspect_ai.eval with mockllm runs understudy_gym.inspect_task (tests/python/test_inspect.py)
  "krippendorff==0.9.0"   # reference Krippendorff's alpha (tests/python/check_agreement.py)
  "statsmodels==0.15.0"   # reference Cohen's and Fleiss' kappa (tests/python/check_agreement.py)
  "pytest>=7"
)

# verifiers gets a venv of its own: it pins `mcp` (0.3.1: mcp<2), which the
# MCP test's pin above cannot share. 0.3.1 is the last release with the
# classic environments (MultiTurnEnv, Rubric, evaluate) that
# understudy_gym.verifiers_env builds on.
PY_VERIFIERS_VENV=target/venv-verifiers
PY_VERIFIERS_PACKAGES=(
  "verifiers==0.3.1"   # env.evaluate runs understudy_gym.verifiers_env (tests/python/test_verifiers.py)
  "pytest>=7"
)

# Creates the venv if needed and installs PY_PACKAGES (a no-op when they are
# already satisfied).
python_venv() {
  if [ ! -x "$PY_VENV/bin/python" ]; then
    step "python: creating $PY_VENV"
    python3 -m venv "$PY_VENV"
  fi
  step "python: installing ${PY_PACKAGES[*]}"
  "$PY_VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}"
}

# Both venvs' packages: python_venv, then PY_VERIFIERS_VENV's. scripts/test
# starts this in the background before the Rust build (pip waits on the
# network, cargo on the CPU), and python_tests waits for it.
python_install() {
  python_venv
  if [ ! -x "$PY_VERIFIERS_VENV/bin/python" ]; then
    step "python: creating $PY_VERIFIERS_VENV"
    python3 -m venv "$PY_VERIFIERS_VENV"
  fi
  step "python: installing ${PY_VERIFIERS_PACKAGES[*]}"
  "$PY_VERIFIERS_VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_VERIFIERS_PACKAGES[@]}"
}

PY_INSTALL_LOG=target/python-install.log

# Starts python_install in the background (its output in PY_INSTALL_LOG).
python_install_in_background() {
  mkdir -p target
  ( python_install ) >"$PY_INSTALL_LOG" 2>&1 &
  PY_INSTALL_PID=$!
}

# Waits for the background install, or installs now if none was started.
python_ready() {
  if [ -n "${PY_INSTALL_PID:-}" ]; then
    step "python: waiting for the package install started at the beginning"
    if ! wait "$PY_INSTALL_PID"; then
      echo "installing the Python packages failed:" >&2
      cat "$PY_INSTALL_LOG" >&2
      return 1
    fi
    cat "$PY_INSTALL_LOG"
  else
    python_install
  fi
}

# Exports a small recorded store (the Rust test writes it) as a dataset
# folder, TRL JSONL and OpenAI JSONL, and loads them with `datasets`.
python_check_datasets() (
  step "python: Hugging Face datasets loads the exports"
  local dir
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  UNDERSTUDY_EXPORT_DIR="$dir" cargo test --locked --quiet -p understudy-cli --test it export::export_folder_for_python
  "$PY_VENV/bin/python" tests/python/check_datasets.py "$dir"
)

# The Gymnasium client (clients/python) against the real `understudy`
# binary: check_env, episodes over stdio and HTTP, the store's records.
python_check_gym() {
  step "python: understudy_gym (Gymnasium client) against the real server"
  cargo build --locked --quiet -p understudy-cli
  "$PY_VENV/bin/pip" install --quiet --disable-pip-version-check -e "clients/python[test]"
  UNDERSTUDY_BIN="$PWD/target/debug/understudy" "$PY_VENV/bin/python" -m pytest -q clients/python/tests
}

# OpenEnv's own client (GenericEnvClient over /ws) and its
# validate_running_environment against the real `understudy serve --http`.
python_check_openenv() {
  step "python: openenv-core's GenericEnvClient and validator against the real server"
  cargo build --locked --quiet -p understudy-cli
  UNDERSTUDY_BIN="$PWD/target/debug/understudy" "$PY_VENV/bin/python" -m pytest -q -s tests/python/test_openenv.py
}

# A Ray head on loopback, started here and stopped by a trap whatever
# happens; the test connects to it and runs episodes on 2 actors.
python_check_ray() (
  step "python: episodes on Ray actors (a local head on loopback)"
  cargo build --locked --quiet -p understudy-cli
  local port tmp
  port=$("$PY_VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  tmp=$(mktemp -d)
  export RAY_TMPDIR="$tmp" RAY_USAGE_STATS_ENABLED=0
  trap '"$PY_VENV/bin/ray" stop --force >/dev/null 2>&1; rm -rf "$tmp"' EXIT
  "$PY_VENV/bin/ray" start --head --node-ip-address=127.0.0.1 --port="$port" --num-cpus=2 \
    --include-dashboard=false --disable-usage-stats --temp-dir="$tmp" >"$tmp/start.log" 2>&1 || {
      echo "ray start failed:" >&2; cat "$tmp/start.log" >&2; return 1
    }
  UNDERSTUDY_RAY_ADDRESS="127.0.0.1:$port" UNDERSTUDY_BIN="$PWD/target/debug/understudy" \
    "$PY_VENV/bin/python" -m pytest -q -s tests/python/test_ray.py
)

# The official MCP Python SDK (ClientSession over stdio_client and
# streamable_http_client) against the real `understudy serve --mcp` and `/mcp`.
python_check_mcp() {
  step "python: the mcp SDK's ClientSession over stdio and streamable HTTP against the real server"
  cargo build --locked --quiet -p understudy-cli
  UNDERSTUDY_BIN="$PWD/target/debug/understudy" "$PY_VENV/bin/python" -m pytest -q -s tests/python/test_mcp.py
}

# Inspect AI's own eval loop (mockllm/model replaying gold solutions as tool
# calls) runs understudy_gym.inspect_task against the real binary.
python_check_inspect() {
  step "python: inspect_ai.eval with mockllm runs the Understudy task against the real server"
  cargo build --locked --quiet -p understudy-cli
  "$PY_VENV/bin/pip" install --quiet --disable-pip-version-check -e clients/python
  UNDERSTUDY_BIN="$PWD/target/debug/understudy" "$PY_VENV/bin/python" -m pytest -q -s tests/python/test_inspect.py
}

# verifiers' evaluate (its OpenAI chat client against a scripted
# OpenAI-compatible server on loopback) runs understudy_gym.verifiers_env
# against the real binary, in PY_VERIFIERS_VENV.
python_check_verifiers() {
  step "python: verifiers' evaluate runs the Understudy environment against the real server"
  cargo build --locked --quiet -p understudy-cli
  if [ ! -x "$PY_VERIFIERS_VENV/bin/python" ]; then
    step "python: creating $PY_VERIFIERS_VENV"
    python3 -m venv "$PY_VERIFIERS_VENV"
  fi
  "$PY_VERIFIERS_VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_VERIFIERS_PACKAGES[@]}" -e clients/python
  UNDERSTUDY_BIN="$PWD/target/debug/understudy" "$PY_VERIFIERS_VENV/bin/python" -m pytest -q -s tests/python/test_verifiers.py
}

# The engine's grader agreement (Cohen's and Fleiss' kappa, Krippendorff's
# alpha) on fixed cases, recomputed with the krippendorff and statsmodels
# packages. The Rust test writes the cases and its answers.
python_check_agreement() (
  step "python: grader agreement matches krippendorff and statsmodels"
  local dir
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  UNDERSTUDY_AGREEMENT_OUT="$dir/cases.json" cargo test --locked --quiet -p understudy --lib grading::agreement::tests::write_cases_for_the_python_reference_check
  [ -s "$dir/cases.json" ] || { echo "the Rust test wrote no agreement cases" >&2; return 1; }
  "$PY_VENV/bin/python" tests/python/check_agreement.py "$dir/cases.json"
)

python_tests() {
  python_ready
  python_check_datasets
  python_check_gym
  python_check_openenv
  python_check_ray
  python_check_mcp
  python_check_inspect
  python_check_verifiers
  python_check_agreement
}
