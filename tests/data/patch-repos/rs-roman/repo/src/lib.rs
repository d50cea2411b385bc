//! Roman numerals.

const NUMERALS: [(u32, &str); 12] = [
    (1000, "M"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

/// `n` in Roman numerals (`None` for 0 and above 3999).
pub fn to_roman(mut n: u32) -> Option<String> {
    if n == 0 || n > 3999 {
        return None;
    }
    let mut out = String::new();
    for (value, numeral) in NUMERALS {
        while n >= value {
            out.push_str(numeral);
            n -= value;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::to_roman;

    #[test]
    fn nine_hundreds_use_cm() {
        assert_eq!(to_roman(1994).as_deref(), Some("MCMXCIV"));
        assert_eq!(to_roman(900).as_deref(), Some("CM"));
    }

    #[test]
    fn small_numbers() {
        assert_eq!(to_roman(4).as_deref(), Some("IV"));
        assert_eq!(to_roman(9).as_deref(), Some("IX"));
        assert_eq!(to_roman(14).as_deref(), Some("XIV"));
        assert_eq!(to_roman(40).as_deref(), Some("XL"));
    }

    #[test]
    fn out_of_range() {
        assert_eq!(to_roman(0), None);
        assert_eq!(to_roman(4000), None);
        assert_eq!(to_roman(3999).as_deref(), Some("MMMCMXCIX"));
    }
}
