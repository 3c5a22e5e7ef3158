//! The agent API over real HTTP on loopback, recording into a real SQLite
//! store: episodes end to end, every kind of bad input, the cap, idle
//! timeouts, the user simulator and the schemas.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{json, Value};
use understudy::store::{Actor, EpisodeStatus};
use understudy::{Action, Episode};
use understudy_serve::{CommandSimulator, ServeConfig};

fn config() -> ServeConfig {
    ServeConfig::default()
}

#[test]
fn a_task_runs_end_to_end_and_is_recorded_as_the_agents_trajectory() {
    let h = Harness::start(config(), None);
    let world = support_desk();
    let task = "duplicate-charge";
    let out = h.reset(json!({"task_id": task, "seed": 7, "model": "test-model"}));
    let id = out["episode_id"].as_str().expect("episode id").to_string();
    assert_eq!(out["record_id"], out["episode_id"]);
    assert_eq!(
        (out["reward"].as_f64(), out["done"].as_bool()),
        (Some(0.0), Some(false))
    );
    assert_eq!(out["info"]["task_id"], task);
    assert_eq!(out["info"]["world_id"], "support-desk");
    assert!(out["info"]["policy"]
        .as_str()
        .is_some_and(|p| !p.is_empty()));

    // The first observation is exactly the engine's.
    let mut ep = Episode::new(Arc::clone(&world)).expect("episode");
    let reset = ep.reset(task, 7).expect("reset");
    assert_eq!(
        out["observation"],
        serde_json::to_value(&reset.observation).unwrap()
    );

    let actions = solution(&world, task);
    let expected = expected_observations(&world, task, 7, &actions);
    for (i, (action, want)) in actions.iter().zip(&expected).enumerate() {
        let (status, out) = h.step(&id, action.clone());
        assert_eq!(status, 200, "step {i}: {out}");
        assert_eq!(&out["observation"], want, "step {i}");
        assert_eq!(
            out["reward"].as_f64(),
            Some(0.0),
            "intermediate steps get 0"
        );
        assert_eq!(out["done"], false);
        assert_eq!(out["info"]["steps"], i + 1);
        assert_eq!(out["episode_id"], id.as_str());
    }

    let (status, end) = h.step(&id, json!({"submit": true}));
    assert_eq!(status, 200, "{end}");
    assert_eq!(
        (
            end["done"].as_bool(),
            end["terminated"].as_bool(),
            end["truncated"].as_bool()
        ),
        (Some(true), Some(true), Some(false))
    );
    // The reference solution earns the task's rubric score.
    assert_eq!(end["info"]["reward_source"], "rubric", "{end}");
    assert_eq!(end["reward"], end["info"]["score"]["value"]);
    assert_eq!(
        end["reward"].as_f64(),
        Some(1.0),
        "{}",
        end["info"]["score"]
    );
    assert_eq!(end["info"]["status"], "submitted");

    let (status, after) = h.step(&id, json!({"message": "one more thing"}));
    assert_eq!((status, error_code(&after)), (409, "episode_over"));

    let (status, state) = h.get(&format!("/state?episode_id={id}"));
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["done"], true);
    assert_eq!(state["status"], "submitted");
    assert_eq!(state["step_count"], actions.len());
    assert_eq!(state["seed"], 7);
    assert_eq!(state["model"], "test-model");

    let record = h.store().episode(&id).expect("stored");
    assert_eq!(
        record.actor,
        Actor::Agent {
            model: "test-model".into()
        }
    );
    assert_eq!(record.status, EpisodeStatus::Submitted);
    assert_eq!(record.seed, 7);
    let last_message = actions
        .iter()
        .rev()
        .find_map(|a| a["message"].as_str())
        .expect("a message");
    assert_eq!(record.final_message.as_deref(), Some(last_message));
    let steps = h.store().steps(&id).expect("steps");
    assert_eq!(steps.len(), actions.len(), "every step is recorded");
    for (s, a) in steps.iter().zip(&actions) {
        assert_eq!(s.action, Action::from_json(a).unwrap());
    }
}

