"""Inspect AI runs Understudy's task end to end.

`inspect_ai.eval` (inspect-ai pinned in scripts/python.sh) runs
`understudy_gym.inspect_task.understudy` with Inspect's own `mockllm/model`,
whose custom outputs (`ModelOutput.for_tool_call`, `ModelOutput.from_content`)
replay a task's gold solution: each tool call goes through Inspect's tool
machinery to a step of a recorded episode on the real `understudy` binary,
and the scorer reads the episode's reward. No model weights, no network.
"""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from understudy_gym import HttpClient, HttpServer, ServerGone
from understudy_gym.inspect_task import understudy

from understudy_server import SUPPORT_DESK, binary, solution, stored

MODEL = "mockllm/model"
# Rubrics without judged criteria: the gold solution earns exactly 1.
GOLD = ["duplicate-charge", "renewal-question"]


def with_usage(output: ModelOutput) -> ModelOutput:
    """mockllm counts the tokens of an output without usage with tiktoken,
    which downloads its encoding on first use (no network here)."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def tool_call(name: str, args: dict) -> ModelOutput:
    return with_usage(ModelOutput.for_tool_call(model=MODEL, tool_name=name, tool_arguments=args))


def outputs_for(actions: list[dict]) -> list[ModelOutput]:
    """The model's turns playing `actions`, then submit."""
    turns = [
        with_usage(ModelOutput.from_content(model=MODEL, content=a["message"]))
        if "message" in a
        else tool_call(a["tool"], a.get("args", {}))
        for a in actions
    ]
    return turns + [tool_call("submit", {})]


def run(task_id: str, actions: list[dict], tmp_path):
    store = tmp_path / "store.sqlite"
    model = get_model(MODEL, custom_outputs=outputs_for(actions))
    (log,) = inspect_eval(
        understudy(world=str(SUPPORT_DESK), task_ids=[task_id], store=str(store), binary=binary()),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    return log, store


@pytest.mark.parametrize("task_id", GOLD)
def test_gold_solution_scores_the_rubric_reward(task_id, tmp_path):
    actions = solution(SUPPORT_DESK, task_id)
    log, store = run(task_id, actions, tmp_path)
    assert log.status == "success", log.error
    (sample,) = log.samples
    score = sample.scores["episode_reward"]
    assert score.value == 1.0, (score, sample.messages[-1])
    assert score.metadata["done"] is True and score.metadata["steps"] == len(actions)
    assert log.results.scores[0].metrics["mean"].value == 1.0
    # What the model saw: the server's instructions and the opening message,
    # the world's tools (submit included).
    assert sample.messages[0].role == "system" and "Policy:" in sample.messages[0].text
    assert sample.messages[1].role == "user"
    # One recorded episode, under Inspect's model name, one step per action.
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in stored(store)] == [
        (score.metadata["record_id"], MODEL, "submitted", task_id, len(actions))
    ]
    print(f"\ninspect eval {task_id}: status {log.status}, episode_reward mean {log.results.scores[0].metrics['mean'].value}")


def test_a_do_nothing_run_scores_low(tmp_path):
    with HttpServer([SUPPORT_DESK], store=tmp_path / "direct.sqlite", binary=binary()) as server:
        c = HttpClient(server.url)
        episode = c.call("reset", task_id="duplicate-charge", model="direct")["episode_id"]
        expected = c.call("step", episode_id=episode, action={"submit": True})["reward"]
    assert expected < 1.0
    log, store = run("duplicate-charge", [], tmp_path)
    assert log.status == "success", log.error
    (sample,) = log.samples
    assert sample.scores["episode_reward"].value == expected
    assert [(r[2], r[4]) for r in stored(store)] == [("submitted", 0)]
    print(f"\ninspect eval, do nothing: episode_reward {sample.scores['episode_reward'].value}")


def test_the_tools_are_the_worlds(tmp_path):
    # A model that calls a world tool, writes to the customer, then
    # submits: the tool's result and the customer's reply reach the model.
    outputs = [
        tool_call("get_ticket", {"ticket_id": "T-1042"}),
        with_usage(ModelOutput.from_content(model=MODEL, content="Hello Dana, I am looking into the two charges.")),
        tool_call("submit", {}),
    ]
    (log,) = inspect_eval(
        understudy(world="support-desk", task_ids="duplicate-charge", store=str(tmp_path / "s.sqlite"), binary=binary()),
        model=get_model(MODEL, custom_outputs=outputs),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    (sample,) = log.samples
    tool_results = [m for m in sample.messages if m.role == "tool"]
    assert tool_results[0].function == "get_ticket" and "T-1042" in tool_results[0].text, tool_results[0]
    assert "The episode is over. Reward:" in tool_results[-1].text
    # The plain-text turn went to the customer, and their reply came back.
    said = [i for i, m in enumerate(sample.messages) if m.role == "assistant" and "looking into" in m.text]
    assert len(said) == 1 and sample.messages[said[0] + 1].role == "user", sample.messages
    assert [(r[2], r[4]) for r in stored(tmp_path / "s.sqlite")] == [("submitted", 2)]


def test_a_sample_stopped_by_a_limit_scores_nothing(tmp_path):
    # Inspect's message limit (system, user, one tool call and its result)
    # ends the sample before the episode ends: 0, recorded as abandoned.
    store = tmp_path / "store.sqlite"
    (log,) = inspect_eval(
        understudy(world="support-desk", task_ids=["duplicate-charge"], store=str(store), binary=binary()),
        model=get_model(MODEL, custom_outputs=outputs_for(solution(SUPPORT_DESK, "duplicate-charge"))),
        message_limit=4,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    (sample,) = log.samples
    score = sample.scores["episode_reward"]
    assert (score.value, score.metadata["done"]) == (0.0, False), score
    assert [(r[2], r[4]) for r in stored(store)] == [("abandoned", 1)]


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown world 'nope'.*known worlds: .*support-desk"):
        understudy(world="nope", binary=binary())
    with pytest.raises(ValueError, match=r"world 'support-desk' .* has no task 'nope'; its tasks: .*duplicate-charge"):
        understudy(world=str(SUPPORT_DESK), task_ids=["nope"], store=str(tmp_path / "s.sqlite"), binary=binary())
    with pytest.raises(ServerGone, match=r"did not start"):
        understudy(world=str(SUPPORT_DESK), store=str(tmp_path / "s.sqlite"), binary="/bin/false")
