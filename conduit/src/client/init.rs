//! Start-up over libfabric: bootstrap from the launcher's environment,
//! configuration, provider selection (FI_THREAD_SAFE for the
//! multi-threaded client), then the engine's collective start-up.

use super::engine::{Core, Params};
use super::error::Error;
use super::wait::{self, WaitMode};
use super::ClientOf;
use crate::boot::{self, Bootstrap};
use crate::config::Config;
use crate::startup::{prepare, JobShape};
use crate::sync::{Mode, Par, Seq};
use crate::transport::ofi::{DomainLock, OfiNetwork, OfiTransport, Synced, Unsynced};
use crate::transport::{Network, Transport};
use gex_env::{EnvReader, ProcessEnv};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// How a client starts: its state, how many endpoint sets, and (for tests
/// and embedding) the bootstrap and configuration to use instead of the
/// process environment's.
pub struct Options<S> {
    /// The client's typed state, reachable from handlers
    /// ([`super::Token::state`]) and from [`ClientOf::state`].
    pub state: S,
    /// Endpoint sets (1 to [`MAX_ENDPOINT_SETS`]): one more for each
    /// thread that should own an endpoint (multi-threaded client).
    pub endpoints: usize,
    /// The bootstrap; `None`: from the launcher's environment.
    pub boot: Option<Arc<dyn Bootstrap>>,
    /// The configuration; `None`: from `GASNET_*` variables.
    pub config: Option<Config>,
    /// How the process ends after a collective exit (tests whose ranks are
    /// threads end the thread instead).
    pub end: fn(i32) -> !,
    /// Open tagged messaging too ([`Options::tagged`]).
    pub tagged: bool,
}

/// The most endpoint sets a client may ask for ([`Options::endpoints`]):
/// each set is two endpoints, their receive buffers and an address per
/// rank, so a few per thread is what a process can use.
pub const MAX_ENDPOINT_SETS: usize = 256;

impl<S> Options<S> {
    /// The options' own check, before anything starts.
    fn check(&self) -> Result<(), Error> {
        if (1..=MAX_ENDPOINT_SETS).contains(&self.endpoints) {
            Ok(())
        } else {
            Err(Error::EndpointCount(self.endpoints))
        }
    }

    /// Defaults around `state`: one endpoint set, the process's bootstrap
    /// and configuration.
    pub fn new(state: S) -> Options<S> {
        Options {
            state,
            endpoints: 1,
            boot: None,
            config: None,
            end: super::engine::end_process,
            tagged: false,
        }
    }

    /// With tagged point-to-point messaging ([`crate::tagged`]): its
    /// endpoints are opened and their names exchanged at start-up.
    pub fn tagged(mut self) -> Self {
        self.tagged = true;
        self
    }

    /// With `n` endpoint sets (1 to [`MAX_ENDPOINT_SETS`]; another
    /// number makes the client's init fail with
    /// [`Error::EndpointCount`]).
    pub fn endpoints(mut self, n: usize) -> Self {
        self.endpoints = n;
        self
    }

    /// Over `boot` instead of the environment's bootstrap.
    pub fn bootstrap(mut self, boot: Arc<dyn Bootstrap>) -> Self {
        self.boot = Some(boot);
        self
    }

    /// With `cfg` instead of reading the environment.
    pub fn config(mut self, cfg: Config) -> Self {
        self.config = Some(cfg);
        self
    }

    /// Ending the process with `end` after a collective exit.
    pub fn end_with(mut self, end: fn(i32) -> !) -> Self {
        self.end = end;
        self
    }
}

/// The bootstrap and the configuration, read through `reader` (so that the
/// variables it reads are in its record for `GASNET_VERBOSEENV`).
fn bootstrap_and_config<S>(
    o: &mut Options<S>,
    reader: &EnvReader<'_>,
) -> Result<(Arc<dyn Bootstrap>, Config), Error> {
    let boot = match o.boot.take() {
        Some(b) => b,
        // Through `reader` (which does not print): its record, bootstrap
        // variables included, is printed once, by rank 0, under
        // GASNET_VERBOSEENV.
        None => {
            let b: Arc<dyn Bootstrap> = Arc::from(boot::bootstrap_from(reader)?);
            // A rank of a launched job ends with its launcher.
            if b.size() > 1 {
                boot::watch_parent(b.rank());
            }
            b
        }
    };
    let cfg = match o.config.take() {
        Some(c) => c,
        None => Config::from_env(reader)?,
    };
    Ok((boot, cfg))
}

