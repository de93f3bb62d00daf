//! Kubernetes resource quantities (`"500m"`, `2`, `"1.5"`, `8Gi`, `16G`, `1e3`).
//!
//! Parsed with exact integer arithmetic (no floating point) so that `"0.1"` cpu is
//! exactly 100 millicores and `"1Ei"` of memory does not silently lose precision.

use std::fmt;

/// How a resource is held inside the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Thousandths of the unit (cpu in millicores, shared devices in milli-devices).
    Milli,
    /// Whole base units (bytes, pods, ...); fractions round up as Kubernetes does.
    Base,
}

/// Why a quantity string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// Not a Kubernetes quantity (`12Q`, empty, malformed number or suffix).
    Invalid,
    /// Below zero; requests and capacities are never negative.
    Negative,
    /// Too large for the engine's 64-bit integer scale.
    Overflow,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Invalid => write!(f, "invalid quantity"),
            QuantityError::Negative => write!(f, "negative quantity"),
            QuantityError::Overflow => write!(f, "quantity overflows"),
        }
    }
}

/// Parses a Kubernetes quantity into an integer in the given scale.
pub fn parse(text: &str, scale: Scale) -> Result<i64, QuantityError> {
    let s = text.trim();
    if s.is_empty() || s.len() > 64 {
        return Err(QuantityError::Invalid);
    }
    let (negative, rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    // Split the number from its suffix.
    let num_end = rest.char_indices().find(|&(_, c)| !(c.is_ascii_digit() || c == '.')).map(|(i, _)| i).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(QuantityError::Invalid);
    }
    let (int_part, frac_part) = match number.split_once('.') {
        Some((a, b)) => (a, b),
        None => (number, ""),
    };
    // mantissa * 10^exp10 * 2^exp2
    let mut mantissa: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa.checked_mul(10).and_then(|m| m.checked_add((c as u8 - b'0') as i128)).ok_or(QuantityError::Overflow)?;
        if mantissa > 1i128 << 100 {
            return Err(QuantityError::Overflow);
        }
    }
    let mut exp10: i32 = -(frac_part.len() as i32);
    let mut exp2: i32 = 0;
    match suffix {
        "" => {}
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        "Ki" => exp2 = 10,
        "Mi" => exp2 = 20,
        "Gi" => exp2 = 30,
        "Ti" => exp2 = 40,
        "Pi" => exp2 = 50,
        "Ei" => exp2 = 60,
        other => {
            // Decimal exponent form: 1e3, 2E-2.
            let exp = other.strip_prefix('e').or_else(|| other.strip_prefix('E')).ok_or(QuantityError::Invalid)?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || digits.len() > 3 || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(QuantityError::Invalid);
            }
            let e: i32 = exp.parse().map_err(|_| QuantityError::Invalid)?;
            exp10 += e;
        }
    }
    if negative && mantissa != 0 {
        return Err(QuantityError::Negative);
    }
    if scale == Scale::Milli {
        exp10 += 3;
    }
    let mut value = mantissa;
    if exp2 > 0 {
        value = value.checked_mul(1i128 << exp2).ok_or(QuantityError::Overflow)?;
    }
    if exp10 >= 0 {
        for _ in 0..exp10 {
            value = value.checked_mul(10).ok_or(QuantityError::Overflow)?;
            if value > i64::MAX as i128 {
                return Err(QuantityError::Overflow);
            }
        }
    } else {
        // Round up, as Kubernetes does when a quantity is read at a coarser scale.
        let mut div: i128 = 1;
        for _ in 0..(-exp10).min(40) {
            div *= 10;
        }
        value = if -exp10 > 38 { (value > 0) as i128 } else { (value + div - 1) / div };
    }
    if value > i64::MAX as i128 {
        return Err(QuantityError::Overflow);
    }
    Ok(value as i64)
}

/// Formats an engine value back as a Kubernetes quantity string.
pub fn format(value: i64, scale: Scale) -> String {
    match scale {
        Scale::Milli if value % 1000 == 0 => (value / 1000).to_string(),
        Scale::Milli => format!("{value}m"),
        Scale::Base => {
            for (suffix, shift) in [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
                if value != 0 && value % (1i64 << shift) == 0 {
                    return format!("{}{suffix}", value >> shift);
                }
            }
            value.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubernetes_forms() {
        assert_eq!(parse("500m", Scale::Milli), Ok(500));
        assert_eq!(parse("2", Scale::Milli), Ok(2000));
        assert_eq!(parse("1.5", Scale::Milli), Ok(1500));
        assert_eq!(parse("0.1", Scale::Milli), Ok(100));
        assert_eq!(parse("8Gi", Scale::Base), Ok(8 * 1024 * 1024 * 1024));
        assert_eq!(parse("16G", Scale::Base), Ok(16_000_000_000));
        assert_eq!(parse("1e3", Scale::Base), Ok(1000));
        assert_eq!(parse("1E-3", Scale::Milli), Ok(1));
        assert_eq!(parse("100k", Scale::Base), Ok(100_000));
        assert_eq!(parse("1.5Ki", Scale::Base), Ok(1536));
        assert_eq!(parse("0.5", Scale::Base), Ok(1), "fractions round up");
        assert_eq!(parse("1n", Scale::Milli), Ok(1), "rounds up to one milli");
        assert_eq!(parse("-0", Scale::Base), Ok(0));
    }

    #[test]
    fn rejects_bad_forms() {
        for bad in ["", "12Q", "1.2.3", "Gi", "1ee3", "1e", "m", ".", "1 Gi", "0x10", "1e99999"] {
            assert_eq!(parse(bad, Scale::Base), Err(QuantityError::Invalid), "{bad:?}");
        }
        assert_eq!(parse("-1", Scale::Base), Err(QuantityError::Negative));
        assert_eq!(parse("9Ei", Scale::Base), Err(QuantityError::Overflow));
        assert_eq!(parse("10E", Scale::Milli), Err(QuantityError::Overflow));
        assert_eq!(parse("1e100", Scale::Base), Err(QuantityError::Overflow));
    }

    #[test]
    fn formats_round_trip() {
        for v in [0, 1, 999, 1000, 1500, 64000] {
            assert_eq!(parse(&format(v, Scale::Milli), Scale::Milli), Ok(v));
        }
        for v in [0, 1, 1024, 3 << 30, 1000, 5 << 40] {
            assert_eq!(parse(&format(v, Scale::Base), Scale::Base), Ok(v));
        }
        assert_eq!(format(64 << 30, Scale::Base), "64Gi");
    }
}
