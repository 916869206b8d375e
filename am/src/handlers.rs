//! The handler table: 256 indices, the conduit's own below 128, the
//! client's from 128 up. Index 0 asks for a free index (the highest free
//! one, as GASNet-EX does).

use crate::{Error, MAX_ARGS};
use std::sync::OnceLock;

/// First index available to clients (`GEX_AM_INDEX_BASE`).
pub const CLIENT_BASE: u8 = 128;

/// AM categories as registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// Short.
    Short,
    /// Medium.
    Medium,
    /// Long.
    Long,
}

impl Category {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Short => "short",
            Category::Medium => "medium",
            Category::Long => "long",
        }
    }
}

/// What a handler was registered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Category.
    pub category: Category,
    /// Runs on requests (else on replies).
    pub is_request: bool,
    /// Argument count it expects.
    pub nargs: u8,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} with {} argument{}",
            self.category.as_str(),
            if self.is_request { "request" } else { "reply" },
            self.nargs,
            if self.nargs == 1 { "" } else { "s" }
        )
    }
}

/// What else a handler accepts besides its registered signature: GASNet-EX's
/// `GEX_FLAG_AM_REQREP` (requests and replies) and `GEX_FLAG_AM_MEDLONG`
/// (Mediums and Longs). The argument count always has to match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Widen {
    /// Runs on requests and on replies.
    pub either_side: bool,
    /// A Medium or Long handler that runs for both categories.
    pub medium_or_long: bool,
    /// A GASNet-1 handler (`gasnet_attach` registers no category, side or
    /// argument count): runs for every message naming its index.
    pub untyped: bool,
}

impl Widen {
    /// Whether a handler registered as `want`, widened so, runs for `got`.
    #[inline]
    pub fn accepts(self, want: Signature, got: Signature) -> bool {
        if self.untyped {
            return true;
        }
        let side = want.is_request == got.is_request || self.either_side;
        let cat = want.category == got.category
            || (self.medium_or_long
                && want.category != Category::Short
                && got.category != Category::Short);
        side && cat && want.nargs == got.nargs
    }
}

/// The table, generic over what a handler is (the conduit stores boxed
/// closures; tests store numbers). Requests and replies share one index
/// space, as in GASNet-EX. Every slot is set at most once, so lookups need
/// no lock and registration may race with dispatch on other threads.
#[derive(Debug)]
pub struct HandlerTable<F> {
    entries: Vec<OnceLock<(Signature, Widen, F)>>,
}

impl<F> Default for HandlerTable<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> HandlerTable<F> {
    /// An empty table.
    pub fn new() -> Self {
        HandlerTable {
            entries: (0..256).map(|_| OnceLock::new()).collect(),
        }
    }

    fn check_args(index: u8, sig: Signature) -> Result<(), Error> {
        if sig.nargs as usize > MAX_ARGS {
            return Err(Error::HandlerArgs {
                index,
                nargs: sig.nargs,
            });
        }
        Ok(())
    }

    fn insert(&self, index: u8, sig: Signature, w: Widen, f: F) -> Result<u8, (Error, F)> {
        match self.entries[index as usize].set((sig, w, f)) {
            Ok(()) => Ok(index),
            Err((_, _, f)) => {
                let existing = self.signature(index).unwrap_or(sig);
                Err((Error::HandlerTaken { index, existing }, f))
            }
        }
    }

    /// Register a client handler at `index` (128..=255), or at the highest
    /// free client index when `index` is 0. Returns the index used.
    pub fn register(&self, index: u8, sig: Signature, f: F) -> Result<u8, Error> {
        self.register_widened(index, sig, Widen::default(), f)
    }

    /// [`register`](Self::register) a handler that also accepts what `w`
    /// adds to `sig`.
    pub fn register_widened(&self, index: u8, sig: Signature, w: Widen, f: F) -> Result<u8, Error> {
        Self::check_args(index, sig)?;
        match index {
            0 => {
                let mut f = f;
                for i in (CLIENT_BASE..=255).rev() {
                    if self.entries[i as usize].get().is_some() {
                        continue;
                    }
                    match self.insert(i, sig, w, f) {
                        Ok(i) => return Ok(i),
                        // Taken by another thread meanwhile: keep looking.
                        Err((_, back)) => f = back,
                    }
                }
                Err(Error::HandlerTableFull)
            }
            i if i < CLIENT_BASE => Err(Error::ReservedIndex { index: i }),
            i => self.insert(i, sig, w, f).map_err(|(e, _)| e),
        }
    }

    /// Register one of the conduit's own handlers (1..128).
    pub fn register_internal(&self, index: u8, sig: Signature, f: F) -> Result<u8, Error> {
        debug_assert!(index > 0 && index < CLIENT_BASE);
        Self::check_args(index, sig)?;
        self.insert(index, sig, Widen::default(), f)
            .map_err(|(e, _)| e)
    }

    /// The handler for an incoming message, checked against what arrived.
    #[inline]
    pub fn dispatch(&self, index: u8, got: Signature, src: u32) -> Result<&F, Error> {
        match self.entries[index as usize].get() {
            None => Err(Error::Unregistered { src, index }),
            Some((want, w, f)) => {
                if *want != got && !w.accepts(*want, got) {
                    Err(Error::SignatureMismatch {
                        src,
                        index,
                        got,
                        want: *want,
                    })
                } else {
                    Ok(f)
                }
            }
        }
    }

