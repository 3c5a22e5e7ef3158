# τ-bench conformance (sourced by scripts/test): every provided gold action
# list replays to τ-bench's own observations and final state.
conformance_tests() {
  step "τ-bench conformance (500 retail train tasks, 25 airline tasks)"
  if [ ! -d ../shared/peers/tau-bench ]; then
    echo "error: ../shared/peers/tau-bench is missing; the conformance data ships beside the clone" >&2
    return 1
  fi
  cargo test --locked --test tau_conformance
  ./target/debug/understudy replay --world fixtures/worlds/tau-retail \
    --input ../shared/peers/tau-bench/retail/tasks_train.jsonl --output target/tau-retail-replay.jsonl
  ./target/debug/understudy replay --world fixtures/worlds/tau-airline \
    --input ../shared/peers/tau-bench/airline/tasks_sample.jsonl --output target/tau-airline-replay.jsonl
}
