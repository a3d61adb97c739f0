//! Parsing and printing of `tc(8)`-style quantities: rates, sizes and times.
//!
//! The accepted units follow iproute2's `tc` (`get_rate`/`get_rate64` and `get_size` in
//! `tc/tc_util.c`, `get_time` in `lib/utils.c`). Units are matched case-insensitively,
//! like `tc` does (`strcasecmp`), so `10Mbit`, `10MBIT` and `10mbit` are the same rate.
//!
//! # Rates ([`Rate`], bits per second)
//!
//! | unit | bits per second |
//! | --- | --- |
//! | bare number, `bit` | 1 |
//! | `kbit`, `mbit`, `gbit`, `tbit` | 10^3, 10^6, 10^9, 10^12 |
//! | `kibit`, `mibit`, `gibit`, `tibit` | 2^10, 2^20, 2^30, 2^40 |
//! | `bps` (**bytes** per second) | 8 |
//! | `kbps`, `mbps`, `gbps`, `tbps` (**bytes**) | 8 × 10^3, 8 × 10^6, 8 × 10^9, 8 × 10^12 |
//! | `kibps`, `mibps`, `gibps`, `tibps` (**bytes**) | 8 × 2^10, 8 × 2^20, 8 × 2^30, 8 × 2^40 |
//!
//! As in `tc`, `bps` means *bytes* per second: `1mbps` is 8 000 000 bit/s. Because that
//! trips people up, the suffixes people often mean either way (`m`, `mb`, `k`, `kb`, `b`,
//! `mib`, ...) are rejected with a hint naming both readings.
//!
//! # Sizes ([`Bytes`])
//!
//! | unit | bytes |
//! | --- | --- |
//! | bare number, `b` | 1 |
//! | `k`, `kb` | 1024 |
//! | `m`, `mb` | 1024^2 |
//! | `g`, `gb` | 1024^3 |
//! | `kbit`, `mbit`, `gbit` | 1024 / 8, 1024^2 / 8, 1024^3 / 8 (that many *bits*) |
//!
//! # Times ([`Duration`], nanoseconds)
//!
//! | unit | nanoseconds |
//! | --- | --- |
//! | `s`, `sec`, `secs` | 10^9 |
//! | `ms`, `msec`, `msecs` | 10^6 |
//! | `us`, `usec`, `usecs`, **bare number** | 10^3 |
//! | `ns`, `nsec`, `nsecs` | 1 |
//!
//! A bare number is **microseconds**, as in `tc`'s `get_time` (`TIME_UNITS_PER_SEC`).
//!
//! # Fractions ([`Fraction`], parts per billion) and ratios ([`Ratio`])
//!
//! Not `tc` quantities, but written the same way. A fraction is a bare number from 0
//! to 1 or a percentage: `0.01`, `1%` and `1e-2` are all 10⁷ parts per billion; more
//! than 1 (100 %) is an error. A ratio is a bare positive number with at most six
//! decimals (`2`, `1.5`), kept as an exact reduced fraction (`3/2`).
//!
//! # Numbers
//!
//! A number is an optional `+`, decimal digits with an optional fraction (`10`, `1.5`,
//! `.5`, `5.`), and an optional exponent (`1e6`, `2.5E-3`), followed directly by the
//! unit. Leading and trailing whitespace is ignored.
//!
//! # Deliberate differences from `tc`
//!
//! * **Exact arithmetic.** `tc` reads the number with `strtod` into an `f64` and then
//!   truncates; we read the decimal exactly: `1.5s` is exactly 1 500 000 000 ns, `0.5us`
//!   is 500 ns, `1.5kbit` is 1500 bit/s, `1e6bit` is 10^6 bit/s.
//! * **No silent truncation.** A value that is not a whole number of the base unit
//!   (bit/s, bytes, nanoseconds) is an error naming the exact value, e.g. `0.3kb` is
//!   307.2 bytes and `1.5b`, `0.1ns` are rejected; `tc` silently truncates them.
//! * **Bits, not bytes.** `tc` stores rates in bytes per second (it divides by 8 and
//!   truncates, so `1001bit` becomes 125 B/s); a [`Rate`] is in bits per second, so every
//!   whole number of bit/s is kept exactly.
//! * **Overflow is an error.** A value above `u64::MAX` base units is rejected; `tc`
//!   only checks this in the 32-bit `get_rate` and otherwise casts out of range.
//! * **Negative numbers are rejected** (`tc`'s `strtod` accepts `-1` and then converts
//!   it to an unsigned integer).
//! * **Percentages are rejected.** `tc` accepts `rate 30%` (a share of the device's link
//!   speed) in some places; we have no device to ask, so an absolute rate is required.
//! * **Nanoseconds are accepted** in times (`ns`, `nsec`, `nsecs`): `tc`'s 32-bit
//!   `get_time` (microsecond units) does not accept them, its `get_time64` does. Since a
//!   [`Duration`] is in nanoseconds we accept them, while a bare number stays
//!   microseconds as in `get_time` (in `get_time64` a bare number is nanoseconds).
//! * **Only decimal numbers.** `strtod` also accepts `inf`, `nan` and hexadecimal
//!   (`0x10`); we do not.
//! * **Whitespace** around the string is trimmed (`tc` skips leading whitespace and
//!   rejects trailing whitespace); whitespace between number and unit is an error.
//! * **Printing is exact.** `tc` prints rounded values (`print_size` prints `%gKb` for
//!   anything within 16 bytes of a multiple of 1024); our `Display` prints the exact
//!   value in the shortest form, in lower case (`10mbit`, `1.5mbit`, `1500bit`, `8kb`,
//!   `1500b`, `1.5s`, `5ms`, `20us`, `250ns`, `0s`), and parsing that text gives back
//!   the same value.

