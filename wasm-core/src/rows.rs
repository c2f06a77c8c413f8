//! Exact vector scoring for semantic search (docs/decisions/0037-simd-vector-scan.md): rows of
//! int8 values with one f32 scale each, scored against a query in one pass.
//!
//! The query is quantized to i16 (its largest component to ±16383), so a row's score is an
//! integer dot product — exact, the same on every platform and in any summation order — times
//! the row's scale and the query's: `score = (Σ q16[i] * row[i]) * row_scale * query_scale`.
//! That loses at most half a step of 1/16383 of the query's largest component per dimension,
//! far below the int8 rows' own quantization. In wasm with SIMD128 the sum runs 16 bytes at a
//! time (`i32x4.dot_i16x8_s`); elsewhere (native tests) a plain loop computes the same integers.
//!
//! Each row belongs to a group (semantic search: its document). `top` gives the `k` best groups
//! by their best row in the same pass (decision 0070): done in JavaScript from every row's
//! score, that cost more than the scan itself at 100,000 rows.

use std::cell::RefCell;
use std::cmp::Ordering;

use crate::error::Error;

pub struct Rows {
    dims: usize,
    data: Vec<i8>,
    scales: Vec<f32>,
    groups: Vec<u32>,
    /// `top`'s scores, kept between calls (a scan of 100,000 rows needs 400 KB of them).
    scratch: RefCell<Vec<f32>>,
}

/// A group's best row and its score (`top`'s answer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Best {
    pub group: u32,
    pub row: u32,
    pub score: f32,
}

impl Rows {
    /// Rows of `dims` values; `dims` a positive multiple of 16 up to 1,024 (384 and 768 are).
    pub fn new(dims: usize) -> Result<Rows, Error> {
        if dims == 0 || !dims.is_multiple_of(16) || dims > 1024 {
            return Err(Error::InvalidShape);
        }
        Ok(Rows { dims, data: Vec::new(), scales: Vec::new(), groups: Vec::new(), scratch: RefCell::new(Vec::new()) })
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.scales.clear();
        self.groups.clear();
    }

    /// Appends `scales.len()` rows whose values are `data` (row after row), each in the group
    /// `groups` gives it. Scales must be finite: a NaN score has no place in an order.
    pub fn push(&mut self, data: &[i8], scales: &[f32], groups: &[u32]) -> Result<(), Error> {
        if data.len() != scales.len() * self.dims || groups.len() != scales.len() || !scales.iter().all(|s| s.is_finite()) {
            return Err(Error::InvalidShape);
        }
        self.data.extend_from_slice(data);
        self.scales.extend_from_slice(scales);
        self.groups.extend_from_slice(groups);
        Ok(())
    }

    /// One score per row for `query` (`dims` values), in row order, into `out`.
    pub fn scores(&self, query: &[f32], out: &mut Vec<f32>) -> Result<(), Error> {
        if query.len() != self.dims {
            return Err(Error::InvalidShape);
        }
        let (q, q_scale) = quantize_i16(query);
        out.clear();
        out.reserve(self.len());
        for (row, &scale) in self.data.chunks_exact(self.dims).zip(&self.scales) {
            out.push(dot(&q, row) as f32 * scale * q_scale);
        }
        Ok(())
    }

