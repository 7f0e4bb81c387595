//! Viewport math for the graph canvas: world ↔ screen, zoom about a point, pan, fit, level of
//! detail, and a uniform grid for culling and hit testing. Pure, tested natively.

use std::collections::HashMap;

/// An axis-aligned rectangle in world units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    /// The smallest rectangle holding every point (None for no points).
    pub fn around(points: impl IntoIterator<Item = (f64, f64)>) -> Option<Rect> {
        points.into_iter().fold(None, |r, (x, y)| {
            Some(match r {
                None => Rect {
                    x0: x,
                    y0: y,
                    x1: x,
                    y1: y,
                },
                Some(r) => Rect {
                    x0: r.x0.min(x),
                    y0: r.y0.min(y),
                    x1: r.x1.max(x),
                    y1: r.y1.max(y),
                },
            })
        })
    }

    /// Grown by `m` on every side.
    #[must_use]
    pub fn grow(self, m: f64) -> Rect {
        Rect {
            x0: self.x0 - m,
            y0: self.y0 - m,
            x1: self.x1 + m,
            y1: self.y1 + m,
        }
    }

    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x0 && x <= self.x1 && y >= self.y0 && y <= self.y1
    }

    /// True when the segment's bounding box meets this rectangle (cheap edge culling).
    pub fn meets_segment(&self, (ax, ay): (f64, f64), (bx, by): (f64, f64)) -> bool {
        ax.max(bx) >= self.x0
            && ax.min(bx) <= self.x1
            && ay.max(by) >= self.y0
            && ay.min(by) <= self.y1
    }
}

/// How much to draw at a zoom level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    /// Zoomed far out: nodes as small squares, no labels.
    Dots,
    /// Shapes and colours, no labels.
    Shapes,
    /// Shapes with labels.
    Labels,
}

/// Zoom limits.
pub const MIN_SCALE: f64 = 1e-5;
pub const MAX_SCALE: f64 = 8.0;

/// What part of the world the canvas shows: screen = world × scale + offset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub scale: f64,
    pub tx: f64,
    pub ty: f64,
    /// Canvas size in CSS pixels.
    pub width: f64,
    pub height: f64,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            scale: 1.0,
            tx: 0.0,
            ty: 0.0,
            width: 800.0,
            height: 600.0,
        }
    }
}

impl Viewport {
    pub fn to_screen(&self, x: f64, y: f64) -> (f64, f64) {
        (x * self.scale + self.tx, y * self.scale + self.ty)
    }

    pub fn to_world(&self, sx: f64, sy: f64) -> (f64, f64) {
        ((sx - self.tx) / self.scale, (sy - self.ty) / self.scale)
    }

    /// The world rectangle on screen.
    pub fn visible(&self) -> Rect {
        let (x0, y0) = self.to_world(0.0, 0.0);
        let (x1, y1) = self.to_world(self.width, self.height);
        Rect { x0, y0, x1, y1 }
    }

    /// Zooms by `factor` keeping the world point under screen point (sx, sy) in place.
    pub fn zoom_at(&mut self, factor: f64, sx: f64, sy: f64) {
        let (wx, wy) = self.to_world(sx, sy);
        self.scale = (self.scale * factor).clamp(MIN_SCALE, MAX_SCALE);
        self.tx = sx - wx * self.scale;
        self.ty = sy - wy * self.scale;
    }

    /// Moves the picture by (dx, dy) screen pixels.
    pub fn pan(&mut self, dx: f64, dy: f64) {
        self.tx += dx;
        self.ty += dy;
    }

    /// Shows all of `bounds` with `margin` screen pixels around it, at most at zoom `max_scale`.
    pub fn fit(&mut self, bounds: Rect, margin: f64, max_scale: f64) {
        let w = (bounds.x1 - bounds.x0).max(1.0);
        let h = (bounds.y1 - bounds.y0).max(1.0);
        let sx = (self.width - 2.0 * margin).max(1.0) / w;
        let sy = (self.height - 2.0 * margin).max(1.0) / h;
        self.scale = sx.min(sy).min(max_scale).clamp(MIN_SCALE, MAX_SCALE);
        let cx = (bounds.x0 + bounds.x1) / 2.0;
        let cy = (bounds.y0 + bounds.y1) / 2.0;
        self.tx = self.width / 2.0 - cx * self.scale;
        self.ty = self.height / 2.0 - cy * self.scale;
    }

