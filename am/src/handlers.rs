//! The handler table: 256 indices, the conduit's own below 128, the
//! client's from 128 up. Index 0 asks for a free index (the highest free
//! one, as GASNet-EX does).

use crate::MAX_ARGS;

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

/// Registration errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The index is taken.
    #[error("AM handler index {index} is already registered ({existing})")]
    Duplicate {
        /// Index.
        index: u8,
        /// What holds it.
        existing: Signature,
    },
    /// A client index below 128.
    #[error("AM handler index {index} is reserved for the conduit; client handlers use 128..=255 (or 0 for any free index)")]
    Reserved {
        /// Index.
        index: u8,
    },
    /// Too many arguments.
    #[error("AM handler {index}: {nargs} arguments requested; at most {MAX_ARGS} are supported")]
    TooManyArgs {
        /// Index (0 if not yet chosen).
        index: u8,
        /// Count.
        nargs: u8,
    },
    /// No free index left.
    #[error("no free AM handler index left in 128..=255")]
    Full,
}

/// Why an incoming message cannot be delivered to its handler.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// Nothing registered at the index.
    #[error("received an AM from rank {src} for handler index {index} with no associated handler registered")]
    Unregistered {
        /// Sender.
        src: u32,
        /// Index.
        index: u8,
    },
    /// Registered with another signature.
    #[error("received a {got} from rank {src} for handler index {index}, which is registered as a {want}")]
    Mismatch {
        /// Sender.
        src: u32,
        /// Index.
        index: u8,
        /// What arrived.
        got: Signature,
        /// What is registered.
        want: Signature,
    },
}

/// The table, generic over what a handler is (the conduit stores boxed
/// closures; tests store numbers).
#[derive(Debug)]
pub struct HandlerTable<F> {
    entries: Vec<Option<(Signature, F)>>,
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
            entries: (0..256).map(|_| None).collect(),
        }
    }

    fn insert(&mut self, index: u8, sig: Signature, f: F) -> Result<u8, RegisterError> {
        if sig.nargs as usize > MAX_ARGS {
            return Err(RegisterError::TooManyArgs {
                index,
                nargs: sig.nargs,
            });
        }
        if let Some((existing, _)) = &self.entries[index as usize] {
            return Err(RegisterError::Duplicate {
                index,
                existing: *existing,
            });
        }
        self.entries[index as usize] = Some((sig, f));
        Ok(index)
    }

    /// Register a client handler at `index` (128..=255), or at the highest
    /// free client index when `index` is 0. Returns the index used.
    pub fn register(&mut self, index: u8, sig: Signature, f: F) -> Result<u8, RegisterError> {
        if sig.nargs as usize > MAX_ARGS {
            return Err(RegisterError::TooManyArgs {
                index,
                nargs: sig.nargs,
            });
        }
        let index = match index {
            0 => (CLIENT_BASE..=255)
                .rev()
                .find(|&i| self.entries[i as usize].is_none())
                .ok_or(RegisterError::Full)?,
            i if i < CLIENT_BASE => return Err(RegisterError::Reserved { index: i }),
            i => i,
        };
        self.insert(index, sig, f)
    }

    /// Register one of the conduit's own handlers (1..128).
    pub fn register_internal(
        &mut self,
        index: u8,
        sig: Signature,
        f: F,
    ) -> Result<u8, RegisterError> {
        debug_assert!(index > 0 && index < CLIENT_BASE);
        self.insert(index, sig, f)
    }

    /// The handler for an incoming message, checked against what arrived.
    #[inline]
    pub fn dispatch(
        &mut self,
        index: u8,
        got: Signature,
        src: u32,
    ) -> Result<&mut F, DispatchError> {
        match &mut self.entries[index as usize] {
            None => Err(DispatchError::Unregistered { src, index }),
            Some((want, f)) => {
                if *want != got {
                    Err(DispatchError::Mismatch {
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

    /// What is registered at `index`.
    pub fn signature(&self, index: u8) -> Option<Signature> {
        self.entries[index as usize].as_ref().map(|(s, _)| *s)
    }

    /// Replace every client handler (index >= 128) with `f()`: the exit
    /// path disables client handlers so none runs during shutdown.
    pub fn replace_client_handlers(&mut self, mut f: impl FnMut(Signature) -> F) {
        for (sig, h) in self.entries[CLIENT_BASE as usize..].iter_mut().flatten() {
            *h = f(*sig);
        }
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
        let mut t = HandlerTable::new();
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
        let mut t = HandlerTable::new();
        let s = sig(Category::Short, true, 0);
        for _ in 128..=255 {
            t.register(0, s, ()).unwrap();
        }
        assert_eq!(t.register(0, s, ()).unwrap_err(), RegisterError::Full);
    }

    #[test]
    fn dispatch_checks_signature() {
        let mut t = HandlerTable::new();
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
        t.replace_client_handlers(|_| 0);
        assert_eq!(*t.dispatch(200, s, 1).unwrap(), 0);
    }
}
