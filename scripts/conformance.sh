# τ-bench conformance from the command line (sourced by scripts/test): the
# CLI replays every provided gold action list (tests/data/tau-bench, copied
# from τ-bench with its LICENSE). The engine test `tau_conformance` compares
# the results with τ-bench's own; it runs with the other engine tests.
conformance_tests() {
  step "τ-bench replay from the CLI (500 retail train tasks, 25 airline tasks)"
  ./target/debug/understudy replay --world fixtures/worlds/tau-retail \
    --input tests/data/tau-bench/retail/tasks_train.jsonl --output target/tau-retail-replay.jsonl
  ./target/debug/understudy replay --world fixtures/worlds/tau-airline \
    --input tests/data/tau-bench/airline/tasks_sample.jsonl --output target/tau-airline-replay.jsonl
}
