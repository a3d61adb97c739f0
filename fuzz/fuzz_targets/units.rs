//! The tc-style unit parser: any string is a rate, size or time, or an error with a
//! message; a value printed and parsed again is the same value.
#![no_main]

use std::fmt::Display;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use linkshare_core::units::{Bytes, Duration, Rate};

fn round_trip<T>(s: &str)
where
    T: FromStr + Display + PartialEq + std::fmt::Debug,
    T::Err: Display,
{
    match s.parse::<T>() {
        Ok(v) => {
            let printed = v.to_string();
            match printed.parse::<T>() {
                Ok(again) => assert_eq!(again, v, "{s:?} printed as {printed:?}"),
                Err(e) => panic!("{s:?} printed as {printed:?}, which does not parse: {e}"),
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    round_trip::<Rate>(s);
    round_trip::<Bytes>(s);
    round_trip::<Duration>(s);
});