    /// The `k` best groups for `query`, each by its best row (ties: the first row), best first;
    /// ties by group, then row — one order on every platform. The scores are `scores`' own.
    pub fn top(&self, query: &[f32], k: usize, out: &mut Vec<Best>) -> Result<(), Error> {
        if query.len() != self.dims {
            return Err(Error::InvalidShape);
        }
        // Every row scored first, then its group's best taken: the scan's loop stays as tight
        // as `scores`' (one loop doing both ran ~40% slower).
        let mut scores = std::mem::take(&mut *self.scratch.borrow_mut());
        self.scores(query, &mut scores)?;
        out.clear();
        // A group's rows are mostly consecutive (a document's chunks are written together): its
        // best is taken per run of rows, and runs of one group merged after.
        let mut run: Option<Best> = None;
        for (r, (&score, &group)) in scores.iter().zip(&self.groups).enumerate() {
            match &mut run {
                Some(b) if b.group == group => {
                    if score > b.score {
                        b.row = r as u32;
                        b.score = score;
                    }
                }
                _ => {
                    out.extend(run.take());
                    run = Some(Best { group, row: r as u32, score });
                }
            }
        }
        *self.scratch.borrow_mut() = scores;
        out.extend(run);
        if !out.windows(2).all(|w| w[0].group < w[1].group) {
            // A group met in more than one run: its best first (highest score, then first row), kept.
            out.sort_unstable_by(|a, b| a.group.cmp(&b.group).then(by_score(a, b)).then(a.row.cmp(&b.row)));
            out.dedup_by_key(|b| b.group);
        }
        let order = |a: &Best, b: &Best| by_score(a, b).then(a.group.cmp(&b.group)).then(a.row.cmp(&b.row));
        if k < out.len() {
            if k == 0 {
                out.clear();
                return Ok(());
            }
            out.select_nth_unstable_by(k - 1, order);
            out.truncate(k);
        }
        out.sort_unstable_by(order);
        Ok(())
    }
}

/// Higher scores first. (Scores are finite — every row's scale is, and the query's — so this
/// is the order `partial_cmp` gives; `total_cmp` keeps it total whatever comes, never a panic.)
fn by_score(a: &Best, b: &Best) -> Ordering {
    b.score.total_cmp(&a.score)
}

/// The query's largest component as an i16: |q| ≤ 2^14 and |row| ≤ 2^7 make each product at
/// most 2^21, so 768 of them sum to under 2^31 — no width supported here overflows i32.
const Q_MAX: i16 = 16383;

