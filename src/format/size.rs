//! File sizes as people read and type them (`512 MiB`, `--max-bytes 700M`), for the limits and
//! their errors.

pub(crate) const KIB: u64 = 1024;
pub(crate) const MIB: u64 = 1024 * KIB;
pub(crate) const GIB: u64 = 1024 * MIB;

/// A size as people read it: `900 B`, `12 KiB`, `512 MiB`, `652.3 MiB`, `1.5 GiB` (one
/// decimal unless whole).
pub fn size_text(bytes: u64) -> String {
    let (unit, name) = match bytes {
        b if b >= GIB => (GIB, "GiB"),
        b if b >= MIB => (MIB, "MiB"),
        b if b >= KIB => (KIB, "KiB"),
        _ => return format!("{bytes} B"),
    };
    if bytes % unit == 0 {
        return format!("{} {name}", bytes / unit);
    }
    #[allow(clippy::cast_precision_loss)] // display only
    let x = bytes as f64 / unit as f64;
    format!("{x:.1} {name}")
}

/// A round limit that holds a file of `size_bytes`: the next 100 MiB up to 1 GiB, then the
/// next half GiB (what an error suggests raising the limit to).
pub fn limit_for(size_bytes: u64) -> u64 {
    let step = if size_bytes < GIB { 100 * MIB } else { GIB / 2 };
    size_bytes.div_ceil(step).saturating_mul(step)
}

/// Reads a size as a user types it: bytes (`536870912`), or a number with a unit, `K`, `M`,
/// `G` or `T` (powers of 1024, also written `KiB`…; `KB`… are powers of 1000), any case, a
/// decimal fraction allowed (`1.5G`).
///
/// # Errors
/// A sentence saying what is accepted, for a value that is not a size or is 0.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => KIB,
        "m" | "mib" => MIB,
        "g" | "gib" => GIB,
        "t" | "tib" => GIB * KIB,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => u64::MAX,
    };
    let bad = || {
        format!(
            "{text:?} is not a size: write bytes (536870912) or a number with K, M, G or T \
             (powers of 1024: 700M, 2G, 1.5G)"
        )
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    if scale == u64::MAX || !value.is_finite() {
        return Err(bad());
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )] // a size typed by a person: far below 2^53, rounded to a whole byte
    let bytes = (value * scale as f64).round() as u64;
    if bytes == 0 {
        return Err(format!(
            "{text:?}: the largest file must be at least 1 byte"
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_typed_and_bad_ones_say_what_is_accepted() {
        for (text, want) in [
            ("536870912", 512 * MIB),
            ("700M", 700 * MIB),
            ("2G", 2 * GIB),
            ("2gib", 2 * GIB),
            ("1.5G", 3 * GIB / 2),
            ("64k", 64 * KIB),
            ("2GB", 2_000_000_000),
            (" 1T ", 1024 * GIB),
        ] {
            assert_eq!(parse_size(text), Ok(want), "{text}");
        }
        for bad in ["abc", "", "2X", "-1", "G", "1.2.3M"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("not a size") && e.contains("700M"), "{bad}: {e}");
        }
        assert!(parse_size("0").unwrap_err().contains("at least 1 byte"));
        assert!(parse_size("0.0001")
            .unwrap_err()
            .contains("at least 1 byte"));
    }

    #[test]
    fn sizes_are_written_in_the_largest_whole_unit() {
        assert_eq!(size_text(900), "900 B");
        assert_eq!(size_text(512 * MIB), "512 MiB");
        assert_eq!(size_text(684_000_000), "652.3 MiB");
        assert_eq!(size_text(3 * GIB / 2), "1.5 GiB");
        assert_eq!(limit_for(684_000_000), 700 * MIB);
        assert_eq!(limit_for(700 * MIB), 700 * MIB);
        assert_eq!(limit_for(GIB + 1), 3 * GIB / 2);
    }
}