#[test]
fn bad_requests_get_a_code_and_a_message_and_the_server_keeps_serving() {
    let h = Harness::start(config(), None);
    let expect =
        |(status, body): (u16, Value), want_status: u16, want_code: &str, mentions: &str| {
            assert_eq!(status, want_status, "{body}");
            assert_eq!(error_code(&body), want_code, "{body}");
            assert!(
                message(&body).contains(mentions),
                "{:?} should mention {mentions:?}",
                message(&body)
            );
        };
    expect(
        h.post_raw("/reset", "{not json"),
        400,
        "invalid_json",
        "not valid JSON",
    );
    expect(
        h.post_raw("/reset", "[1, 2]"),
        400,
        "invalid_request",
        "JSON object",
    );
    // `{}` now picks a task by seed (tests/it/ws.rs); a `task_id` that is
    // not text is still refused, naming the field.
    expect(
        h.post("/reset", &json!({"task_id": 3})),
        400,
        "invalid_request",
        "task_id",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "duplicate-charge", "seeds": 1}),
        ),
        400,
        "invalid_request",
        "seeds",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "duplicate-charge", "seed": "x"}),
        ),
        400,
        "invalid_request",
        "seed",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "duplicate-charge", "seed": -1}),
        ),
        400,
        "invalid_request",
        "non-negative",
    );
    expect(
        h.post("/reset", &json!({"task_id": "no-such-task"})),
        404,
        "unknown_task",
        "no-such-task",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "pay-back", "world_id": "nowhere"}),
        ),
        404,
        "unknown_world",
        "nowhere",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "frozen", "world_id": "support-desk"}),
        ),
        404,
        "unknown_task",
        "support-desk",
    );
    expect(
        h.post(
            "/reset",
            &json!({"task_id": "pay-back", "episode_id": "has space"}),
        ),
        400,
        "invalid_request",
        "episode_id",
    );
    expect(
        h.post("/reset", &json!({"task_id": "pay-back", "model": 5})),
        400,
        "invalid_request",
        "model",
    );

    let id = h.reset(json!({"task_id": "pay-back", "model": "m"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    expect(
        h.post_raw("/step", "{\"episode_id\": "),
        400,
        "invalid_json",
        "not valid JSON",
    );
    expect(
        h.post("/step", &json!({"action": {"message": "hi"}})),
        400,
        "invalid_request",
        "episode_id",
    );
    expect(
        h.post("/step", &json!({"episode_id": id})),
        400,
        "invalid_request",
        "action",
    );
    expect(
        h.step("nope", json!({"message": "hi"})),
        404,
        "unknown_episode",
        "nope",
    );
    expect(h.step(&id, json!([1])), 400, "invalid_action", "object");
    expect(
        h.step(&id, json!({"foo": 1})),
        400,
        "invalid_action",
        "expected",
    );
    expect(
        h.step(&id, json!({"tool": "transfer", "args": [1]})),
        400,
        "invalid_action",
        "arguments",
    );
    expect(
        h.step(&id, json!({"name": "transfer", "arguments": "{oops"})),
        400,
        "invalid_action",
        "not valid JSON",
    );
    expect(
        h.step(&id, json!({"message": 3})),
        400,
        "invalid_action",
        "text",
    );
    expect(
        h.step(&id, json!({"submit": "yes"})),
        400,
        "invalid_action",
        "submit",
    );
    expect(
        h.step(&id, json!({"submit": {"final": "x"}})),
        400,
        "invalid_action",
        "final_message",
    );
    // None of those was a step.
    assert_eq!(h.store().steps(&id).unwrap().len(), 0);

    // World-level failures are observations: recorded steps the agent learns from.
    let (status, out) = h.step(&id, json!({"tool": "launch_rocket", "args": {}}));
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["observation"]["ok"], false);
    assert_eq!(out["observation"]["error"]["code"], "unknown_tool");
    let (status, out) = h.step(
        &id,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": "lots"}}),
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["observation"]["error"]["code"], "invalid_arguments");
    assert!(
        out["observation"]["text"]
            .as_str()
            .unwrap()
            .contains("amount"),
        "{out}"
    );
    assert_eq!(h.store().steps(&id).unwrap().len(), 2);

    expect(h.get("/state"), 400, "invalid_request", "episode_id");
    expect(
        h.get("/state?episode_id=nope"),
        404,
        "unknown_episode",
        "nope",
    );
    expect(
        h.post("/close", &json!({"episode_id": "nope"})),
        404,
        "unknown_episode",
        "nope",
    );
    expect(
        h.get("/schema?world_id=nowhere"),
        404,
        "unknown_world",
        "nowhere",
    );
    // Several worlds and none named: every world's tools, by world.
    let (status, schema) = h.get("/schema");
    assert_eq!(status, 200, "{schema}");
    assert!(schema["world_id"].is_null() && schema.get("tools").is_none());
    let by_world = schema["tools_by_world"]
        .as_object()
        .expect("tools by world");
    assert_eq!(
        by_world.keys().map(String::as_str).collect::<Vec<_>>(),
        ["support-desk", "mini"]
    );
    assert!(by_world["mini"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "transfer"));
    for part in ["action", "observation", "state"] {
        assert!(schema[part].is_object(), "{part}");
    }
    expect(
        h.get("/health?verbose=1"),
        400,
        "invalid_request",
        "verbose",
    );
    expect(h.get("/nowhere"), 404, "not_found", "/nowhere");
    let resp = h.client.get(format!("{}/step", h.base)).send().unwrap();
    let status = resp.status().as_u16();
    expect(
        (status, resp.json().unwrap()),
        405,
        "method_not_allowed",
        "POST",
    );
    // The server closes the connection after refusing a body it did not
    // read, so this one goes on a client of its own.
    let huge = format!("{{\"task_id\": \"{}\"}}", "x".repeat(5 << 20));
    let resp = reqwest::blocking::Client::new()
        .post(format!("{}/reset", h.base))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    expect(
        (status, resp.json().unwrap()),
        413,
        "payload_too_large",
        "larger",
    );

    // Still serving, and the episode still works.
    let (status, health) = h.get("/health");
    assert_eq!((status, health["status"].as_str()), (200, Some("healthy")));
    let (status, out) = h.step(
        &id,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25}}),
    );
    assert_eq!(
        (status, out["observation"]["ok"].as_bool()),
        (200, Some(true)),
        "{out}"
    );
}