/// The query as i16 values and the scale that gives them back (`v ≈ q * scale`).
fn quantize_i16(v: &[f32]) -> (Vec<i16>, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if !(max > 0.0 && max.is_finite()) {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / Q_MAX as f32;
    (v.iter().map(|x| (x / scale).round().clamp(-(Q_MAX as f32), Q_MAX as f32) as i16).collect(), scale)
}

/// Σ q[i] * row[i] in i32 (Q_MAX says why it cannot overflow for up to 1,024 dimensions).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot(q: &[i16], row: &[i8]) -> i32 {
    use std::arch::wasm32::*;
    let mut acc = i32x4_splat(0);
    let mut i = 0;
    while i < row.len() {
        // SAFETY: i + 16 <= row.len() == q.len() (dims is a multiple of 16); unaligned loads.
        unsafe {
            let r = v128_load(row.as_ptr().add(i) as *const v128);
            let lo = i16x8_extend_low_i8x16(r);
            let hi = i16x8_extend_high_i8x16(r);
            let q_lo = v128_load(q.as_ptr().add(i) as *const v128);
            let q_hi = v128_load(q.as_ptr().add(i + 8) as *const v128);
            acc = i32x4_add(acc, i32x4_add(i32x4_dot_i16x8(lo, q_lo), i32x4_dot_i16x8(hi, q_hi)));
        }
        i += 16;
    }
    i32x4_extract_lane::<0>(acc)
        .wrapping_add(i32x4_extract_lane::<1>(acc))
        .wrapping_add(i32x4_extract_lane::<2>(acc))
        .wrapping_add(i32x4_extract_lane::<3>(acc))
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot(q: &[i16], row: &[i8]) -> i32 {
    q.iter().zip(row).fold(0i32, |s, (&a, &b)| s.wrapping_add(i32::from(a) * i32::from(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_scaled_integer_dot_products() {
        let mut rows = Rows::new(16).unwrap();
        let a: Vec<i8> = (0..16).map(|i| i as i8 - 8).collect();
        let b: Vec<i8> = (0..16).map(|i| if i % 2 == 0 { 127 } else { -128 }).collect();
        rows.push(&[a.clone(), b.clone()].concat(), &[0.5, 0.25], &[0, 1]).unwrap();
        let query: Vec<f32> = (0..16).map(|i| if i == 3 { 1.0 } else { 0.0 }).collect();
        let mut out = Vec::new();
        rows.scores(&query, &mut out).unwrap();
        // The query is one-hot at 3 (quantized to Q_MAX exactly, scale 1/Q_MAX): each score is
        // that row's value at 3 times its scale.
        assert_eq!(out, vec![-5.0 * 0.5, -128.0 * 0.25]);
    }

    #[test]
    fn close_to_the_float_dot_product() {
        let dims = 384;
        let mut seed = 7u32;
        let mut rand = || {
            seed = seed.wrapping_mul(1103515245).wrapping_add(12345);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        };
        let row: Vec<i8> = (0..dims).map(|_| (rand() * 127.0).round() as i8).collect();
        let query: Vec<f32> = (0..dims).map(|_| rand()).collect();
        let mut rows = Rows::new(dims).unwrap();
        rows.push(&row, &[0.01], &[0]).unwrap();
        let mut out = Vec::new();
        rows.scores(&query, &mut out).unwrap();
        let exact: f64 = row.iter().zip(&query).map(|(&r, &q)| f64::from(r) * f64::from(q)).sum::<f64>() * 0.01;
        assert!((f64::from(out[0]) - exact).abs() < 1e-4, "{} vs {exact}", out[0]);
    }

    #[test]
    fn refuses_wrong_shapes() {
        assert!(Rows::new(0).is_err());
        assert!(Rows::new(100).is_err());
        let mut rows = Rows::new(16).unwrap();
        assert!(rows.push(&[0; 15], &[1.0], &[0]).is_err());
        assert!(rows.push(&[0; 16], &[1.0], &[]).is_err());
        assert!(rows.push(&[0; 16], &[f32::NAN], &[0]).is_err());
        assert!(rows.push(&[0; 16], &[f32::INFINITY], &[0]).is_err());
        assert!(rows.top(&[0.0; 15], 1, &mut Vec::new()).is_err());
        assert!(rows.scores(&[0.0; 15], &mut Vec::new()).is_err());
        let mut out = vec![9.0];
        rows.scores(&[0.0; 16], &mut out).unwrap();
        assert!(out.is_empty());
    }

    /// Rows whose score is their value at dimension 0 (a one-hot query): each row's score is known.
    fn rows_scoring(values: &[(u32, i8)]) -> Rows {
        let mut rows = Rows::new(16).unwrap();
        let data: Vec<i8> = values.iter().flat_map(|&(_, v)| std::iter::once(v).chain(std::iter::repeat_n(0, 15))).collect();
        let groups: Vec<u32> = values.iter().map(|&(g, _)| g).collect();
        rows.push(&data, &vec![1.0; values.len()], &groups).unwrap();
        rows
    }

    #[test]
    fn top_takes_each_groups_best_row_across_runs_and_orders_ties_by_group_then_row() {
        let one_hot: Vec<f32> = (0..16).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
        // Group 7 in two runs (its best in the second), group 3 twice with a tie (the first row
        // counts), groups 5 and 9 tied with 3 at 40.
        let rows = rows_scoring(&[(7, 10), (7, 20), (3, 40), (3, 40), (5, 40), (7, 90), (9, 40), (2, -5)]);
        let mut out = Vec::new();
        rows.top(&one_hot, 10, &mut out).unwrap();
        let got: Vec<(u32, u32, f32)> = out.iter().map(|b| (b.group, b.row, b.score)).collect();
        assert_eq!(got, vec![(7, 5, 90.0), (3, 2, 40.0), (5, 4, 40.0), (9, 6, 40.0), (2, 7, -5.0)]);
        rows.top(&one_hot, 2, &mut out).unwrap();
        assert_eq!(out.iter().map(|b| b.group).collect::<Vec<_>>(), vec![7, 3]);
        rows.top(&one_hot, 0, &mut out).unwrap();
        assert!(out.is_empty());
        // Groups in increasing runs (no merge needed) give the same answer as a full sort.
        let rows = rows_scoring(&[(1, 3), (1, 8), (2, 8), (4, -1), (4, 2)]);
        rows.top(&one_hot, 3, &mut out).unwrap();
        assert_eq!(out.iter().map(|b| (b.group, b.row)).collect::<Vec<_>>(), vec![(1, 1), (2, 2), (4, 4)]);
    }
}
