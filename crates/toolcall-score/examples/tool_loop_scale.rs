//! How the loop guard's work grows with the calls in one response, as ratios: against serializing
//! the very results it produced (work every caller does anyway), and between sizes (10x the calls
//! should cost about 10x: the loop is linear). Not a test: timings vary by machine.
//!
//! Run it with `cargo run --release -p toolcall-score --example tool_loop_scale`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::json;
use toolcall_score::tool_loop::{LoopPolicy, Step, ToolLoop};
use toolcall_score::{Catalog, Format, Response, Tool, ToolCall};

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const RUNS: usize = 7;

fn main() {
    let catalog = Catalog::new((0..20).map(|i| Tool::new(&format!("tool_{i}"), "")));
    let policy = LoopPolicy {
        max_unknown_per_turn: usize::MAX,
        ..LoopPolicy::default()
    };
    println!("calls      loop (min of {RUNS})   serialize results   loop/serialize   per call");
    let mut previous: Option<(usize, Duration)> = None;
    for n in SIZES {
        let response = response(n);
        let (mut best_loop, mut best_ref) = (Duration::MAX, Duration::MAX);
        for _ in 0..RUNS {
            let mut guard = ToolLoop::new(catalog.clone(), policy.clone());
            let input = response.clone();
            let start = Instant::now();
            let Step::Continue(pending) = guard.step(input) else {
                panic!("the scale run expects the turn to go on");
            };
            let results = pending.answer_with(|call| Ok(json!({"ok": call.name})));
            best_loop = best_loop.min(start.elapsed());

            let start = Instant::now();
            let body = serde_json::to_string(results.messages()).expect("serializable");
            best_ref = best_ref.min(start.elapsed());
            black_box(body);
        }
        println!(
            "{n:>7}   {:>12.2?}   {:>17.2?}   {:>14.2}   {:>6.0} ns",
            best_loop,
            best_ref,
            best_loop.as_secs_f64() / best_ref.as_secs_f64(),
            best_loop.as_nanos() as f64 / n as f64
        );
        if let Some((m, before)) = previous {
            println!(
                "          {}x the calls took {:.1}x the time",
                n / m,
                best_loop.as_secs_f64() / before.as_secs_f64()
            );
        }
        previous = Some((n, best_loop));
    }
}

/// `n` OpenAI Chat calls: 1 in 100 to an unknown name (one of 50), the rest to defined tools,
/// every 1000th id repeated.
fn response(n: usize) -> Response {
    let mut response = Response::empty(Format::OpenaiChat);
    response.calls = (0..n)
        .map(|i| {
            let name = if i % 100 == 7 {
                format!("made_up_{}", i % 50)
            } else {
                format!("tool_{}", i % 20)
            };
            let id = if i % 1000 == 999 { 0 } else { i };
            ToolCall::new(Some(&format!("call_{id}")), &name, json!({"i": i}))
        })
        .collect();
    response
}
