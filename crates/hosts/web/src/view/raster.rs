//! A tiny RGBA raster for the zoomed-out level of detail: when tens of thousands of nodes are on
//! screen, the graph is drawn into one pixel buffer in wasm and put on the canvas with a single
//! call, instead of one canvas call per node and edge. Pure, tested natively.

/// An RGB colour.
pub type Rgb = [u8; 3];

/// Parses `#rrggbb` (anything else gives grey).
pub fn rgb(hex: &str) -> Rgb {
    let h = hex.trim_start_matches('#');
    let byte = |i: usize| {
        h.get(i..i + 2)
            .and_then(|s| u8::from_str_radix(s, 16).ok())
            .unwrap_or(128)
    };
    [byte(0), byte(2), byte(4)]
}

/// A `width × height` RGBA buffer, row-major, opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raster {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl Raster {
    /// A raster filled with `bg`.
    pub fn new(width: usize, height: usize, bg: Rgb) -> Raster {
        let pixels = [bg[0], bg[1], bg[2], 255].repeat(width * height);
        Raster {
            width,
            height,
            pixels,
        }
    }

    /// Blends `c` over the pixel at (x, y) with weight `alpha` (0..=255); outside is ignored.
    pub fn blend(&mut self, x: i64, y: i64, c: Rgb, alpha: u16) {
        let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y)) else {
            return;
        };
        if x >= self.width || y >= self.height {
            return;
        }
        let i = (y * self.width + x) * 4;
        if let Some(p) = self.pixels.get_mut(i..i + 3) {
            mix(p, c, alpha);
        }
    }

    /// Blends `c` over the horizontal run `x0..=x1` of row `y` (clipped).
    pub fn span(&mut self, x0: i64, x1: i64, y: i64, c: Rgb, alpha: u16) {
        let Ok(y) = usize::try_from(y) else { return };
        if y >= self.height || self.width == 0 {
            return;
        }
        let max = i64::try_from(self.width).unwrap_or(i64::MAX) - 1;
        let (a, b) = (x0.min(x1).clamp(0, max), x0.max(x1).clamp(0, max));
        if x0.max(x1) < 0 || x0.min(x1) > max {
            return;
        }
        let row = y * self.width * 4;
        let (a, b) = (
            usize::try_from(a).unwrap_or(0),
            usize::try_from(b).unwrap_or(0),
        );
        if let Some(run) = self.pixels.get_mut(row + a * 4..row + b * 4 + 4) {
            for p in run.chunks_exact_mut(4) {
                mix(p, c, alpha);
            }
        }
    }

    /// A filled square of side `2r + 1` centred on (x, y).
    pub fn square(&mut self, x: f64, y: f64, r: i64, c: Rgb) {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
        for dy in -r..=r {
            self.span(cx - r, cx + r, cy + dy, c, 255);
        }
    }

    /// A 1-pixel line (Bresenham), clipped to the raster; at most `max_steps` pixels.
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), c: Rgb, alpha: u16, max_steps: usize) {
        let (w, h) = (self.width as f64, self.height as f64);
        let outside = (a.0 < 0.0 && b.0 < 0.0)
            || (a.1 < 0.0 && b.1 < 0.0)
            || (a.0 >= w && b.0 >= w)
            || (a.1 >= h && b.1 >= h);
        if outside {
            return;
        }
        let (mut x0, mut y0) = (a.0.round() as i64, a.1.round() as i64);
        let (x1, y1) = (b.0.round() as i64, b.1.round() as i64);
        if y0 == y1 {
            self.span(x0, x1, y0, c, alpha);
            return;
        }
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let mut err = dx + dy;
        for _ in 0..max_steps {
            self.blend(x0, y0, c, alpha);
            if x0 == x1 && y0 == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }
}

/// `dst = c·α + dst·(1−α)` per channel; α = 255 writes `c`.
fn mix(dst: &mut [u8], c: Rgb, alpha: u16) {
    if alpha >= 255 {
        if let Some(d) = dst.get_mut(..3) {
            d.copy_from_slice(&c);
        }
        return;
    }
    for (d, &s) in dst.iter_mut().zip(&c) {
        let v = (u16::from(s) * alpha + u16::from(*d) * (255 - alpha) + 128) >> 8;
        *d = u8::try_from(v).unwrap_or(u8::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(r: &Raster, x: usize, y: usize) -> [u8; 3] {
        let i = (y * r.width + x) * 4;
        [r.pixels[i], r.pixels[i + 1], r.pixels[i + 2]]
    }

    #[test]
    fn parses_hex_colours() {
        assert_eq!(rgb("#ff8000"), [255, 128, 0]);
        assert_eq!(rgb("zz"), [128, 128, 128]);
    }

    #[test]
    fn squares_and_lines_paint_only_inside() {
        let mut r = Raster::new(10, 6, [0, 0, 0]);
        r.square(2.0, 2.0, 1, [255, 0, 0]);
        assert_eq!(at(&r, 1, 1), [255, 0, 0]);
        assert_eq!(at(&r, 3, 3), [255, 0, 0]);
        assert_eq!(at(&r, 4, 4), [0, 0, 0]);
        r.line((0.0, 5.0), (9.0, 5.0), [0, 255, 0], 255, 100);
        assert!((0..10).all(|x| at(&r, x, 5) == [0, 255, 0]));
        // Off-raster drawing is clipped, not a panic.
        r.square(-5.0, 100.0, 3, [1, 2, 3]);
        r.line((-50.0, -50.0), (50.0, 50.0), [9, 9, 9], 128, 1000);
        assert_eq!(r.pixels.len(), 10 * 6 * 4);
    }

    #[test]
    fn blending_mixes_colours() {
        let mut r = Raster::new(1, 1, [0, 0, 0]);
        r.blend(0, 0, [255, 255, 255], 128);
        let v = at(&r, 0, 0)[0];
        assert!((120..=135).contains(&v), "{v}");
    }
}
