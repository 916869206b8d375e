//! `Debug` for [`Msg`](crate::wire::Msg) that never shows the job secret
//! (messages are printed when one arrives out of place, and a derived
//! form would print the secret of a hello).

use crate::wire::Msg;
use std::fmt;

const HIDDEN: &str = "(hidden)";

impl fmt::Debug for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Msg::RankHello {
                rank, size, listen, ..
            } => f
                .debug_struct("RankHello")
                .field("secret", &HIDDEN)
                .field("rank", rank)
                .field("size", size)
                .field("listen", listen)
                .finish(),
            Msg::AgentHello { host, .. } => f
                .debug_struct("AgentHello")
                .field("secret", &HIDDEN)
                .field("host", host)
                .finish(),
            Msg::Welcome {
                radix,
                parent,
                host_index,
                host_name,
            } => f
                .debug_struct("Welcome")
                .field("radix", radix)
                .field("parent", parent)
                .field("host_index", host_index)
                .field("host_name", host_name)
                .finish(),
            Msg::ChildHello { rank, .. } => f
                .debug_struct("ChildHello")
                .field("secret", &HIDDEN)
                .field("rank", rank)
                .finish(),
            Msg::Abort { code } => f.debug_struct("Abort").field("code", code).finish(),
            Msg::Finalize { code } => f.debug_struct("Finalize").field("code", code).finish(),
            Msg::RankExit { rank, end } => f
                .debug_struct("RankExit")
                .field("rank", rank)
                .field("end", end)
                .finish(),
            Msg::Kill { signal } => f.debug_struct("Kill").field("signal", signal).finish(),
            Msg::Heartbeat => f.write_str("Heartbeat"),
            Msg::SshEnded { host, end } => f
                .debug_struct("SshEnded")
                .field("host", host)
                .field("end", end)
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hellos_print_no_secret() {
        let secret = [0xab; crate::wire::SECRET_LEN];
        for m in [
            Msg::RankHello {
                secret,
                rank: 3,
                size: 4,
                listen: "127.0.0.1:9".into(),
            },
            Msg::AgentHello { secret, host: 1 },
            Msg::ChildHello { secret, rank: 2 },
        ] {
            let text = format!("{m:?}");
            assert!(text.contains("secret: \"(hidden)\""), "{text}");
            assert!(!text.contains("171") && !text.contains("ab"), "{text}");
        }
        assert_eq!(format!("{:?}", Msg::Abort { code: 3 }), "Abort { code: 3 }");
    }
}
