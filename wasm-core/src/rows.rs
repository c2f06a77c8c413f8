//! Exact vector scoring for semantic search (docs/decisions/0037-simd-vector-scan.md): rows of
//! int8 values with one f32 scale each, scored against a query in one pass.
//!
//! The query is quantized to i16 (its largest component to ±16383), so a row's score is an
//! integer dot product — exact, the same on every platform and in any summation order — times
//! the row's scale and the query's: `score = (Σ q16[i] * row[i]) * row_scale * query_scale`.
//! That loses at most half a step of 1/16383 of the query's largest component per dimension,
//! far below the int8 rows' own quantization. In wasm with SIMD128 the sum runs 16 bytes at a
//! time (`i32x4.dot_i16x8_s`); elsewhere (native tests) a plain loop computes the same integers.

use crate::error::Error;

pub struct Rows {
    dims: usize,
    data: Vec<i8>,
    scales: Vec<f32>,
}

impl Rows {
    /// Rows of `dims` values; `dims` a positive multiple of 16 up to 1,024 (384 and 768 are).
    pub fn new(dims: usize) -> Result<Rows, Error> {
        if dims == 0 || !dims.is_multiple_of(16) || dims > 1024 {
            return Err(Error::InvalidShape);
        }
        Ok(Rows { dims, data: Vec::new(), scales: Vec::new() })
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
    }

    /// Appends `scales.len()` rows whose values are `data` (row after row).
    pub fn push(&mut self, data: &[i8], scales: &[f32]) -> Result<(), Error> {
        if data.len() != scales.len() * self.dims {
            return Err(Error::InvalidShape);
        }
        self.data.extend_from_slice(data);
        self.scales.extend_from_slice(scales);
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
        rows.push(&[a.clone(), b.clone()].concat(), &[0.5, 0.25]).unwrap();
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
        rows.push(&row, &[0.01]).unwrap();
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
        assert!(rows.push(&[0; 15], &[1.0]).is_err());
        assert!(rows.scores(&[0.0; 15], &mut Vec::new()).is_err());
        let mut out = vec![9.0];
        rows.scores(&[0.0; 16], &mut out).unwrap();
        assert!(out.is_empty());
    }
}