    /// Puts world point (x, y) in the middle of the screen.
    pub fn center_on(&mut self, x: f64, y: f64) {
        self.tx = self.width / 2.0 - x * self.scale;
        self.ty = self.height / 2.0 - y * self.scale;
    }

    pub fn detail(&self) -> Detail {
        if self.scale < 0.3 {
            Detail::Dots
        } else if self.scale < 0.6 {
            Detail::Shapes
        } else {
            Detail::Labels
        }
    }
}

/// A uniform grid over points: which points lie in a rectangle, which is nearest to a point.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    cell: f64,
    cells: HashMap<(i64, i64), Vec<u32>>,
    points: Vec<(f64, f64)>,
}

impl Grid {
    /// Buckets `points` (their index is their id) into square cells of side `cell`.
    ///
    /// # Complexity
    /// O(n).
    pub fn build(points: Vec<(f64, f64)>, cell: f64) -> Grid {
        let cell = cell.max(1.0);
        let mut cells: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            cells
                .entry(Self::key(cell, x, y))
                .or_default()
                .push(i as u32);
        }
        Grid {
            cell,
            cells,
            points,
        }
    }

    fn key(cell: f64, x: f64, y: f64) -> (i64, i64) {
        ((x / cell).floor() as i64, (y / cell).floor() as i64)
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Ids of the points inside `r`, ascending.
    ///
    /// # Complexity
    /// O(min(cells in `r`, occupied cells) + hits · log hits).
    pub fn query(&self, r: Rect) -> Vec<u32> {
        let (kx0, ky0) = Self::key(self.cell, r.x0, r.y0);
        let (kx1, ky1) = Self::key(self.cell, r.x1, r.y1);
        let span = (kx1 - kx0 + 1).saturating_mul(ky1 - ky0 + 1);
        let mut out: Vec<u32> = if span > i64::try_from(self.cells.len()).unwrap_or(i64::MAX) {
            // Zoomed far out: walking occupied cells is cheaper than walking the rectangle.
            self.cells
                .iter()
                .filter(|(&(kx, ky), _)| kx >= kx0 && kx <= kx1 && ky >= ky0 && ky <= ky1)
                .flat_map(|(_, ids)| ids.iter().copied())
                .collect()
        } else {
            let mut v = Vec::new();
            for kx in kx0..=kx1 {
                for ky in ky0..=ky1 {
                    if let Some(ids) = self.cells.get(&(kx, ky)) {
                        v.extend_from_slice(ids);
                    }
                }
            }
            v
        };
        out.retain(|&i| {
            self.points
                .get(i as usize)
                .is_some_and(|&(x, y)| r.contains(x, y))
        });
        out.sort_unstable();
        out
    }

    /// How many points lie in `r`; no allocation, and cells wholly inside `r` are counted without
    /// looking at their points (for stats when nothing is drawn per node).
    ///
    /// # Complexity
    /// O(min(cells in `r`, occupied cells) + points in the cells on its border).
    pub fn count(&self, r: Rect) -> usize {
        let (kx0, ky0) = Self::key(self.cell, r.x0, r.y0);
        let (kx1, ky1) = Self::key(self.cell, r.x1, r.y1);
        let in_cell = |&(kx, ky): &(i64, i64), ids: &Vec<u32>| {
            let (x0, y0) = (kx as f64 * self.cell, ky as f64 * self.cell);
            let whole = x0 >= r.x0 && y0 >= r.y0 && x0 + self.cell < r.x1 && y0 + self.cell < r.y1;
            if whole {
                return ids.len();
            }
            ids.iter()
                .filter(|&&i| {
                    self.points
                        .get(i as usize)
                        .is_some_and(|&(x, y)| r.contains(x, y))
                })
                .count()
        };
        let span = (kx1 - kx0 + 1).saturating_mul(ky1 - ky0 + 1);
        if span > i64::try_from(self.cells.len()).unwrap_or(i64::MAX) {
            self.cells
                .iter()
                .filter(|(&(kx, ky), _)| kx >= kx0 && kx <= kx1 && ky >= ky0 && ky <= ky1)
                .map(|(k, ids)| in_cell(k, ids))
                .sum()
        } else {
            (kx0..=kx1)
                .flat_map(|kx| (ky0..=ky1).map(move |ky| (kx, ky)))
                .filter_map(|k| self.cells.get(&k).map(|ids| in_cell(&k, ids)))
                .sum()
        }
    }

    /// The point nearest to (x, y) within `radius`, ties to the lower id.
    pub fn nearest(&self, x: f64, y: f64, radius: f64) -> Option<u32> {
        let r = Rect {
            x0: x - radius,
            y0: y - radius,
            x1: x + radius,
            y1: y + radius,
        };
        self.query(r)
            .into_iter()
            .filter_map(|i| {
                let (px, py) = *self.points.get(i as usize)?;
                let d = (px - x).powi(2) + (py - y).powi(2);
                (d <= radius * radius).then_some((d, i))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn world_and_screen_round_trip() {
        let v = Viewport {
            scale: 2.5,
            tx: 13.0,
            ty: -7.0,
            ..Viewport::default()
        };
        let (sx, sy) = v.to_screen(10.0, 20.0);
        let (wx, wy) = v.to_world(sx, sy);
        assert!(close(wx, 10.0) && close(wy, 20.0));
    }

    #[test]
    fn zoom_keeps_the_point_under_the_cursor() {
        let mut v = Viewport::default();
        let before = v.to_world(300.0, 200.0);
        v.zoom_at(1.7, 300.0, 200.0);
        let after = v.to_world(300.0, 200.0);
        assert!(close(before.0, after.0) && close(before.1, after.1));
        assert!(close(v.scale, 1.7));
        v.zoom_at(1e9, 0.0, 0.0);
        assert!(close(v.scale, MAX_SCALE));
    }

    #[test]
    fn fit_shows_the_whole_bounds_centered() {
        let mut v = Viewport::default();
        let b = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 4000.0,
            y1: 100.0,
        };
        v.fit(b, 20.0, 2.0);
        let vis = v.visible();
        assert!(vis.x0 <= 0.0 && vis.x1 >= 4000.0 && vis.y0 <= 0.0 && vis.y1 >= 100.0);
        let (cx, cy) = v.to_screen(2000.0, 50.0);
        assert!(close(cx, 400.0) && close(cy, 300.0));
        assert_eq!(v.detail(), Detail::Dots);
        v.fit(
            Rect {
                x1: 10.0,
                y1: 10.0,
                ..b
            },
            20.0,
            1.5,
        );
        assert!(close(v.scale, 1.5), "capped: {}", v.scale);
        assert_eq!(v.detail(), Detail::Labels);
    }

    #[test]
    fn pan_moves_the_visible_rect() {
        let mut v = Viewport::default();
        v.pan(100.0, 0.0);
        assert!(close(v.visible().x0, -100.0));
    }

    #[test]
    fn grid_query_and_nearest_match_brute_force() {
        let pts: Vec<(f64, f64)> = (0..500)
            .map(|i| {
                (
                    f64::from((i * 37) % 101) * 9.0,
                    f64::from((i * 53) % 89) * 7.0,
                )
            })
            .collect();
        let g = Grid::build(pts.clone(), 50.0);
        let r = Rect {
            x0: 100.0,
            y0: 50.0,
            x1: 420.0,
            y1: 300.0,
        };
        let brute: Vec<u32> = (0..pts.len() as u32)
            .filter(|&i| r.contains(pts[i as usize].0, pts[i as usize].1))
            .collect();
        assert!(!brute.is_empty());
        assert_eq!(g.query(r), brute);
        assert_eq!(g.count(r), brute.len());
        assert_eq!(g.count(r.grow(1e7)), 500);
        // Rectangles on and off cell borders count like the brute force.
        for (i, off) in [0.0, 0.5, 25.0, 49.9, 50.0].into_iter().enumerate() {
            let q = Rect {
                x0: 50.0 + off,
                y0: 100.0 - off,
                x1: 350.0 + off * f64::from(i as u32),
                y1: 400.0 + off,
            };
            let want = pts.iter().filter(|&&(x, y)| q.contains(x, y)).count();
            assert_eq!(g.count(q), want, "{q:?}");
        }
        // A huge rect takes the occupied-cells path and finds everything.
        assert_eq!(g.query(r.grow(1e7)).len(), 500);
        let (x, y) = (pts[7].0 + 1.0, pts[7].1 - 1.0);
        let near = g.nearest(x, y, 5.0).unwrap();
        let d = |i: usize| (pts[i].0 - x).powi(2) + (pts[i].1 - y).powi(2);
        assert!(d(near as usize) <= d(7));
        assert_eq!(g.nearest(-1000.0, -1000.0, 5.0), None);
    }

    #[test]
    fn segment_culling() {
        let r = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 10.0,
            y1: 10.0,
        };
        assert!(r.meets_segment((-5.0, 5.0), (50.0, 5.0)));
        assert!(!r.meets_segment((20.0, 5.0), (50.0, 5.0)));
    }
}