    /// The handler at `index` if it was registered with exactly `sig`
    /// (widening aside): what [`HandlerTable::dispatch`] returns for such a
    /// message, in one compare; `None` leaves the message to `dispatch`.
    #[inline(always)]
    pub fn exact(&self, index: u8, sig: Signature) -> Option<&F> {
        match self.entries[index as usize].get() {
            Some((want, _, f)) if *want == sig => Some(f),
            _ => None,
        }
    }

    /// What is registered at `index`.
    pub fn signature(&self, index: u8) -> Option<Signature> {
        self.entries[index as usize].get().map(|(s, _, _)| *s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(category: Category, is_request: bool, nargs: u8) -> Signature {
        Signature {
            category,
            is_request,
            nargs,
        }
    }

    #[test]
    fn registration_rules() {
        let t = HandlerTable::new();
        let s = sig(Category::Short, true, 2);
        assert_eq!(t.register(130, s, 1).unwrap(), 130);
        assert_eq!(
            t.register(130, sig(Category::Medium, false, 0), 2)
                .unwrap_err()
                .to_string(),
            "AM handler index 130 is already registered (short request with 2 arguments)"
        );
        assert_eq!(
            t.register(5, s, 3).unwrap_err().to_string(),
            "AM handler index 5 is reserved for the conduit; client handlers use 128..=255 (or 0 for any free index)"
        );
        assert_eq!(
            t.register(140, sig(Category::Long, true, 17), 4)
                .unwrap_err()
                .to_string(),
            "AM handler 140: 17 arguments requested; at most 16 are supported"
        );
        assert_eq!(t.register(0, s, 5).unwrap(), 255);
        assert_eq!(t.register(0, s, 6).unwrap(), 254);
        assert_eq!(t.register_internal(3, s, 7).unwrap(), 3);
    }

    #[test]
    fn full_table() {
        let t = HandlerTable::new();
        let s = sig(Category::Short, true, 0);
        for _ in 128..=255 {
            t.register(0, s, ()).unwrap();
        }
        assert_eq!(t.register(0, s, ()).unwrap_err(), Error::HandlerTableFull);
    }

    #[test]
    fn dispatch_checks_signature() {
        let t = HandlerTable::new();
        let s = sig(Category::Medium, true, 3);
        t.register(200, s, 42).unwrap();
        assert_eq!(*t.dispatch(200, s, 1).unwrap(), 42);
        assert_eq!(
            t.dispatch(201, s, 7).unwrap_err().to_string(),
            "received an AM from rank 7 for handler index 201 with no associated handler registered"
        );
        assert_eq!(
            t.dispatch(200, sig(Category::Medium, false, 3), 2).unwrap_err().to_string(),
            "received a medium reply with 3 arguments from rank 2 for handler index 200, which is registered as a medium request with 3 arguments"
        );
    }

    #[test]
    fn widened_handlers_take_both_sides_or_both_payload_categories() {
        let t: HandlerTable<u32> = HandlerTable::new();
        let both = Widen {
            either_side: true,
            ..Widen::default()
        };
        let medlong = Widen {
            medium_or_long: true,
            ..Widen::default()
        };
        t.register_widened(200, sig(Category::Short, true, 1), both, 1)
            .unwrap();
        t.register_widened(201, sig(Category::Medium, false, 2), medlong, 2)
            .unwrap();
        assert!(t.dispatch(200, sig(Category::Short, true, 1), 0).is_ok());
        assert!(t.dispatch(200, sig(Category::Short, false, 1), 0).is_ok());
        // The argument count and the category still have to match.
        assert!(t.dispatch(200, sig(Category::Short, false, 2), 0).is_err());
        assert!(t.dispatch(200, sig(Category::Medium, true, 1), 0).is_err());
        assert!(t.dispatch(201, sig(Category::Long, false, 2), 0).is_ok());
        assert!(t.dispatch(201, sig(Category::Medium, false, 2), 0).is_ok());
        assert!(t.dispatch(201, sig(Category::Long, true, 2), 0).is_err());
        assert!(t.dispatch(201, sig(Category::Short, false, 2), 0).is_err());
        // Widening never lets a Short handler take payloads.
        let all = Widen {
            either_side: true,
            medium_or_long: true,
            untyped: false,
        };
        assert!(!all.accepts(
            sig(Category::Short, true, 0),
            sig(Category::Medium, true, 0)
        ));
    }

    #[test]
    fn an_untyped_handler_takes_every_category_side_and_count() {
        let t: HandlerTable<u32> = HandlerTable::new();
        let untyped = Widen {
            untyped: true,
            ..Widen::default()
        };
        t.register_widened(0, sig(Category::Medium, true, 0), untyped, 7)
            .unwrap();
        for cat in [Category::Short, Category::Medium, Category::Long] {
            for req in [true, false] {
                for n in [0, 1, 16] {
                    assert_eq!(t.dispatch(255, sig(cat, req, n), 0).ok(), Some(&7));
                }
            }
        }
        // Other indices are still unregistered.
        assert!(t.dispatch(254, sig(Category::Short, true, 0), 0).is_err());
    }
}
