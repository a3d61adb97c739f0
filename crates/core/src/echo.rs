//! User input quoted back in messages, cut to a readable length.
//!
//! A message names what is wrong by quoting it (`unknown scheduler `x``, `"10 mbit" is
//! not a rate`). Input can be any length — a name of a megabyte is valid TOML — and a
//! message that repeats it whole is unreadable, so every message that quotes a user's
//! string does it through [`echo`]: strings of at most [`ECHO_MAX_CHARS`] characters
//! unchanged, longer ones as their first [`ECHO_MAX_CHARS`] characters, an ellipsis and
//! their length.

use core::fmt;

/// Longest echo, in characters, before it is cut.
pub const ECHO_MAX_CHARS: usize = 64;

/// A string quoted in a message: `Display` writes it as is, `Debug` quoted and escaped
/// (as `str`'s `Debug`); both cut it after [`ECHO_MAX_CHARS`] characters.
#[derive(Clone, Copy)]
pub struct Echo<'a>(pub &'a str);

/// `s`, to be quoted in a message (see [`Echo`]).
pub fn echo(s: &str) -> Echo<'_> {
    Echo(s)
}

impl<'a> Echo<'a> {
    /// The part written, and the whole length in characters if it was cut.
    fn parts(&self) -> (&'a str, Option<usize>) {
        match self.0.char_indices().nth(ECHO_MAX_CHARS) {
            None => (self.0, None),
            Some((cut, _)) => (&self.0[..cut], Some(self.0.chars().count())),
        }
    }
}

impl fmt::Display for Echo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts() {
            (s, None) => f.write_str(s),
            (s, Some(n)) => write!(f, "{s}… ({n} characters)"),
        }
    }
}

impl fmt::Debug for Echo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts() {
            (s, None) => write!(f, "{s:?}"),
            (s, Some(n)) => {
                let quoted = format!("{s:?}");
                let inner = &quoted[..quoted.len() - 1];
                write!(f, "{inner}…\" ({n} characters)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_unchanged() {
        assert_eq!(echo("bulk").to_string(), "bulk");
        assert_eq!(format!("{:?}", echo("a\"b")), "\"a\\\"b\"");
        let exact = "é".repeat(ECHO_MAX_CHARS);
        assert_eq!(echo(&exact).to_string(), exact);
    }

    #[test]
    fn long_strings_are_cut_with_their_length() {
        let long = "x".repeat(1_000_000);
        let shown = echo(&long).to_string();
        assert_eq!(
            shown,
            format!("{}… (1000000 characters)", "x".repeat(ECHO_MAX_CHARS))
        );
        let quoted = format!("{:?}", echo(&long));
        assert_eq!(
            quoted,
            format!("\"{}…\" (1000000 characters)", "x".repeat(ECHO_MAX_CHARS))
        );
        // Cut at a character, not a byte.
        let wide = "é".repeat(ECHO_MAX_CHARS + 1);
        assert!(
            echo(&wide)
                .to_string()
                .starts_with(&"é".repeat(ECHO_MAX_CHARS))
        );
    }
}