use super::{Bytes, Duration, Fraction, Instant, Rate, Ratio};
use crate::echo::echo;
use core::fmt;
use core::str::FromStr;

/// The kind of quantity being parsed; selects the unit table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// A [`Rate`] (bits per second).
    Rate,
    /// A size in [`Bytes`].
    Size,
    /// A [`Duration`] (nanoseconds).
    Time,
    /// A [`Fraction`] (parts per billion).
    Fraction,
    /// A [`Ratio`] (read in millionths).
    Ratio,
}

/// What is wrong with a string that failed to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The string is empty (or only whitespace).
    Empty,
    /// The string does not start with a decimal number.
    NotANumber,
    /// The text after the number is not a unit of this kind (holds that text as typed).
    UnknownSuffix(String),
    /// The value is not a whole number of the base unit (bit/s, bytes, nanoseconds).
    NotWhole,
    /// The value does not fit in a `u64` of the base unit.
    Overflow,
    /// The number is negative.
    Negative,
    /// A percentage was given where an absolute rate is required.
    Percent,
}

/// A string that is not a valid rate, size or time. Its `Display` is one sentence naming
/// the input, what is wrong with it, and every accepted unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseUnitError {
    /// The string that failed to parse, as given.
    pub input: String,
    /// What it was parsed as.
    pub kind: UnitKind,
    /// What is wrong with it.
    pub problem: Problem,
}

impl ParseUnitError {
    /// The list of accepted units for [`ParseUnitError::kind`], as printed in the message.
    pub fn accepted_suffixes(&self) -> &'static str {
        match self.kind {
            UnitKind::Rate => {
                "bit kbit mbit gbit tbit kibit mibit gibit tibit (bits per second), \
                 bps kbps mbps gbps tbps kibps mibps gibps tibps (BYTES per second, as in tc), \
                 or a bare number of bits per second"
            }
            UnitKind::Size => {
                "b k kb m mb g gb (bytes, k = 1024), kbit mbit gbit (1024, 1024^2, 1024^3 bits, \
                 as in tc), or a bare number of bytes"
            }
            UnitKind::Time => {
                "s sec secs ms msec msecs us usec usecs ns nsec nsecs, \
                 or a bare number of microseconds (as in tc)"
            }
            UnitKind::Fraction => "%, or a bare number from 0 to 1 (0.01 is 1%)",
            UnitKind::Ratio => "none: a bare number such as 2 or 1.5",
        }
    }
}

impl fmt::Display for ParseUnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (noun, base) = match self.kind {
            UnitKind::Rate => ("rate", "bits per second"),
            UnitKind::Size => ("size", "bytes"),
            UnitKind::Time => ("time", "nanoseconds"),
            UnitKind::Fraction => ("fraction", "parts per billion"),
            UnitKind::Ratio => ("ratio", "millionths"),
        };
        write!(f, "{:?} is not a {noun}: ", echo(&self.input))?;
        match &self.problem {
            Problem::Empty => write!(f, "it is empty")?,
            Problem::NotANumber => write!(f, "it does not start with a decimal number")?,
            Problem::Negative => write!(f, "it is negative")?,
            Problem::Percent => write!(
                f,
                "a percentage of the device rate is not supported, write an absolute rate"
            )?,
            Problem::Overflow => match self.kind {
                UnitKind::Fraction => write!(f, "it is more than 1 (100%)")?,
                UnitKind::Ratio => write!(f, "it is too large (the maximum is {})", u32::MAX)?,
                _ => write!(f, "it is too large (the maximum is {} {base})", u64::MAX)?,
            },
            Problem::NotWhole => match exact_value(self.kind, self.input.trim()) {
                Ok(value) => write!(
                    f,
                    "it is {} {base}, not a whole number of {base}",
                    echo(&value.to_string())
                )?,
                Err(_) => write!(f, "it is not a whole number of {base}")?,
            },
            Problem::UnknownSuffix(suffix) => {
                write!(f, "unknown unit {:?}", echo(suffix))?;
                let trimmed = self.input.trim();
                let number = trimmed.strip_suffix(suffix.as_str()).unwrap_or(trimmed);
                let hint = match self.kind {
                    _ if suffix.starts_with(char::is_whitespace) => {
                        Some("write the unit right after the number, without a space".to_owned())
                    }
                    UnitKind::Rate => rate_hint(number, suffix),
                    UnitKind::Time => time_hint(number, suffix),
                    UnitKind::Size | UnitKind::Fraction | UnitKind::Ratio => None,
                };
                if let Some(hint) = hint {
                    write!(f, " ({hint})")?;
                }
            }
        }
        write!(f, "; accepted units: {}", self.accepted_suffixes())
    }
}

