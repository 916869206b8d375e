//! The one error type of configuration reading.

use gex_env::EnvError;

/// Why the configuration was refused.
///
/// Both variants wrap a [`gex_env::EnvError`], so the text a user sees is
/// always the one-line `NAME="value" is not accepted: expected ...` form that
/// names the variable to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// One variable holds a malformed or out-of-range value.
    #[error(transparent)]
    BadValue(#[from] EnvError),
    /// A value is well formed on its own but conflicts with another variable
    /// (or with a limit derived from one, such as the largest Active
    /// Message). The error names the variable that must change and quotes the
    /// other value.
    #[error(transparent)]
    Conflict(EnvError),
}

impl ConfigError {
    /// The underlying one-variable error.
    pub fn env_error(&self) -> &EnvError {
        match self {
            ConfigError::BadValue(e) | ConfigError::Conflict(e) => e,
        }
    }

    /// The name of the variable the user has to change.
    pub fn var(&self) -> &str {
        &self.env_error().var
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_the_env_error_line() {
        let e = EnvError::new("GASNET_OFI_MAX_MEDIUM", "100", "something");
        let line = e.to_string();
        assert_eq!(ConfigError::from(e.clone()).to_string(), line);
        assert_eq!(ConfigError::Conflict(e).to_string(), line);
        assert_eq!(
            line,
            "GASNET_OFI_MAX_MEDIUM=\"100\" is not accepted: expected something"
        );
    }

    #[test]
    fn var_names_the_variable() {
        let e = ConfigError::Conflict(EnvError::new("GASNET_OFI_NUM_BBUFS", "2", "x"));
        assert_eq!(e.var(), "GASNET_OFI_NUM_BBUFS");
    }
}
