//! The body of a trace file before its format is read: a gzip (`1f 8b`) or zstd (`28 b5 2f fd`)
//! body is decompressed, and OTLP protobuf (not JSON, and decodes as a traces or logs request)
//! becomes its OTLP JSON form. All in memory; the result goes to format detection as any file.

use std::borrow::Cow;
use std::io::Read;

use super::otlp_proto;
use super::FormatError;

const GZIP: &[u8] = &[0x1f, 0x8b];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// What the body was, for `memtrace info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Encoding {
    /// `gzip` or `zstd`, when the body was compressed.
    pub compression: Option<&'static str>,
    /// The body was OTLP protobuf (a traces or logs request).
    pub protobuf: Option<otlp_proto::Request>,
}

/// Decompresses and decodes `bytes`; a plain JSON body is returned as it is.
///
/// # Errors
/// [`FormatError::Unknown`] for a compressed body that does not decompress;
/// [`FormatError::TooLarge`] when it decompresses to more than `limit` bytes.
pub fn decode(bytes: &[u8], limit: u64) -> Result<(Cow<'_, [u8]>, Encoding), FormatError> {
    let mut enc = Encoding::default();
    let mut body = Cow::Borrowed(bytes);
    if bytes.starts_with(GZIP) || bytes.starts_with(ZSTD) {
        let gzip = bytes.starts_with(GZIP);
        enc.compression = Some(if gzip { "gzip" } else { "zstd" });
        body = Cow::Owned(decompress(bytes, gzip, limit)?);
    }
    let first = body
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && !matches!(b, 0xef | 0xbb | 0xbf));
    if first.is_some_and(|b| b != b'{' && b != b'[') {
        if let Ok((request, json)) = otlp_proto::decode(&body) {
            enc.protobuf = Some(request);
            let text = serde_json::to_vec(&json).map_err(|e| FormatError::Unknown {
                reason: format!("the protobuf body could not be written as JSON: {e}"),
            })?;
            body = Cow::Owned(text);
        }
    }
    Ok((body, enc))
}

/// `bytes` decompressed when they are a gzip or zstd body, else as they are (no protobuf
/// decoding): what a caller that must look inside a file before [`super::load`] (a bundle, an
/// annotation file) reads.
///
/// # Errors
/// As [`decode`] for a compressed body.
pub fn decompressed(bytes: &[u8], limit: u64) -> Result<Cow<'_, [u8]>, FormatError> {
    if bytes.starts_with(GZIP) || bytes.starts_with(ZSTD) {
        return Ok(Cow::Owned(decompress(
            bytes,
            bytes.starts_with(GZIP),
            limit,
        )?));
    }
    Ok(Cow::Borrowed(bytes))
}

/// The first `n` bytes of the body, decompressed when it is gzip or zstd: enough to tell a
/// file's kind without decompressing all of it. A compressed body that does not decompress
/// gives what did (perhaps nothing).
pub fn head(bytes: &[u8], n: usize) -> Cow<'_, [u8]> {
    if !(bytes.starts_with(GZIP) || bytes.starts_with(ZSTD)) {
        return Cow::Borrowed(&bytes[..bytes.len().min(n)]);
    }
    let mut out = Vec::with_capacity(n);
    // A read error leaves what was read before it in `out`: the head as far as it goes.
    if let Ok(d) = decoder(bytes, bytes.starts_with(GZIP)) {
        let _ = d.take(n as u64).read_to_end(&mut out);
    }
    Cow::Owned(out)
}

/// A reader of the decompressed body (gzip, else zstd).
fn decoder(bytes: &[u8], gzip: bool) -> Result<Box<dyn Read + '_>, String> {
    if gzip {
        return Ok(Box::new(flate2::read::MultiGzDecoder::new(bytes)));
    }
    ruzstd::decoding::StreamingDecoder::new(bytes)
        .map(|d| Box::new(d) as Box<dyn Read>)
        .map_err(|e| e.to_string())
}

fn decompress(bytes: &[u8], gzip: bool, limit: u64) -> Result<Vec<u8>, FormatError> {
    let name = if gzip { "gzip" } else { "zstd" };
    let bad = |e: String| FormatError::Unknown {
        reason: format!("it starts like a {name} body but does not decompress: {e}"),
    };
    let mut out = Vec::new();
    decoder(bytes, gzip)
        .map_err(bad)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| bad(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(FormatError::TooLarge {
            size_bytes: out.len() as u64,
            limit_bytes: limit,
        });
    }
    Ok(out)
}