impl std::error::Error for ParseUnitError {}

/// For a rate unit that people commonly mean two ways (`m`, `mb`, `kib`, `b`, ...), the
/// hint naming both readings; for a valid unit followed by `/s`, the unit without it.
fn rate_hint(number: &str, suffix: &str) -> Option<String> {
    let lower = suffix.to_ascii_lowercase();
    let lower = lower.strip_suffix("/s").unwrap_or(&lower);
    let number = echo(number);
    if lower.len() < suffix.len() && RATE_UNITS.iter().any(|&(name, _)| name == lower) {
        return Some(format!("did you mean \"{number}{lower}\"?"));
    }
    let prefix = lower.strip_suffix('b').unwrap_or(lower);
    let name = match prefix {
        "" => "",
        "k" => "kilo",
        "m" => "mega",
        "g" => "giga",
        "t" => "tera",
        "ki" => "kibi",
        "mi" => "mebi",
        "gi" => "gibi",
        "ti" => "tebi",
        _ => return None,
    };
    Some(format!(
        "did you mean \"{number}{prefix}bit\" ({name}bits per second) \
         or \"{number}{prefix}bps\" ({name}bytes per second)?"
    ))
}

/// For a time written in hours or minutes, which `tc` does not accept (its `get_time`
/// knows seconds, milliseconds and microseconds; `get_time64` adds nanoseconds), the
/// same time in seconds.
fn time_hint(number: &str, suffix: &str) -> Option<String> {
    let seconds_per_unit: u64 = match suffix.to_ascii_lowercase().as_str() {
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        _ => return None,
    };
    let ns = exact_value(UnitKind::Time, &format!("{number}s"))
        .and_then(|v| v.times(seconds_per_unit).to_u64())
        .ok()?;
    Some(format!(
        "tc has no unit of hours or minutes: write \"{}\"",
        Duration(ns)
    ))
}

/// Units of each kind: lower-case name and value in the base unit. The empty name is
/// a bare number.
const RATE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("bit", 1),
    ("kbit", 1_000),
    ("mbit", 1_000_000),
    ("gbit", 1_000_000_000),
    ("tbit", 1_000_000_000_000),
    ("kibit", 1 << 10),
    ("mibit", 1 << 20),
    ("gibit", 1 << 30),
    ("tibit", 1 << 40),
    ("bps", 8),
    ("kbps", 8_000),
    ("mbps", 8_000_000),
    ("gbps", 8_000_000_000),
    ("tbps", 8_000_000_000_000),
    ("kibps", 8 << 10),
    ("mibps", 8 << 20),
    ("gibps", 8 << 30),
    ("tibps", 8 << 40),
];

const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("kbit", (1 << 10) / 8),
    ("mbit", (1 << 20) / 8),
    ("gbit", (1 << 30) / 8),
];

const FRACTION_UNITS: &[(&str, u64)] = &[("", 1_000_000_000), ("%", 10_000_000)];

const RATIO_UNITS: &[(&str, u64)] = &[("", 1_000_000)];

const TIME_UNITS: &[(&str, u64)] = &[
    ("", 1_000),
    ("s", 1_000_000_000),
    ("sec", 1_000_000_000),
    ("secs", 1_000_000_000),
    ("ms", 1_000_000),
    ("msec", 1_000_000),
    ("msecs", 1_000_000),
    ("us", 1_000),
    ("usec", 1_000),
    ("usecs", 1_000),
    ("ns", 1),
    ("nsec", 1),
    ("nsecs", 1),
];

/// An exact non-negative decimal: `digits × 10^exp`, with `digits` most significant
/// first, no leading or trailing zeros (empty for zero).
#[derive(Debug)]
struct Decimal {
    digits: Vec<u8>,
    exp: i64,
}

impl Decimal {
    fn new(mut digits: Vec<u8>, mut exp: i64) -> Decimal {
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
            exp = exp.saturating_add(1);
        }
        if digits.is_empty() {
            exp = 0;
        }
        Decimal { digits, exp }
    }

    fn times(self, m: u64) -> Decimal {
        let mut out = Vec::with_capacity(self.digits.len() + 20);
        let mut carry: u128 = 0;
        for &d in self.digits.iter().rev() {
            carry += u128::from(d) * u128::from(m);
            out.push((carry % 10) as u8);
            carry /= 10;
        }
        while carry > 0 {
            out.push((carry % 10) as u8);
            carry /= 10;
        }
        out.reverse();
        Decimal::new(out, self.exp)
    }

    fn to_u64(&self) -> Result<u64, Problem> {
        if self.exp < 0 {
            return Err(Problem::NotWhole);
        }
        // u64::MAX has 20 digits.
        if (self.digits.len() as i64).saturating_add(self.exp) > 20 {
            return Err(Problem::Overflow);
        }
        let zeros = core::iter::repeat_n(&0, self.exp as usize);
        self.digits.iter().chain(zeros).try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d)))
                .ok_or(Problem::Overflow)
        })
    }
}

