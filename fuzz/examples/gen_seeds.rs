//! Writes the seed corpus, `seeds/<target>/<name>`, from the harnesses'
//! `seeds()` (valid messages, frames and environments built with the
//! crates' own encoders). Run from anywhere:
//! `cargo run --manifest-path fuzz/Cargo.toml --example gen_seeds`.
//! Files of other names already there are left alone.

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    for (target, seeds) in gex_fuzz::all_seeds() {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir)?;
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(name), bytes)?;
        }
        println!("{}: {} seeds", dir.display(), seeds.len());
    }
    Ok(())
}
