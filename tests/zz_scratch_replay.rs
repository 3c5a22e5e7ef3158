use std::sync::Arc;
use std::time::Instant;
use serde_json::json;
use understudy::{Action, World};
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}
#[test]
fn scratch() {
    let world = Arc::new(World::load("tests/worlds/mini").unwrap());
    let actions: Vec<Action> = [
        json!({"tool": "view_accounts", "args": {"search": "ada"}}),
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}}),
        json!({"message": "Sent 25 to Charles."}),
        json!({"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 1}}),
        json!({"tool": "tag_doc", "args": {"doc_id": "d1", "tag": "paid"}}),
        json!({"tool": "view_accounts", "args": {"key": "A-2"}}),
        json!({"tool": "get_account", "args": {"account_id": "A-9"}}),
        json!({"message": "Anything else?"}),
        json!({"tool": "get_account", "args": {"account_id": "A-2"}}),
    ].iter().map(|a| Action::from_json(a).unwrap()).collect();
    let inputs: Vec<understudy::replay::ReplayInput> = (0..4000).map(|i| understudy::replay::ReplayInput { line: i, task_index: None, task_id: Some("pay-back".into()), actions: actions.clone() }).collect();
    let mut ep = understudy::Episode::new(world.clone()).unwrap();
    for (name, idx) in [("messages", vec![3usize;10]), ("get_account", vec![1;10]), ("view search", vec![0;10]), ("view key", vec![6;10]), ("transfer ok", vec![2;10]), ("transfer guard", vec![4;10]), ("tag_doc", vec![5;10])] {
        let acts: Vec<Action> = idx.iter().map(|&i| actions[i].clone()).collect();
        let c0 = cpu();
        for _ in 0..1000 { understudy::replay::replay_one(&mut ep, "pay-back", &acts).unwrap(); }
        println!("{name} x10: {:.0} us cpu per episode", (cpu() - c0) * 1000.0);
    }
    for _ in 0..1 {
        let (t, c) = (Instant::now(), cpu());
        understudy::replay::replay_all(&world, &inputs, &|| {}).unwrap();
        let (w, c) = (t.elapsed().as_secs_f64(), cpu() - c);
        println!("replay_all 4000: wall {w:.2}s cpu {c:.2}s => {:.0}/s wall, {:.0} eps per cpu-second", 4000.0 / w, 4000.0 / c);
        let (t, c0) = (Instant::now(), cpu());
        for i in &inputs { understudy::replay::replay_one(&mut ep, "pay-back", &i.actions).unwrap(); }
        let (w, c) = (t.elapsed().as_secs_f64(), cpu() - c0);
        println!("serial 4000: wall {w:.2}s cpu {c:.2}s => {:.0} eps per cpu-second", 4000.0 / c);
    }
}