#[test]
fn other_action_shapes_and_the_submit_pseudo_tool_are_accepted() {
    let h = Harness::start(config(), None);
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, a) = h.step(
        &id,
        json!({"name": "get_account", "arguments": "{\"account_id\": \"A-1\"}"}),
    );
    assert_eq!(a["observation"]["ok"], true, "{a}");
    let (_, b) = h.step(&id, json!({"type": "function", "function": {"name": "get_account", "arguments": {"account_id": "A-1"}}}));
    assert_eq!(a["observation"], b["observation"]);
    let (_, c) = h.step(
        &id,
        json!({"name": "respond", "kwargs": {"content": "Hello Ada"}}),
    );
    assert_eq!(c["observation"]["content"]["reply"], "Yes, go ahead.");
    let (status, end) = h.step(
        &id,
        json!({"name": "submit", "arguments": "{\"final_message\": \"All done.\"}"}),
    );
    assert_eq!(
        (status, end["terminated"].as_bool()),
        (200, Some(true)),
        "{end}"
    );
    assert_eq!(end["observation"]["content"]["final_message"], "All done.");
    let record = h.store().episode(&id).unwrap();
    assert_eq!(record.final_message.as_deref(), Some("All done."));
    assert_eq!(
        h.store().steps(&id).unwrap().len(),
        3,
        "submitting is not a step"
    );
}

#[test]
fn terminating_tools_and_step_limits_end_the_episode() {
    let h = Harness::start(config(), None);
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, out) = h.step(&id, json!({"tool": "close"}));
    assert_eq!(
        (
            out["terminated"].as_bool(),
            out["truncated"].as_bool(),
            out["done"].as_bool()
        ),
        (Some(true), Some(false), Some(true)),
        "{out}"
    );
    assert_eq!(
        h.store().episode(&id).unwrap().status,
        EpisodeStatus::Submitted
    );

    // pay-back allows 5 steps.
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    for i in 1..=5 {
        let (status, out) = h.step(
            &id,
            json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
        );
        assert_eq!(status, 200);
        assert_eq!(out["truncated"].as_bool(), Some(i == 5), "step {i}: {out}");
        assert_eq!(out["terminated"], false);
    }
    let (_, state) = h.get(&format!("/state?episode_id={id}"));
    assert_eq!(
        (state["truncated"].as_bool(), state["done"].as_bool()),
        (Some(true), Some(true))
    );
    let (status, out) = h.step(
        &id,
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
    );
    assert_eq!((status, error_code(&out)), (409, "episode_over"));
    assert!(message(&out).contains("step limit"));
    assert_eq!(h.store().steps(&id).unwrap().len(), 5);
}