impl fmt::Display for Decimal {
    /// Plain decimal notation, or `<digits>e<exp>` if that would need more than 30 zeros.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits: String = self.digits.iter().map(|&d| char::from(b'0' + d)).collect();
        // Digits before the decimal point (may be negative: zeros after the point).
        let int_len = digits.len() as i128 + i128::from(self.exp);
        if digits.is_empty() {
            write!(f, "0")
        } else if !(-30..=digits.len() as i128 + 30).contains(&int_len) {
            write!(f, "{digits}e{}", self.exp)
        } else if self.exp >= 0 {
            write!(f, "{digits}{}", "0".repeat(self.exp as usize))
        } else if int_len > 0 {
            let (int, frac) = digits.split_at(int_len as usize);
            write!(f, "{int}.{frac}")
        } else {
            write!(f, "0.{}{digits}", "0".repeat(-int_len as usize))
        }
    }
}

/// Reads the leading decimal number of `s` (`[+]digits[.digits][e[+|-]digits]`, at least
/// one digit in the mantissa), returning it and the rest of `s`.
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'+'));
    let mut digits = Vec::new();
    let mut frac_len: i64 = 0;
    let mut seen_point = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                digits.push(c - b'0');
                if seen_point {
                    frac_len += 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if digits.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let negative = b.get(j) == Some(&b'-');
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let start = j;
        let mut e: i64 = 0;
        while let Some(c @ b'0'..=b'9') = b.get(j) {
            e = e.saturating_mul(10).saturating_add(i64::from(c - b'0'));
            j += 1;
        }
        // Like strtod: without digits, the `e` is not part of the number.
        if j > start {
            exp = if negative { -e } else { e };
            i = j;
        }
    }
    Some((Decimal::new(digits, exp.saturating_sub(frac_len)), &s[i..]))
}

/// The exact value of trimmed input `s` in the base unit of `kind`, before the whole
/// number and range checks.
fn exact_value(kind: UnitKind, s: &str) -> Result<Decimal, Problem> {
    if s.is_empty() {
        return Err(Problem::Empty);
    }
    if let Some(rest) = s.strip_prefix('-') {
        return Err(match split_number(rest) {
            Some(_) => Problem::Negative,
            None => Problem::NotANumber,
        });
    }
    let (number, suffix) = split_number(s).ok_or(Problem::NotANumber)?;
    if kind == UnitKind::Rate && suffix.contains('%') {
        return Err(Problem::Percent);
    }
    let table = match kind {
        UnitKind::Rate => RATE_UNITS,
        UnitKind::Size => SIZE_UNITS,
        UnitKind::Time => TIME_UNITS,
        UnitKind::Fraction => FRACTION_UNITS,
        UnitKind::Ratio => RATIO_UNITS,
    };
    let &(_, multiplier) = table
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(suffix))
        .ok_or_else(|| Problem::UnknownSuffix(suffix.to_string()))?;
    Ok(number.times(multiplier))
}

fn parse(kind: UnitKind, input: &str) -> Result<u64, ParseUnitError> {
    exact_value(kind, input.trim())
        .and_then(|value| value.to_u64())
        .map_err(|problem| ParseUnitError {
            input: input.to_string(),
            kind,
            problem,
        })
}

/// Parses a `tc`-style rate such as `10mbit`, `1.5gbit` or `100kbps` (bytes per second).
/// Same as `s.parse::<Rate>()`; see the [module documentation](self) for the units.
pub fn parse_rate(s: &str) -> Result<Rate, ParseUnitError> {
    parse(UnitKind::Rate, s).map(Rate)
}

/// Parses a `tc`-style size such as `1500`, `1500b`, `8kb` or `1mb` (1024-based).
/// Same as `s.parse::<Bytes>()`; see the [module documentation](self) for the units.
pub fn parse_size(s: &str) -> Result<Bytes, ParseUnitError> {
    parse(UnitKind::Size, s).map(Bytes)
}

/// Parses a `tc`-style time such as `5ms`, `20us`, `1.5s` or `100` (microseconds).
/// Same as `s.parse::<Duration>()`; see the [module documentation](self) for the units.
pub fn parse_time(s: &str) -> Result<Duration, ParseUnitError> {
    parse(UnitKind::Time, s).map(Duration)
}

/// Parses a fraction such as `0.01`, `1%` or `1e-2` (all one percent); see the
/// [module documentation](self). Same as `s.parse::<Fraction>()`.
pub fn parse_fraction(s: &str) -> Result<Fraction, ParseUnitError> {
    let ppb = parse(UnitKind::Fraction, s)?;
    match u32::try_from(ppb) {
        Ok(ppb) if ppb <= Fraction::PPB => Ok(Fraction(ppb)),
        _ => Err(ParseUnitError {
            input: s.to_string(),
            kind: UnitKind::Fraction,
            problem: Problem::Overflow,
        }),
    }
}

/// Parses a ratio such as `2` or `1.5` (at most six decimals) into an exact [`Ratio`];
/// see the [module documentation](self). Same as `s.parse::<Ratio>()`.
pub fn parse_ratio(s: &str) -> Result<Ratio, ParseUnitError> {
    let millionths = parse(UnitKind::Ratio, s)?;
    let g = gcd_u64(millionths, 1_000_000);
    let num = u32::try_from(millionths / g).map_err(|_| ParseUnitError {
        input: s.to_string(),
        kind: UnitKind::Ratio,
        problem: Problem::Overflow,
    })?;
    Ok(Ratio::new(num, (1_000_000 / g) as u32).expect("the denominator divides 10^6"))
}

