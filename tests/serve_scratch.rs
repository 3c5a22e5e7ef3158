use std::sync::Arc;
use std::time::Instant;
use serde_json::json;
use understudy::serve::{Fields, Op, ServeConfig, Server};
use understudy::store::{Durability, Store, Actor};
use understudy::{Action, Episode, World};
use understudy::recorder::Recorder;

#[test]
fn scratch_timing() {
    let world = Arc::new(World::load(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/worlds/support-desk")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open_with(dir.path().join("s.sqlite"), Durability::Fast).unwrap());
    let action = Action::tool("get_ticket", json!({"ticket_id": "T-1042"}));
    // engine only
    let mut ep = Episode::new(world.clone()).unwrap();
    let n = 2000;
    let mut t = std::time::Duration::ZERO;
    for i in 0..n { if i % 15 == 0 { ep.reset("duplicate-charge", 0).unwrap(); } let s = Instant::now(); ep.step(&action).unwrap(); t += s.elapsed(); }
    eprintln!("episode.step {:?}", t / n);
    // recorder
    let mut t = std::time::Duration::ZERO;
    let mut rec = None;
    for i in 0..n { if i % 15 == 0 { rec = Some(Recorder::start(store.clone(), world.clone(), "duplicate-charge", Actor::Agent{model:"x".into()}, 0).unwrap()); }
        let r = rec.as_mut().unwrap(); let s = Instant::now(); r.step(action.clone(), None).unwrap(); t += s.elapsed(); }
    eprintln!("recorder.step {:?}", t / n);
    let server = Server::new(vec![world.clone()], store.clone(), ServeConfig { durability: Durability::Fast, ..Default::default() }).unwrap();
    let mut t = std::time::Duration::ZERO;
    let mut id = String::new();
    for i in 0..n { if i % 15 == 0 {
            if !id.is_empty() { server.handle(Op::Close, Fields::from_value(Op::Close, json!({"episode_id": id})).unwrap()).unwrap(); }
            let r = server.handle(Op::Reset, Fields::from_value(Op::Reset, json!({"task_id": "duplicate-charge"})).unwrap()).unwrap().into_value();
            id = r["episode_id"].as_str().unwrap().to_string(); }
        let line = serde_json::to_vec(&json!({"op":"step","episode_id": id, "action": {"tool": "get_ticket", "args": {"ticket_id": "T-1042"}}})).unwrap();
        let s = Instant::now(); let out = understudy::serve::stdio::handle_line(&server, &line); t += s.elapsed(); assert!(!out.is_empty()); }
    eprintln!("handle_line step {:?}", t / n);
}

#[test]
fn scratch_store() {
    use understudy::store::StepRecord;
    let world = Arc::new(World::load(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/worlds/support-desk")).unwrap());
    for (name, d) in [("fast", Durability::Fast), ("full", Durability::Full)] {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open_with(dir.path().join("s.sqlite"), d).unwrap());
    let rec = Recorder::start(store.clone(), world.clone(), "duplicate-charge", Actor::Agent{model:"x".into()}, 0).unwrap();
    let id = rec.record().id.clone();
    let mut ep = Episode::new(world.clone()).unwrap();
    ep.reset("duplicate-charge", 0).unwrap();
    let out = ep.step(&Action::tool("get_ticket", json!({"ticket_id": "T-1042"}))).unwrap();
    let n = if d == Durability::Fast { 3000 } else { 300 };
    let mut t = std::time::Duration::ZERO;
    for i in 0..n {
        let r = StepRecord { idx: i, action: Action::tool("get_ticket", json!({"ticket_id": "T-1042"})), observation: out.observation.clone(), terminated: false, truncated: false, wall_at: understudy::store::now(), active_ms: 5, rationale: None, flag: None, retracted: false, retracted_at: None };
        let s = Instant::now(); store.append_step(&id, &r).unwrap(); t += s.elapsed();
    }
    eprintln!("{name} append_step {:?}", t / n);
    let s = Instant::now(); for _ in 0..1000 { std::hint::black_box(understudy::store::now()); } eprintln!("now() {:?}", s.elapsed()/1000);
    }
}

#[test]
fn scratch_cold() {
    let world = Arc::new(World::load(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/worlds/support-desk")).unwrap());
    let action = Action::tool("get_ticket", json!({"ticket_id": "T-1042"}));
    let n = 200;
    let (mut a, mut b, mut c, mut d) = (std::time::Duration::ZERO, std::time::Duration::ZERO, std::time::Duration::ZERO, std::time::Duration::ZERO);
    for _ in 0..n {
        let s = Instant::now();
        let mut ep = Episode::new(world.clone()).unwrap();
        a += s.elapsed();
        let s = Instant::now();
        ep.reset("duplicate-charge", 0).unwrap();
        b += s.elapsed();
        let s = Instant::now();
        ep.step(&action).unwrap();
        c += s.elapsed();
        let s = Instant::now();
        ep.step(&action).unwrap();
        d += s.elapsed();
    }
    eprintln!("new {:?} reset {:?} first step {:?} second step {:?}", a / n, b / n, c / n, d / n);
}