#[test]
fn closing_or_going_idle_abandons_the_episode_and_keeps_every_step() {
    let h = Harness::start(
        ServeConfig {
            idle_timeout: Duration::from_millis(300),
            ..config()
        },
        None,
    );
    // Closed by the client.
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    h.step(
        &id,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 5}}),
    );
    let (status, out) = h.post("/close", &json!({"episode_id": id}));
    assert_eq!(
        (status, out["status"].as_str(), out["steps"].as_u64()),
        (200, Some("abandoned"), Some(1)),
        "{out}"
    );
    assert_eq!(
        h.store().episode(&id).unwrap().status,
        EpisodeStatus::Abandoned
    );
    let (status, out) = h.step(&id, json!({"message": "hi"}));
    assert_eq!((status, error_code(&out)), (404, "unknown_episode"));

    // Left idle by a client that went away mid-episode.
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    h.step(
        &id,
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
    );
    h.step(&id, json!({"message": "Checking."}));
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.store().episode(&id).unwrap().status != EpisodeStatus::Abandoned {
        assert!(
            Instant::now() < deadline,
            "the idle episode was never closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(h.store().steps(&id).unwrap().len(), 2, "every step is kept");
    let (status, out) = h.get(&format!("/state?episode_id={id}"));
    assert_eq!((status, error_code(&out)), (404, "unknown_episode"));
    assert!(message(&out).contains("idle"));
}

#[test]
fn the_cap_is_hard_and_finished_episodes_give_their_slot_up() {
    let h = Harness::start(
        ServeConfig {
            max_concurrent: 2,
            ..config()
        },
        None,
    );
    let a = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, out) = h.post("/reset", &json!({"task_id": "pay-back"}));
    assert_eq!((status, error_code(&out)), (429, "too_many_episodes"));
    assert!(message(&out).contains("--max-concurrent"));
    let (_, health) = h.get("/health");
    assert_eq!(health["episodes"]["open"], 2);

    // A finished episode is already submitted: its slot goes to a new one.
    h.step(&a, json!({"tool": "close"}));
    let c = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _) = h.post("/reset", &json!({"task_id": "pay-back"}));
    assert_eq!(status, 429);
    h.post("/close", &json!({"episode_id": b}));
    h.reset(json!({"task_id": "pay-back"}));
    // The running ones were never disturbed.
    let (status, out) = h.step(
        &c,
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
    );
    assert_eq!(
        (status, out["observation"]["ok"].as_bool()),
        (200, Some(true))
    );
}

#[test]
fn clients_may_choose_episode_ids() {
    let h = Harness::start(config(), None);
    let out = h.reset(json!({"task_id": "pay-back", "episode_id": "run-1:ep.0"}));
    assert_eq!(out["episode_id"], "run-1:ep.0");
    let record_id = out["record_id"].as_str().unwrap().to_string();
    assert_ne!(record_id, "run-1:ep.0");
    let (status, out) = h.post(
        "/reset",
        &json!({"task_id": "pay-back", "episode_id": "run-1:ep.0"}),
    );
    assert_eq!((status, error_code(&out)), (409, "episode_exists"));
    let (status, _) = h.step("run-1:ep.0", json!({"message": "Hello"}));
    assert_eq!(status, 200);
    assert_eq!(h.store().steps(&record_id).unwrap().len(), 1);
    h.post("/close", &json!({"episode_id": "run-1:ep.0"}));
    h.reset(json!({"task_id": "pay-back", "episode_id": "run-1:ep.0"}));
}

