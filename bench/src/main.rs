//! gex-bench (being written).
fn main() {
    eprintln!("gex-bench: not built yet");
    std::process::exit(2);
}
