//! Errors of the byte core. Each has a stable numeric code that crosses the wasm boundary
//! (as a negative return value) and is mapped to a typed TypeScript error in `@kura/core`.

use core::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// Chunking parameters outside the rules of `docs/FORMAT.md` (the detail says which rule).
    InvalidParams(&'static str),
    /// Compression level outside the supported range.
    InvalidLevel,
    /// A zstd frame that is malformed, truncated, or has trailing bytes.
    CorruptFrame,
    /// A zstd frame that declares or produces more bytes than the caller's bound.
    FrameTooLarge,
    /// A zstd frame that declares or produces fewer bytes than the expected raw length.
    FrameTooShort,
    /// An operation on a finished or unknown handle.
    InvalidState,
    /// zstd failed while compressing (out of memory in practice).
    CompressFailed,
    /// Vector rows or a query whose length does not fit the rows' dimensions.
    InvalidShape,
    /// A grep pattern that is not a regular expression, or whose automaton would be too large
    /// (the regex crate's message is in the output region).
    InvalidPattern,
    /// Sealed bytes whose tag does not authenticate them: tampered with, truncated, or sealed
    /// under another key or with other associated data.
    Unauthentic,
    /// Key derivation parameters outside Argon2id's rules or Kura's bounds.
    InvalidKdfParams,
}

impl Error {
    /// Stable code used across the wasm boundary. Never reuse or renumber.
    pub fn code(self) -> i32 {
        match self {
            Error::InvalidParams(_) => 1,
            Error::InvalidLevel => 2,
            Error::CorruptFrame => 3,
            Error::FrameTooLarge => 4,
            Error::FrameTooShort => 5,
            Error::InvalidState => 6,
            Error::CompressFailed => 7,
            Error::InvalidShape => 8,
            Error::InvalidPattern => 9,
            Error::Unauthentic => 10,
            Error::InvalidKdfParams => 11,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidParams(why) => write!(f, "invalid chunking parameters: {why}"),
            Error::InvalidLevel => write!(f, "compression level out of range"),
            Error::CorruptFrame => write!(f, "corrupt or truncated zstd frame"),
            Error::FrameTooLarge => write!(f, "zstd frame exceeds the expected raw length"),
            Error::FrameTooShort => write!(f, "zstd frame is shorter than the expected raw length"),
            Error::InvalidState => write!(f, "operation on a finished or unknown handle"),
            Error::CompressFailed => write!(f, "zstd compression failed"),
            Error::InvalidShape => write!(f, "vectors of the wrong length for the rows' dimensions"),
            Error::InvalidPattern => write!(f, "not a usable regular expression"),
            Error::Unauthentic => write!(f, "sealed bytes failed authentication"),
            Error::InvalidKdfParams => write!(f, "key derivation parameters out of range"),
        }
    }
}

impl std::error::Error for Error {}