#[test]
fn the_user_simulator_answers_once_the_scripted_replies_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("request.json");
    let cmd = format!(
        "sh -c 'cat > \"$0\"; printf %s \"{{\\\"reply\\\": \\\"I am simulated\\\"}}\"' {}",
        seen.display()
    );
    let sim = CommandSimulator::new(&cmd, Duration::from_secs(10)).unwrap();
    let h = Harness::start(config(), Some(Box::new(sim)));
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let replies: Vec<String> = ["Hello", "Sending now", "Anything else?"]
        .iter()
        .map(|m| {
            let (status, out) = h.step(&id, json!({"message": m}));
            assert_eq!(status, 200, "{out}");
            out["observation"]["text"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(replies, ["Yes, go ahead.", "Thanks!", "I am simulated"]);
    let request: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(request["task"], "pay-back");
    assert_eq!(request["world"], "mini");
    assert_eq!(request["message"], "Anything else?");
    assert_eq!(request["facts"], json!(["You are Ada, account A-1"]));
    let roles: Vec<&str> = request["conversation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["customer", "agent", "customer", "agent", "customer"]
    );
    assert_eq!(
        request["conversation"][0]["content"],
        "Hi, Ada here. Please send Charles 25."
    );
    let stored = h.store().steps(&id).unwrap();
    assert_eq!(
        stored[2].observation.text, "I am simulated",
        "the simulated reply is recorded"
    );
}

#[test]
fn a_failing_or_slow_user_simulator_refuses_the_step_without_recording_it() {
    for (cmd, timeout, mentions) in [
        ("sh -c 'echo broken >&2; exit 3'", 10.0, "broken"),
        ("sh -c 'cat >/dev/null; echo not-json'", 10.0, "not JSON"),
        ("sh -c 'sleep 5'", 0.3, "within"),
    ] {
        let sim = CommandSimulator::new(cmd, Duration::from_secs_f64(timeout)).unwrap();
        let h = Harness::start(config(), Some(Box::new(sim)));
        // `frozen` has no scripted replies: the first message needs the simulator.
        let id = h.reset(json!({"task_id": "frozen"}))["episode_id"]
            .as_str()
            .unwrap()
            .to_string();
        let started = Instant::now();
        let (status, out) = h.step(&id, json!({"message": "Hello?"}));
        assert_eq!(
            (status, error_code(&out)),
            (502, "user_sim_failed"),
            "{cmd}"
        );
        assert!(message(&out).contains(mentions), "{cmd}: {}", message(&out));
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "the timeout holds"
        );
        assert!(h.store().steps(&id).unwrap().is_empty());
        let (status, out) = h.step(
            &id,
            json!({"tool": "get_account", "args": {"account_id": "A-3"}}),
        );
        assert_eq!(
            (status, out["info"]["steps"].as_u64()),
            (200, Some(1)),
            "still serving: {out}"
        );
    }
}

#[test]
fn without_a_simulator_replies_past_the_script_are_empty() {
    let h = Harness::start(config(), None);
    let id = h.reset(json!({"task_id": "frozen"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, out) = h.step(&id, json!({"message": "Hello?"}));
    assert_eq!(out["observation"]["content"]["reply"], "");
}

#[test]
fn schema_tasks_and_health_describe_the_server() {
    let h = Harness::start(config(), None);
    let (status, schema) = h.get("/schema?world_id=support-desk");
    assert_eq!(status, 200, "{schema}");
    let action = jsonschema::validator_for(&schema["action"]).expect("the action schema compiles");
    let observation =
        jsonschema::validator_for(&schema["observation"]).expect("the observation schema compiles");
    jsonschema::validator_for(&schema["state"]).expect("the state schema compiles");
    let world = support_desk();
    for task in world.tasks.values() {
        for a in &task.solution {
            assert!(action.is_valid(a), "{a} fits the action schema");
        }
    }
    for a in [
        json!({"submit": true}),
        json!({"name": "x", "arguments": "{}"}),
        json!({"type": "function", "function": {"name": "x", "arguments": {}}}),
    ] {
        assert!(action.is_valid(&a), "{a}");
    }
    let actions = solution(&world, "duplicate-charge");
    let mut seen = expected_observations(&world, "duplicate-charge", 0, &actions);
    seen.push(
        json!({"ok": false, "error": {"code": "unknown_tool", "message": "x"}, "text": "Error: x"}),
    );
    for o in &seen {
        assert!(observation.is_valid(o), "{o} fits the observation schema");
    }
    let tools = schema["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"issue_refund")
            && names.contains(&"view_tickets")
            && names.contains(&"submit"),
        "{names:?}"
    );
    for t in tools {
        assert_eq!(t["type"], "function");
        assert_eq!(t["function"]["parameters"]["type"], "object");
    }

    // A task's schema lists only the tools it allows.
    let (_, frozen) = h.get("/schema?task_id=frozen");
    let names: Vec<&str> = frozen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"transfer") && !names.contains(&"tag_doc"),
        "{names:?}"
    );

    let (_, tasks) = h.get("/tasks");
    let tasks = tasks["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), world.tasks.len() + 2);
    let dc = tasks
        .iter()
        .find(|t| t["task_id"] == "duplicate-charge")
        .unwrap();
    assert_eq!(dc["gym_id"], "understudy/support-desk-duplicate-charge");
    assert!(
        dc.get("solution").is_none() && dc.get("facts").is_none(),
        "no answer key is served"
    );
    let (_, only) = h.get("/tasks?world_id=mini");
    assert_eq!(only["tasks"].as_array().unwrap().len(), 2);

    let (_, health) = h.get("/health");
    assert_eq!(health["episodes"]["max_concurrent"], 64);
    assert_eq!(health["durability"], "full");
    assert_eq!(health["worlds"].as_array().unwrap().len(), 2);
}

#[test]
fn stdio_lines_get_one_response_each_with_the_id_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(understudy::store::Store::open(dir.path().join("s.sqlite")).unwrap());
    let server = understudy_serve::Server::new(vec![mini()], store, config()).unwrap();
    let input = [
        r#"{"id": 1, "op": "reset", "task_id": "pay-back", "episode_id": "e1"}"#,
        "",
        r#"{"id": "two", "op": "step", "episode_id": "e1", "action": {"message": "Hi"}}"#,
        "not json",
        r#"{"id": 3, "op": "launch"}"#,
        r#"{"id": 4}"#,
        r#"{"id": 5, "op": "step", "episode_id": "e1", "action": {"tool": "close"}}"#,
        r#"{"id": 6, "op": "state", "episode_id": "e1"}"#,
    ]
    .join("\n");
    let mut out = Vec::new();
    understudy_serve::stdio::serve_lines(&server, input.as_bytes(), &mut out).unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 7, "one response per non-blank line");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[0]["result"]["episode_id"], "e1");
    assert_eq!(lines[1]["id"], "two");
    assert_eq!(lines[1]["result"]["observation"]["text"], "Yes, go ahead.");
    assert_eq!(error_code(&lines[2]), "invalid_json");
    assert_eq!(lines[2].get("id"), None);
    assert_eq!(
        (lines[3]["id"].as_u64(), error_code(&lines[3])),
        (Some(3), "unknown_op")
    );
    assert_eq!(error_code(&lines[4]), "invalid_request");
    assert!(message(&lines[4]).contains("op"));
    assert_eq!(lines[5]["result"]["terminated"], true);
    assert_eq!(lines[6]["result"]["status"], "submitted");
    assert_eq!(lines[6]["result"]["step_count"], 2);
}