fn open_ofi<M: Mode, L: DomainLock, S>(
    mut o: Options<S>,
) -> Result<ClientOf<M, S, OfiTransport<L>>, Error> {
    o.check()?;
    boot::reset_provider_signal_handlers();
    let env = ProcessEnv;
    let reader = EnvReader::quiet(&env);
    let (boot, mut cfg) = bootstrap_and_config(&mut o, &reader)?;
    let job = JobShape {
        rank: boot.rank(),
        size: boot.size(),
        single_host: boot.hosts().nhosts() == 1,
        threads: M::PAR,
    };
    let prepared = prepare(&cfg, &reader, &job)?;
    if let Some(w) = prepared.am_window {
        w.apply(&mut cfg.am);
    }
    if prepared.am_recv_mode {
        let count_set = reader.peek(crate::config::am::NUM_RECEIVE_BUFFS).is_some();
        cfg.am
            .use_profile_receive(crate::config::am::RecvBuffSize::Recv, count_set);
    }
    if let Some(f) = &cfg.general.stats_file {
        super::statsfile::prepare(f, boot.hosts().local_index() == 0);
    }
    let keep = cfg.general.malloc_keep_bytes();
    let kept = crate::mem::keep_freed_heap(keep);
    tracing::debug!(keep, ?kept, "GASNET_OFI_MALLOC_KEEP");
    if keep > 0 && kept.trim && !kept.mmap && !cfg.general.quiet && boot.rank() == 0 {
        gex_env::eprintln_whole!(
            "ofi-conduit: glibc refused GASNET_OFI_MALLOC_KEEP={keep} as its mmap threshold \
             (its largest heap is smaller); only the trim threshold is set"
        );
    }
    let caps = prepared.caps().clone();
    let wait_mode = WaitMode::resolve(
        cfg.general.wait_mode,
        boot.hosts().local_ranks().len(),
        wait::usable_cpus(),
    );
    tracing::debug!(?wait_mode, mode = M::NAME, "starting the client");
    let net = OfiNetwork::<L> {
        info: prepared.selected.info,
        caps: caps.clone(),
        tx_cq_size: cfg.cq.tx_cq_size,
        rx_cq_size: cfg.cq.rx_cq_size,
        msg_delivery_complete: cfg.am.use_delivery_complete,
        big_lock: M::PAR && caps.thread_domain_in_par,
        lock: PhantomData,
    };
    let (rma_inject_limit, _) = cfg.rma.resolve_inject_limit(caps.inject_size);
    let tagged = o.tagged.then(|| {
        let w = net.info.first().map(|e| crate::tagged::open::Where::of(&e));
        (w, crate::tagged::Settings::of(&cfg))
    });
    let client: ClientOf<M, S, OfiTransport<L>> = start(
        net,
        Params {
            boot,
            cfg,
            caps: Some(caps),
            sets: o.endpoints,
            state: o.state,
            wait_mode,
            am_inject_limit: prepared.am_inject_limit,
            rma_inject_limit,
            end: o.end,
        },
    )?;
    if let Some((w, st)) = tagged {
        let w = w.ok_or(Error::NoFiInfo)?;
        let eng = crate::tagged::open::open::<M>(&w, &st, &*client.core.boot)?;
        eng.register_world();
        let _ = client.core.tagged.set(eng);
    }
    Ok(client)
}

/// The engine's start-up over any network (the simulator's tests use it).
pub(crate) fn start<M: Mode, N: Network, S>(
    net: N,
    p: Params<S>,
) -> Result<ClientOf<M, S, N::Transport>, Error>
where
    N::Transport: Transport,
{
    let core = Core::init(net, p)?;
    Ok(ClientOf {
        core: ManuallyDrop::new(core),
    })
}

impl ClientOf<Seq, (), OfiTransport<Unsynced>> {
    /// Initialise this rank (collective over the job): bootstrap from the
    /// launcher's environment (or a single-rank job), read the
    /// configuration, select the provider, open the endpoints, exchange
    /// names, post receive buffers, and end with a barrier.
    pub fn init() -> Result<Self, Error> {
        open_ofi(Options::new(()))
    }
}

impl<S: Send> ClientOf<Seq, S, OfiTransport<Unsynced>> {
    /// [`ClientOf::init`] with a state and other [`Options`].
    pub fn init_with(o: Options<S>) -> Result<Self, Error> {
        open_ofi(o)
    }
}

impl ClientOf<Par, (), OfiTransport<Synced>> {
    /// Initialise a multi-threaded client with `endpoints` endpoint sets
    /// (collective): the domain is FI_THREAD_SAFE (or FI_THREAD_DOMAIN
    /// plus one lock where the provider's profile says so).
    pub fn init(endpoints: usize) -> Result<Self, Error> {
        open_ofi(Options::new(()).endpoints(endpoints))
    }
}

impl<S: Send + Sync> ClientOf<Par, S, OfiTransport<Synced>> {
    /// The multi-threaded [`ClientOf::init`] with a state and other
    /// [`Options`].
    pub fn init_with(o: Options<S>) -> Result<Self, Error> {
        open_ofi(o)
    }
}

#[cfg(feature = "sim")]
impl<M: Mode, S> ClientOf<M, S, crate::transport::sim::SimTransport> {
    /// Start a rank over the in-memory network simulator (tests). The
    /// options must carry the rank's bootstrap (e.g. one of
    /// `bootstrap::local::LocalBootstrap::group`); the configuration
    /// defaults to that of an empty environment.
    pub fn init_sim(
        net: crate::transport::sim::SimNetwork,
        mut o: Options<S>,
    ) -> Result<Self, Error> {
        o.check()?;
        let boot = o.boot.take().ok_or(Error::NoBootstrap)?;
        let cfg = match o.config.take() {
            Some(c) => c,
            None => Config::from_env(&EnvReader::quiet(&gex_env::MapEnv::new()))?,
        };
        // The simulator injects up to 64 bytes, like tcp;ofi_rxm's RMA.
        let (am_inject_limit, _) = cfg.am.resolve_inject_limit(64);
        let (rma_inject_limit, _) = cfg.rma.resolve_inject_limit(64);
        start(
            net,
            Params {
                boot,
                wait_mode: WaitMode::Yield,
                cfg,
                caps: None,
                sets: o.endpoints,
                state: o.state,
                am_inject_limit,
                rma_inject_limit,
                end: o.end,
            },
        )
    }
}
