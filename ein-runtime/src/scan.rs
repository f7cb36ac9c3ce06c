//! Scans for generated code: [`scan`] fills an output with every state of a scan whose step
//! is associative (`acc ⊕ f(t)`), in blocks of [`SCAN_BLOCK`] steps, three phases: the total
//! of every block but the last (in parallel), the offset of every block (serially, one
//! combination per block), then every block rescanned from its offset (in parallel).
//!
//! The grouping, which is ein's documented rounding behaviour for float scans (the compiler's
//! note [scan grouping], `ein-core/src/ir/scan.rs`, and the README): with `offset_0 = init`,
//! `total_b = f(bB) ⊕ … ⊕ f(bB + B - 1)` left to right and `offset_{b+1} = offset_b ⊕ total_b`,
//! the state after step `i` of block `b` is `offset_b ⊕ f(bB) ⊕ … ⊕ f(i)`, left to right. It
//! depends only on the number of steps, never on the thread count, so results are the same
//! bits on every run and machine; the first block is the plain serial scan.

use rayon::prelude::*;

use crate::build::Buffer;
use crate::build::Out;

/// The number of consecutive steps grouped into one block (must equal the compiler's
/// `ein_core::ir::scan::SCAN_BLOCK`).
pub const SCAN_BLOCK: usize = 4096;

/// Fills `buffer` with the states of an associative scan from `init` (see the module
/// documentation), one per element:
///
/// - `total(start, end)` (for `start < end`) is `f(start) ⊕ … ⊕ f(end - 1)`, left to right;
/// - `rescan(start, end, offset, out)` writes `offset ⊕ f(start)`, then that `⊕ f(start + 1)`,
///   …, `end - start` states in all, into `out`;
/// - `combine(a, b)` is `a ⊕ b`.
///
/// `total` and `rescan` take whole blocks so that their loops are compiled in the caller's
/// closures (with the caller's target features, inlined), not behind a call per step. Every
/// step's `f` is evaluated twice (once for the block's total, once in its rescan) when there
/// are several blocks, in no particular order: only scans whose `f` cannot fail come here.
pub fn scan<T, Total, Rescan, Combine>(buffer: &mut Buffer<T>, init: T, total: Total, rescan: Rescan, combine: Combine)
where
    T: Copy + Send + Sync,
    Total: Fn(usize, usize) -> T + Sync + Send,
    Rescan: for<'a> Fn(usize, usize, T, &mut Out<'a, T>) + Sync + Send,
    Combine: Fn(T, T) -> T,
{
    let count = buffer.len();
    if count == 0 {
        buffer.fill_blocks(1, false, |_, _| {});
        return;
    }
    let blocks = count.div_ceil(SCAN_BLOCK);
    let block_end = |block: usize| count.min((block + 1) * SCAN_BLOCK);
    // Phase 1: the totals of every block but the last (no later block needs its total).
    let block_total = |block: usize| total(block * SCAN_BLOCK, block_end(block));
    let totals: Vec<T> = if crate::build::parallel_pool() {
        (0..blocks - 1).into_par_iter().map(block_total).collect()
    } else {
        (0..blocks - 1).map(block_total).collect()
    };
    // Phase 2: each block's offset, in order.
    let mut offsets = Vec::with_capacity(blocks);
    offsets.push(init);
    for (block, block_total) in totals.into_iter().enumerate() {
        offsets.push(combine(offsets[block], block_total));
    }
    // Phase 3: every block from its offset.
    buffer.fill_blocks(SCAN_BLOCK, blocks > 1, |block, out| {
        rescan(block * SCAN_BLOCK, block_end(block), offsets[block], out);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Fill, Push};

    /// The documented grouping, written out serially.
    fn documented(values: &[f64], init: f64) -> Vec<f64> {
        let mut states = Vec::new();
        let mut offset = init;
        for block in values.chunks(SCAN_BLOCK) {
            let mut running = offset;
            for &value in block {
                running += value;
                states.push(running);
            }
            let total = block[1..].iter().fold(block[0], |total, &value| total + value);
            offset += total;
        }
        states
    }

    fn prefix_sum(values: &[f64], init: f64) -> Vec<f64> {
        let mut buffer = Buffer::<f64>::new(values.len());
        scan(
            &mut buffer,
            init,
            |start, end| values[start + 1..end].iter().fold(values[start], |total, &value| total + value),
            |start, end, offset, out| {
                let mut running = offset;
                out.fill(end - start, |position, slot| {
                    running += values[start + position];
                    slot.push(running);
                });
            },
            |a, b| a + b,
        );
        buffer.into_array([values.len()]).as_slice().to_vec()
    }

    fn in_pool<R: Send>(threads: usize, action: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool").install(action)
    }

    #[test]
    fn float_scans_follow_the_documented_grouping_on_any_number_of_threads() {
        for count in [0, 1, 5, SCAN_BLOCK - 1, SCAN_BLOCK, SCAN_BLOCK + 1, 3 * SCAN_BLOCK + 17] {
            let values: Vec<f64> = (0..count).map(|i| ((i * 7919) % 1000) as f64 * 0.001 + 1e-7).collect();
            let expected = documented(&values, 0.5);
            for threads in [1, 2, 3] {
                let states = in_pool(threads, || prefix_sum(&values, 0.5));
                let same = states.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same && states.len() == count, "{count} steps on {threads} threads");
            }
        }
    }

    #[test]
    fn the_first_block_is_the_serial_scan() {
        let values: Vec<f64> = (0..SCAN_BLOCK).map(|i| 1.0 / (i + 1) as f64).collect();
        let mut running = 0.0;
        let serial: Vec<f64> = values
            .iter()
            .map(|value| {
                running += value;
                running
            })
            .collect();
        assert_eq!(prefix_sum(&values, 0.0), serial);
    }

    #[test]
    fn integer_scans_equal_the_serial_scan() {
        let count = 5 * SCAN_BLOCK + 3;
        let mut buffer = Buffer::<u8>::new(count);
        let value = |i: usize| (i % 251) as u8;
        scan(
            &mut buffer,
            200u8,
            |start, end| (start + 1..end).fold(value(start), |total, i| total.wrapping_add(value(i))),
            |start, end, offset, out| {
                let mut running = offset;
                out.fill(end - start, |position, slot| {
                    running = running.wrapping_add(value(start + position));
                    slot.push(running);
                });
            },
            u8::wrapping_add,
        );
        let mut running = 200u8;
        let serial: Vec<u8> = (0..count)
            .map(|i| {
                running = running.wrapping_add(value(i));
                running
            })
            .collect();
        assert_eq!(buffer.into_array([count]).as_slice(), serial.as_slice());
    }
}
