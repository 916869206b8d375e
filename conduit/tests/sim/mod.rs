//! Running a job whose ranks are threads of the test, each a real client
//! over the in-memory network simulator, with a deadline.

#![allow(dead_code)]

use bootstrap::local::LocalBootstrap;
use conduit::client::{ClientOf, Mode, Options};
use conduit::config::Config;
use conduit::transport::sim::{Faults, SimConfig, SimFabric, SimTransport};
use gex_env::{EnvReader, MapEnv};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a rank's thread ended.
#[derive(Debug)]
pub enum Ended<R> {
    /// Its body returned (then the client was dropped: collective exit 0;
    /// a rank still in a call when a peer's exit reaches it ends there with
    /// code 0, which counts as returned once its body has).
    Returned(R),
    /// The job exited collectively with this code (`exit`, or a peer's).
    Exited(i32),
    /// It panicked with this message.
    Panicked(String),
}

impl<R: std::fmt::Debug> Ended<R> {
    /// The body's value, or a panic naming how the rank ended.
    pub fn value(self) -> R {
        match self {
            Ended::Returned(r) => r,
            other => panic!("rank did not return: {other:?}"),
        }
    }
}

/// The payload a rank's thread unwinds with after a collective exit.
pub struct RankExit(pub i32);

/// The end hook of simulated ranks: end the thread, not the process.
pub fn end_thread(code: i32) -> ! {
    std::panic::resume_unwind(Box::new(RankExit(code)))
}

/// A configuration from `GASNET_*` settings (nothing else is read). The
/// shared-memory path is off unless `vars` turn it on: the simulated ranks
/// share a process and a host, and the simulator is there to exercise the
/// transport.
pub fn config(vars: &[(&str, &str)]) -> Config {
    let mut env = MapEnv::new();
    env.0
        .insert("GASNET_SUPERNODE_MAXSIZE".to_string(), "1".to_string());
    for (k, v) in vars {
        env.0.insert(k.to_string(), v.to_string());
    }
    Config::from_env(&EnvReader::quiet(&env)).expect("test configuration")
}

/// A job description.
pub struct Job {
    pub ranks: usize,
    pub sim: SimConfig,
    fabric: std::sync::OnceLock<Arc<SimFabric>>,
    pub faults: Faults,
    pub vars: Vec<(&'static str, &'static str)>,
    pub endpoints: usize,
    pub deadline: Duration,
}

impl Job {
    pub fn new(ranks: usize) -> Job {
        Job {
            ranks,
            sim: SimConfig {
                ranks,
                ..SimConfig::default()
            },
            fabric: std::sync::OnceLock::new(),
            faults: Faults::default(),
            vars: Vec::new(),
            endpoints: 1,
            deadline: Duration::from_secs(60),
        }
    }

    /// The job's network (made on first use; settings of the network must
    /// come before).
    pub fn fabric(&self) -> Arc<SimFabric> {
        self.fabric
            .get_or_init(|| SimFabric::new(self.sim.clone()))
            .clone()
    }

    pub fn faults(mut self, f: Faults) -> Job {
        self.faults = f;
        self
    }

    pub fn vars(mut self, v: &[(&'static str, &'static str)]) -> Job {
        self.vars = v.to_vec();
        self
    }

    pub fn endpoints(mut self, n: usize) -> Job {
        self.endpoints = n;
        self
    }

    pub fn max_msg(mut self, n: usize) -> Job {
        assert!(self.fabric.get().is_none(), "max_msg after fabric()");
        self.sim.max_msg_size = n;
        self
    }

    /// Run `body` on every rank (each with the state `state(rank)`);
    /// returns the fabric (for its counters) and how each rank ended. A job
    /// that passes the deadline aborts the test process with a message.
    pub fn run<M, S, R, F>(
        self,
        state: impl Fn(usize) -> S + Sync,
        body: F,
    ) -> (Arc<SimFabric>, Vec<Ended<R>>)
    where
        M: Mode,
        S: Send,
        R: Send,
        F: Fn(&ClientOf<M, S, SimTransport>) -> R + Sync,
    {
        let fabric = self.fabric();
        let f = self.faults.clone();
        fabric.set_faults(move |x| *x = f);
        let boots = LocalBootstrap::group(self.ranks);
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let deadline = self.deadline;
        std::thread::spawn(move || {
            let end = Instant::now() + deadline;
            while !d.load(Ordering::Acquire) {
                if Instant::now() > end {
                    eprintln!("simulated job passed its deadline of {deadline:?}: aborting");
                    std::process::abort();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let cfg = config(&self.vars);
        let slots: Vec<std::sync::Mutex<Option<R>>> = (0..self.ranks)
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        let ended = std::thread::scope(|sc| {
            let handles: Vec<_> = boots
                .into_iter()
                .enumerate()
                .map(|(r, boot)| {
                    let (fabric, cfg, state, body) = (&fabric, cfg.clone(), &state, &body);
                    let slot = &slots[r];
                    let endpoints = self.endpoints;
                    sc.spawn(move || {
                        let o = Options::new(state(r))
                            .endpoints(endpoints)
                            .bootstrap(Arc::new(boot))
                            .config(cfg)
                            .end_with(end_thread);
                        let c = ClientOf::<M, S, SimTransport>::init_sim(fabric.network(r), o)
                            .expect("init over the simulator");
                        let r = body(&c);
                        *slot.lock().unwrap() = Some(r);
                        // Every rank's body is done before anyone's exit
                        // can end a rank still working.
                        c.barrier().expect("the final barrier");
                        drop(c);
                    })
                })
                .collect();
            handles
                .into_iter()
                .enumerate()
                .map(|(r, h)| match h.join() {
                    Ok(()) => Ended::Returned(slots[r].lock().unwrap().take().expect("stored")),
                    Err(p) => {
                        let value = slots[r].lock().unwrap().take();
                        if let Some(e) = p.downcast_ref::<RankExit>() {
                            match (e.0, value) {
                                (0, Some(v)) => Ended::Returned(v),
                                _ => Ended::Exited(e.0),
                            }
                        } else if let Some(s) = p.downcast_ref::<String>() {
                            Ended::Panicked(s.clone())
                        } else if let Some(s) = p.downcast_ref::<&str>() {
                            Ended::Panicked(s.to_string())
                        } else {
                            Ended::Panicked("(non-text panic)".into())
                        }
                    }
                })
                .collect()
        });
        done.store(true, Ordering::Release);
        (fabric, ended)
    }
}
