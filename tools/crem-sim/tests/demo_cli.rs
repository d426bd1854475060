//! `crem-sim --demo FILE`: the demo's results JSON from simulation, and the
//! options it refuses (exit status 2).

use std::process::Command;

fn crem_sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_crem-sim"))
        .args(args)
        .output()
        .expect("run crem-sim")
}

#[test]
fn writes_the_demos_cells_marked_simulation() {
    let dir = std::env::temp_dir().join(format!("crem-sim-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("demo.json");
    let p = path.to_str().unwrap();
    let out = crem_sim(&[
        "--demo",
        p,
        "--trials",
        "2",
        "--packets",
        "400",
        "--loss",
        "1",
        "-q",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(doc["simulation"], true);
    assert_eq!(doc["params"]["k"], 16);
    assert_eq!(doc["params"]["m"], 2);
    assert_eq!(doc["params"]["rdma"], "prompt");
    let cells: Vec<(String, f64, u64)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["mode"].as_str().unwrap().to_string(),
                r["loss_pct"].as_f64().unwrap(),
                r["trials"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("off", 0.0),
        ("off", 1.0),
        ("fixed", 1.0),
        ("adaptive", 1.0),
    ];
    assert_eq!(
        cells,
        want.iter()
            .map(|&(m, l)| (m.to_string(), l, 2))
            .collect::<Vec<_>>()
    );
    // The loss-free reference is its own reference.
    assert_eq!(doc["runs"][0]["goodput_vs_lossfree"], 1.0);
}

#[test]
fn refuses_what_does_not_apply() {
    for (args, msg) in [
        (&["--mode", "sr"][..], "--mode does not apply"),
        (&["--k", "16,32"][..], "one --k value, not 2"),
        (&["--loss", "100"][..], "loss 100% out of range"),
    ] {
        let mut a = vec!["--demo", "/nonexistent/never-written.json"];
        a.extend_from_slice(args);
        let out = crem_sim(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(msg),
            "{args:?}"
        );
    }
    // --trials only with --demo.
    assert_eq!(crem_sim(&["--trials", "2"]).status.code(), Some(2));
}
