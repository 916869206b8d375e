//! Runs `gex-bench` with tiny counts under `gasnetrun-ofi -n 2` on shm and
//! checks its outputs agree: the JSON parses, every figure is positive, the
//! table shows the JSON's medians, the CSV has a line per figure, and the
//! `--plot` chart is an SVG that names the tests.
//! (A smoke test of the tool, not a measurement.)

use std::time::Duration;
use tests::{job, serial};

const BENCH: &str = env!("CARGO_BIN_EXE_gex-bench");

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing or not a number in {v}"))
}

#[test]
fn json_table_and_csv_agree() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("gex-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json_path = dir.join("out.json");
    let csv_path = dir.join("out.csv");
    let svg_path = dir.join("bench.svg");
    let (j, c, p) = (
        json_path.to_str().unwrap().to_string(),
        csv_path.to_str().unwrap().to_string(),
        svg_path.to_str().unwrap().to_string(),
    );
    let args = [
        "--iters",
        "50",
        "--reps",
        "2",
        "--sizes",
        "8,4k,64k",
        "--flood-bytes",
        "256k",
        "--tests",
        "am,rma,barrier",
        "--json",
        &j,
        "--csv",
        &c,
        "--plot",
        &p,
        "-q",
    ];
    let r = job(BENCH, 2, &args, "shm", &[], Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "gex-bench failed: {r:?}");
    let table = r.stdout;
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).expect("JSON parses");
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let svg = std::fs::read_to_string(&svg_path).expect("--plot wrote the SVG");
    let _ = std::fs::remove_dir_all(&dir);

    assert!(svg.starts_with("<svg"), "not an SVG: {:.200}", svg);
    for want in [
        "am_short_rtt",
        "am_long_flood",
        "put_nbi_bw",
        "message size",
    ] {
        assert!(svg.contains(want), "no {want:?} in the chart");
    }

    assert_eq!(doc["ranks"], 2);
    assert_eq!(doc["reps"], 2);
    assert!(doc["provider"].as_str().unwrap().starts_with("shm"));
    let rows = doc["rows"].as_array().expect("rows");
    let tests: Vec<&str> = rows.iter().map(|r| r["test"].as_str().unwrap()).collect();
    for want in [
        "am_short_rtt",
        "am_medium_flood",
        "am_long_flood",
        "put_latency",
        "get_latency",
        "put_nbi_bw",
        "put_nbi_bw_spread",
        "get_nbi_bw",
        "get_nbi_bw_spread",
        "get_nbi_bw_spread_paged",
        "memcpy_put_bw",
        "memcpy_get_bw",
        "empty_poll",
        "barrier",
    ] {
        assert!(tests.contains(&want), "no {want} row in {tests:?}");
    }
    // Medium stops at the conduit's maximum (8 KiB by default); Long goes on.
    let sizes = |t: &str| -> Vec<u64> {
        rows.iter()
            .filter(|r| r["test"] == t)
            .map(|r| r["size"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(sizes("am_long_flood"), vec![8, 4096, 65536]);
    assert_eq!(sizes("am_medium_flood"), vec![8, 4096]);
    // Put and get latency and bandwidth at every size, with the put path.
    for t in [
        "put_latency",
        "get_latency",
        "put_nbi_bw",
        "put_nbi_bw_spread",
        "get_nbi_bw",
        "get_nbi_bw_spread",
        "get_nbi_bw_spread_paged",
    ] {
        assert_eq!(sizes(t), vec![8, 4096, 65536], "{t}");
    }
    for r in rows.iter().filter(|r| r["test"] == "put_latency") {
        let path = r["path"].as_str().unwrap_or("");
        assert!(path == "inject" || path == "direct", "{r}");
    }
    let pingpong_ran = doc["pingpong"]["ran"].as_bool().unwrap();
    for row in rows {
        let ours = &row["ours"];
        let med = num(ours, "median");
        assert!(med > 0.0, "non-positive figure: {row}");
        assert!(num(ours, "min") <= med && med <= num(ours, "max"), "{row}");
        assert_eq!(ours["n"], 2);
        // The memcpy figures are the same-host limit and the empty poll is
        // the conduit's own loop: no raw fabric counterpart.
        let memcpy = row["test"].as_str().unwrap().starts_with("memcpy_");
        let own = row["test"] == "barrier" || row["test"] == "empty_poll";
        if pingpong_ran && !own && !memcpy {
            assert!(num(&row["raw"], "median") > 0.0, "no raw figure: {row}");
            assert!(num(row, "ratio") > 0.0, "{row}");
            assert!(num(row, "paired_ratio") > 0.0, "{row}");
        }
        // The table shows the same median on the row's line.
        let test = row["test"].as_str().unwrap();
        let size = row["size"]
            .as_u64()
            .map_or("-".to_string(), |s| s.to_string());
        let prec = if row["unit"] == "us" { 3 } else { 1 };
        let shown = format!("{med:.prec$}");
        // The JSON's decimal text may round the other way at a tie
        // (7.7635 printed 7.764 by the table, 7.763 from the JSON's f64):
        // any number within half a unit of the last place shows it.
        let half = 0.5 * 10f64.powi(-(prec as i32)) * (1.0 + 1e-9);
        let line = table
            .lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 2 && w[0] == test && w[1] == size
            })
            .unwrap_or_else(|| panic!("no table line for {test} {size}:\n{table}"));
        assert!(
            line.split_whitespace().any(|w| w
                .parse::<f64>()
                .is_ok_and(|v| w.contains('.') && (v - med).abs() <= half)),
            "table line {line:?} does not show the JSON median {shown}"
        );
    }
    let mem = doc["memory"].as_array().expect("memory");
    assert_eq!(mem.len(), 2);
    for (i, m) in mem.iter().enumerate() {
        assert_eq!(m["rank"], i);
        assert!(num(m, "start_kib") > 0.0 && num(m, "end_kib") > 0.0, "{m}");
        let start = &m["start"];
        assert_eq!(num(start, "total_kib"), num(m, "start_kib"), "{m}");
        assert!(num(start, "file_kib") > 0.0, "{m}");
        let c = &m["conduit"];
        for k in [
            "receive_buffers",
            "request_buffers",
            "reply_buffers",
            "bounce_buffers",
        ] {
            assert!(num(c, k) > 0.0, "conduit {k}: {m}");
        }
        // A segment of 16 x the largest size (64 KiB), more than
        // --flood-bytes: the spread puts write that much; and 2 ranks x 2
        // endpoints (8-byte fi_addr_t) plus 2 segment records of 24 bytes.
        assert_eq!(num(c, "segment"), 16.0 * 65536.0, "{m}");
        assert_eq!(num(c, "address_table"), 2.0 * (2.0 * 8.0 + 24.0), "{m}");
    }
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("provider,test,size,"));
    assert_eq!(lines.len(), 1 + rows.len() + 2 * mem.len(), "{csv}");
}