#[test]
fn the_final_reward_is_the_rubric_score_and_is_stored_with_the_trajectory() {
    let h = Harness::start(config(), None);
    let world = mini();
    let id = h.reset(json!({"task_id": "pay-back", "model": "rubric-test"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    for a in solution(&world, "pay-back") {
        let (status, out) = h.step(&id, a);
        assert_eq!((status, out["reward"].as_f64()), (200, Some(0.0)), "{out}");
    }
    let (_, end) = h.step(&id, json!({"submit": true}));
    assert_eq!(end["info"]["reward_source"], "rubric", "{end}");
    let score = &end["info"]["score"];
    // `friendly` is judged and nobody has graded it: the reward is the
    // lowest value still possible, 10 of 11 points.
    assert_eq!(score["pending"], json!(["friendly"]));
    assert_eq!(score["value"], Value::Null);
    let reward = end["reward"].as_f64().unwrap();
    assert!((reward - 10.0 / 11.0).abs() < 1e-9, "{reward}");
    assert_eq!(score["range"][0].as_f64(), Some(reward));
    assert_eq!(end["info"]["score_saved"], true);
    let stored = h
        .store()
        .latest_score(&id)
        .unwrap()
        .expect("the score is stored");
    assert_eq!(stored.record.range[0], reward);
    let (_, state) = h.get(&format!("/state?episode_id={id}"));
    assert_eq!(state["reward"].as_f64(), Some(reward));

    // A do-nothing agent fails the gate.
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, end) = h.step(&id, json!({"submit": true}));
    assert_eq!(end["reward"].as_f64(), Some(0.0));
    assert!(
        end["info"]["score"]["failed_gates"]
            .as_array()
            .is_some_and(|g| !g.is_empty()),
        "{end}"
    );
}

#[test]
fn a_task_without_a_rubric_ends_with_reward_zero_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("tests/worlds/mini"), dir.path());
    std::fs::remove_dir_all(dir.path().join("rubrics")).unwrap();
    let world = Arc::new(understudy::World::load(dir.path()).unwrap());
    let h = Harness::with_worlds(vec![world], config(), None);
    let id = h.reset(json!({"task_id": "pay-back"}))["episode_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, end) = h.step(&id, json!({"tool": "close"}));
    assert_eq!(end["terminated"], true);
    assert_eq!(end["reward"].as_f64(), Some(0.0));
    assert_eq!(
        end["info"]["reward_source"], "none",
        "a 0 reward says where it came from"
    );
    assert!(
        end["info"]["reward_note"]
            .as_str()
            .is_some_and(|n| n.contains("no rubric")),
        "{end}"
    );
}