fn gcd_u64(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl FromStr for Fraction {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Fraction, ParseUnitError> {
        parse_fraction(s)
    }
}

impl FromStr for Ratio {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Ratio, ParseUnitError> {
        parse_ratio(s)
    }
}

impl FromStr for Rate {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Rate, ParseUnitError> {
        parse_rate(s)
    }
}

impl FromStr for Bytes {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Bytes, ParseUnitError> {
        parse_size(s)
    }
}

impl FromStr for Duration {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Duration, ParseUnitError> {
        parse_time(s)
    }
}

/// Units used for printing, smallest first.
const RATE_PRINT: &[(&str, u64)] = &[
    ("bit", 1),
    ("kbit", 1_000),
    ("mbit", 1_000_000),
    ("gbit", 1_000_000_000),
    ("tbit", 1_000_000_000_000),
];
const SIZE_PRINT: &[(&str, u64)] = &[("b", 1), ("kb", 1 << 10), ("mb", 1 << 20), ("gb", 1 << 30)];
const TIME_PRINT: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
];

/// The shortest exact text for `value` (in the units' base unit): among the units in which
/// `value` is at least one unit (or zero) and exact with at most `decimals` decimals, the
/// one giving the shortest text; ties go to the smaller unit (`1500bit`, not `1.5kbit`).
fn format_exact(value: u64, units: &[(&str, u64)], decimals: u32) -> String {
    let scale = 10u128.pow(decimals);
    let mut best: Option<String> = None;
    for &(name, unit) in units {
        if value != 0 && value < unit || u128::from(value) * scale % u128::from(unit) != 0 {
            continue;
        }
        let mut text = (value / unit).to_string();
        let frac = u128::from(value % unit) * scale / u128::from(unit);
        if frac != 0 {
            let digits = format!("{frac:0width$}", width = decimals as usize);
            text.push('.');
            text.push_str(digits.trim_end_matches('0'));
        }
        text.push_str(name);
        if best.as_ref().is_none_or(|b| text.len() < b.len()) {
            best = Some(text);
        }
    }
    // The base unit (first) always qualifies.
    best.unwrap_or_default()
}

impl fmt::Display for Rate {
    /// `tc` style, exact and shortest: `10mbit`, `1.5mbit`, `64kbit`, `1500bit`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format_exact(self.0, RATE_PRINT, 3))
    }
}

impl fmt::Display for Bytes {
    /// `tc` style, exact: `1500b`, or `kb`/`mb`/`gb` for multiples of 1024 (`8kb`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format_exact(self.0, SIZE_PRINT, 0))
    }
}

impl fmt::Display for Duration {
    /// `tc` style, exact and shortest: `5ms`, `20us`, `1.5s`, `250ns`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format_exact(self.0, TIME_PRINT, 3))
    }
}

/// `value / scale` in plain decimal notation without trailing zeros (`scale` a power
/// of ten): `decimal(1_500_000, 1_000_000)` is `1.5`.
fn decimal(value: u64, scale: u64) -> String {
    let mut text = (value / scale).to_string();
    let frac = value % scale;
    if frac != 0 {
        let width = scale.ilog10() as usize;
        text.push('.');
        text.push_str(format!("{frac:0width$}").trim_end_matches('0'));
    }
    text
}

impl fmt::Display for Fraction {
    /// Exact percentage: `1%`, `0.5%`, `0.0000001%` (one part per billion).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}%", decimal(u64::from(self.0), 10_000_000)))
    }
}

impl fmt::Display for Ratio {
    /// The shortest exact decimal with at most six decimals (`2`, `1.5`), else
    /// `num/den` (`4/3`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (num, den) = (u64::from(self.num()), u64::from(self.den()));
        let text = if 1_000_000 % den == 0 {
            decimal(num * (1_000_000 / den), 1_000_000)
        } else {
            format!("{num}/{den}")
        };
        f.pad(&text)
    }
}

