//! Multi-process tests of the local spawner, through the real launcher.

mod common;

#[path = "local/command_line.rs"]
mod command_line;
#[path = "local/jobs.rs"]
mod jobs;
#[path = "local/teardown.rs"]
mod teardown;

use common::*;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

fn bc() -> String {
    bootcheck().to_string_lossy().into_owned()
}
