//! Every case under cases/ for every agent under recorded/, against baselines/ and the dummy agent's snapshot.
fn main() -> std::process::ExitCode {
    let harness = toolcall_harness::Harness::new()
        .cases("cases")
        .recorded("recorded");
    harness.baselines("baselines").snapshots("snapshots").run()
}