impl fmt::Display for Instant {
    /// The time since the origin, as a [`Duration`] (`1.5s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&Duration(self.0), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rate(s: &str) -> u64 {
        parse_rate(s).unwrap_or_else(|e| panic!("{e}")).0
    }
    fn size(s: &str) -> u64 {
        parse_size(s).unwrap_or_else(|e| panic!("{e}")).0
    }
    fn time(s: &str) -> u64 {
        parse_time(s).unwrap_or_else(|e| panic!("{e}")).0
    }
    fn problem<T: fmt::Debug>(r: Result<T, ParseUnitError>) -> Problem {
        r.unwrap_err().problem
    }

    #[test]
    fn every_rate_suffix() {
        let cases: &[(&str, u64)] = &[
            ("10", 10),
            ("10bit", 10),
            ("10kbit", 10_000),
            ("10mbit", 10_000_000),
            ("10gbit", 10_000_000_000),
            ("10tbit", 10_000_000_000_000),
            ("10kibit", 10 * 1024),
            ("10mibit", 10 * 1024 * 1024),
            ("10gibit", 10 * 1024 * 1024 * 1024),
            ("10tibit", 10 * 1024 * 1024 * 1024 * 1024),
            ("10bps", 80),
            ("10kbps", 80_000),
            ("10mbps", 80_000_000),
            ("10gbps", 80_000_000_000),
            ("10tbps", 80_000_000_000_000),
            ("10kibps", 80 * 1024),
            ("10mibps", 80 * 1024 * 1024),
            ("10gibps", 80 * 1024 * 1024 * 1024),
            ("10tibps", 80 * 1024 * 1024 * 1024 * 1024),
        ];
        for &(s, want) in cases {
            assert_eq!(rate(s), want, "{s}");
            assert_eq!(rate(&s.to_uppercase()), want, "{s}");
        }
        assert_eq!(cases.len(), RATE_UNITS.len());
        assert_eq!(rate("1mbps"), 8_000_000);
        assert_eq!(rate("10Mbit"), 10_000_000);
        assert_eq!(rate("10MBPS"), 80_000_000);
        assert_eq!(rate("10KiBps"), 80 * 1024);
        assert_eq!(rate("1500"), 1500);
    }

    #[test]
    fn fractions_and_ratios() {
        let ppb = |s: &str| parse_fraction(s).unwrap_or_else(|e| panic!("{e}")).ppb();
        assert_eq!(ppb("1%"), 10_000_000);
        assert_eq!(ppb("0.01"), 10_000_000);
        assert_eq!(ppb("1e-2"), 10_000_000);
        assert_eq!(ppb("100%"), Fraction::PPB);
        assert_eq!(ppb("0"), 0);
        assert_eq!(problem(parse_fraction("1.5")), Problem::Overflow);
        assert_eq!(problem(parse_fraction("1e-10")), Problem::NotWhole);
        assert_eq!(problem(parse_fraction("-1%")), Problem::Negative);
        let e = parse_fraction("101%").unwrap_err().to_string();
        assert!(e.contains("more than 1 (100%)"), "{e}");
        for (text, shown) in [("1%", "1%"), ("0.005", "0.5%"), ("1e-9", "0.0000001%")] {
            let f = parse_fraction(text).unwrap();
            assert_eq!(f.to_string(), shown);
            assert_eq!(parse_fraction(shown), Ok(f));
        }
        let ratio = |s: &str| parse_ratio(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ratio("2"), Ratio::integer(2));
        assert_eq!(ratio("1.5"), Ratio::new(3, 2).unwrap());
        assert_eq!(ratio("1.25").to_string(), "1.25");
        assert_eq!(Ratio::new(4, 3).unwrap().to_string(), "4/3");
        assert_eq!(problem(parse_ratio("1.0000001")), Problem::NotWhole);
        assert_eq!(
            problem(parse_ratio("2x")),
            Problem::UnknownSuffix("x".into())
        );
        assert_eq!(problem(parse_ratio("5e9")), Problem::Overflow);
    }

    #[test]
    fn every_size_suffix() {
        let cases: &[(&str, u64)] = &[
            ("8", 8),
            ("8b", 8),
            ("8k", 8192),
            ("8kb", 8192),
            ("8m", 8 << 20),
            ("8mb", 8 << 20),
            ("8g", 8 << 30),
            ("8gb", 8 << 30),
            ("8kbit", 1024),
            ("8mbit", 1 << 20),
            ("8gbit", 1 << 30),
        ];
        for &(s, want) in cases {
            assert_eq!(size(s), want, "{s}");
            assert_eq!(size(&s.to_uppercase()), want, "{s}");
        }
        assert_eq!(cases.len(), SIZE_UNITS.len());
        assert_eq!(size("1kbit"), 128);
        assert_eq!(size("1.5kb"), 1536);
    }

    #[test]
    fn every_time_suffix() {
        let cases: &[(&str, u64)] = &[
            ("2", 2_000),
            ("2s", 2_000_000_000),
            ("2sec", 2_000_000_000),
            ("2secs", 2_000_000_000),
            ("2ms", 2_000_000),
            ("2msec", 2_000_000),
            ("2msecs", 2_000_000),
            ("2us", 2_000),
            ("2usec", 2_000),
            ("2usecs", 2_000),
            ("2ns", 2),
            ("2nsec", 2),
            ("2nsecs", 2),
        ];
        for &(s, want) in cases {
            assert_eq!(time(s), want, "{s}");
            assert_eq!(time(&s.to_uppercase()), want, "{s}");
        }
        assert_eq!(cases.len(), TIME_UNITS.len());
        assert_eq!(time("5ms"), 5_000_000);
        assert_eq!(time("20us"), 20_000);
        assert_eq!(time("1.5s"), 1_500_000_000);
        assert_eq!(time("100"), 100_000);
    }

    #[test]
    fn exact_decimals_and_exponents() {
        assert_eq!(time("0.5us"), 500);
        assert_eq!(time(".5us"), 500);
        assert_eq!(time("5.us"), 5_000);
        assert_eq!(time("+5ms"), 5_000_000);
        assert_eq!(time("0.000000001s"), 1);
        assert_eq!(time("2.5e-3s"), 2_500_000);
        assert_eq!(rate("1.5kbit"), 1500);
        assert_eq!(rate("1e6"), 1_000_000);
        assert_eq!(rate("1E6bit"), 1_000_000);
        assert_eq!(rate("0.125bps"), 1);
        assert_eq!(rate("0e999999999999999999999mbit"), 0);
        assert_eq!(rate("1000000000000000000000e-21kbit"), 1000);
        assert_eq!(size("0.125kbit"), 16);
        assert_eq!(size("  1500b\n"), 1500);
        assert_eq!(size("007"), 7);
        assert_eq!(size("18446744073709551615"), u64::MAX);
        assert_eq!(size("18446744073709551615.000b"), u64::MAX);
        // 1 bit/s written in TiB/s needs 43 decimals and more digits than a u128 holds.
        assert_eq!(
            rate("0.0000000000001136868377216160297393798828125tibps"),
            1
        );
        assert_eq!(
            rate("0.0000000014034640116733498871326446533203125tibps"),
            12_345
        );
    }

    #[test]
    fn rejections() {
        assert_eq!(problem(parse_rate("")), Problem::Empty);
        assert_eq!(problem(parse_rate("   ")), Problem::Empty);
        assert_eq!(problem(parse_rate("mbit")), Problem::NotANumber);
        assert_eq!(problem(parse_rate(".mbit")), Problem::NotANumber);
        assert_eq!(problem(parse_rate("inf")), Problem::NotANumber);
        assert_eq!(problem(parse_time("-5ms")), Problem::Negative);
        assert_eq!(problem(parse_size("-1")), Problem::Negative);
        assert_eq!(problem(parse_size("-x")), Problem::NotANumber);
        assert_eq!(problem(parse_rate("50%")), Problem::Percent);
        assert_eq!(problem(parse_rate("12.5 %")), Problem::Percent);
        assert_eq!(problem(parse_size("1.5b")), Problem::NotWhole);
        assert_eq!(problem(parse_size("0.3kb")), Problem::NotWhole);
        assert_eq!(problem(parse_time("0.1ns")), Problem::NotWhole);
        assert_eq!(problem(parse_rate("0.1bit")), Problem::NotWhole);
        assert_eq!(problem(parse_rate("1e-999999999999")), Problem::NotWhole);
        assert_eq!(
            problem(parse_size("18446744073709551616")),
            Problem::Overflow
        );
        assert_eq!(problem(parse_rate("20000000tbit")), Problem::Overflow);
        assert_eq!(problem(parse_time("1e999999999999s")), Problem::Overflow);
        assert_eq!(problem(parse_time("600000000000s")), Problem::Overflow);
        for bad in [
            "10mb", "10m", "10k", "10M", "10Mb", "10b", "10kib", "10x", "1e",
        ] {
            let Problem::UnknownSuffix(_) = problem(parse_rate(bad)) else {
                panic!("{bad}");
            };
        }
        assert_eq!(
            problem(parse_rate("10 mbit")),
            Problem::UnknownSuffix(" mbit".into())
        );
        assert_eq!(
            problem(parse_rate("1.2.3")),
            Problem::UnknownSuffix(".3".into())
        );
        assert_eq!(
            problem(parse_size("1tb")),
            Problem::UnknownSuffix("tb".into())
        );
        assert_eq!(
            problem(parse_size("5%")),
            Problem::UnknownSuffix("%".into())
        );
        assert_eq!(
            problem(parse_time("1m")),
            Problem::UnknownSuffix("m".into())
        );
    }

    #[test]
    fn error_messages() {
        let msg = |r: Result<Rate, ParseUnitError>| r.unwrap_err().to_string();
        assert_eq!(
            msg(parse_rate("10mb")),
            "\"10mb\" is not a rate: unknown unit \"mb\" (did you mean \"10mbit\" \
             (megabits per second) or \"10mbps\" (megabytes per second)?); accepted units: \
             bit kbit mbit gbit tbit kibit mibit gibit tibit (bits per second), \
             bps kbps mbps gbps tbps kibps mibps gibps tibps (BYTES per second, as in tc), \
             or a bare number of bits per second"
        );
        assert!(msg(parse_rate("10M")).contains("did you mean \"10mbit\""));
        assert!(msg(parse_rate("2Kib")).contains("\"2kibit\" (kibibits per second)"));
        assert!(msg(parse_rate("3b")).contains("\"3bit\" (bits per second) or \"3bps\""));
        assert!(!msg(parse_rate("10x")).contains("did you mean"));
        assert!(msg(parse_rate("10Mbit/s")).contains("(did you mean \"10mbit\"?)"));
        assert!(msg(parse_rate("10MB/s")).contains("\"10mbps\" (megabytes per second)"));
        assert!(msg(parse_rate("10 mbit")).contains("without a space"));
        assert!(msg(parse_rate("50%")).contains("write an absolute rate"));
        let e = parse_size("0.3kb").unwrap_err();
        assert!(
            e.to_string()
                .contains("it is 307.2 bytes, not a whole number of bytes"),
            "{e}"
        );
        let e = parse_time("0.1ns").unwrap_err();
        assert!(e.to_string().contains("it is 0.1 nanoseconds"), "{e}");
        let e = parse_time("1e-99s").unwrap_err();
        assert!(e.to_string().contains("it is 1e-90 nanoseconds"), "{e}");
        let e = parse_time("1e99").unwrap_err();
        assert!(
            e.to_string()
                .contains("too large (the maximum is 18446744073709551615"),
            "{e}"
        );
        assert!(
            parse_time("")
                .unwrap_err()
                .to_string()
                .starts_with("\"\" is not a time: it is empty")
        );
        assert!(
            parse_size("-1")
                .unwrap_err()
                .to_string()
                .contains("is negative")
        );
        assert!(
            parse_size("x")
                .unwrap_err()
                .to_string()
                .contains("decimal number")
        );
    }

    /// tc's `get_time` has no hours or minutes (iproute2 `lib/utils.c`): the message says
    /// so and gives the time in seconds, exactly.
    #[test]
    fn hours_and_minutes_are_refused_with_the_time_in_seconds() {
        let msg = |s: &str| parse_time(s).unwrap_err().to_string();
        assert_eq!(
            msg("1h"),
            "\"1h\" is not a time: unknown unit \"h\" (tc has no unit of hours or minutes: \
             write \"3600s\"); accepted units: s sec secs ms msec msecs us usec usecs ns nsec \
             nsecs, or a bare number of microseconds (as in tc)"
        );
        assert!(msg("1.5min").contains("write \"90s\""));
        assert!(msg("2M").contains("write \"120s\""));
        assert!(msg("0.25hours").contains("write \"900s\""));
        // 1e-12 h is 3.6 ns, not a whole number of nanoseconds: no time to suggest.
        assert!(!msg("1e-12h").contains("write"));
        assert!(!msg("5d").contains("tc has no unit"));
        // Rates and sizes have no such hint.
        assert!(
            !parse_size("1h")
                .unwrap_err()
                .to_string()
                .contains("tc has no unit")
        );
    }

    /// Input quoted in a message is cut to 64 characters and its length.
    #[test]
    fn long_input_is_cut() {
        let long = format!("1{}", "x".repeat(100_000));
        let m = parse_rate(&long).unwrap_err().to_string();
        assert!(m.len() < 800, "{m}");
        assert!(m.contains("(100001 characters) is not a rate"), "{m}");
        assert!(m.contains("(100000 characters)"), "{m}");
    }

    #[test]
    fn accepted_lists_name_every_unit() {
        for (kind, table) in [
            (UnitKind::Rate, RATE_UNITS),
            (UnitKind::Size, SIZE_UNITS),
            (UnitKind::Time, TIME_UNITS),
        ] {
            let e = ParseUnitError {
                input: String::new(),
                kind,
                problem: Problem::Empty,
            };
            let words: Vec<&str> = e.accepted_suffixes().split([' ', ',', '(']).collect();
            for (name, _) in table.iter().filter(|(name, _)| !name.is_empty()) {
                assert!(words.contains(name), "{kind:?}: {name}");
            }
        }
    }

    #[test]
    fn display() {
        let r = |n| Rate(n).to_string();
        assert_eq!(r(10_000_000), "10mbit");
        assert_eq!(r(1_000_000_000), "1gbit");
        assert_eq!(r(64_000), "64kbit");
        assert_eq!(r(1500), "1500bit");
        assert_eq!(r(1_500_000), "1.5mbit");
        assert_eq!(r(1_234_567), "1234567bit");
        assert_eq!(r(0), "0bit");
        assert_eq!(r(u64::MAX), "18446744073709551615bit");
        let b = |n| Bytes(n).to_string();
        assert_eq!(b(1500), "1500b");
        assert_eq!(b(8192), "8kb");
        assert_eq!(b(3 << 20), "3mb");
        assert_eq!(b(2 << 30), "2gb");
        assert_eq!(b(1536), "1536b");
        assert_eq!(b(0), "0b");
        let d = |n| Duration(n).to_string();
        assert_eq!(d(5_000_000), "5ms");
        assert_eq!(d(20_000), "20us");
        assert_eq!(d(1_500_000_000), "1.5s");
        assert_eq!(d(250), "250ns");
        assert_eq!(d(0), "0s");
        assert_eq!(d(100_000_000), "100ms");
        assert_eq!(d(1_234_567), "1234567ns");
        assert_eq!(d(1_234_000), "1234us");
        assert_eq!(d(1_234_500), "1234.5us");
        assert_eq!(d(1_500), "1.5us");
        assert_eq!(d(500), "500ns");
        assert_eq!(Instant(1_500_000_000).to_string(), "1.5s");
        assert_eq!(format!("{:>6}", Duration(5_000_000)), "   5ms");
    }

    fn interesting() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            0u64..100_000,
            (0u64..100_000, 0u32..13).prop_map(|(m, e)| m * 10u64.pow(e)),
            (0u64..100_000, 0u32..40).prop_map(|(m, e)| m << e),
        ]
    }

    proptest! {
        #[test]
        fn rate_round_trips(n in interesting()) {
            prop_assert_eq!(parse_rate(&Rate(n).to_string()), Ok(Rate(n)));
        }

        #[test]
        fn size_round_trips(n in interesting()) {
            prop_assert_eq!(parse_size(&Bytes(n).to_string()), Ok(Bytes(n)));
        }

        #[test]
        fn time_round_trips(n in interesting()) {
            prop_assert_eq!(parse_time(&Duration(n).to_string()), Ok(Duration(n)));
        }
    }
}
