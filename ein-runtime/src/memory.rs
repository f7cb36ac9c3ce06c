//! Allocations for large outputs, on huge pages where the OS offers them, and the pool of large
//! arrays generated code is done with, kept for reuse ([`take_spare`], [`keep_spare`]).
//!
//! A new output array is written in full right after it is allocated, so every 4 KiB page of
//! it is faulted in, one kernel trap each: for a 256 MB triad output that cost more than the
//! triad itself. On Linux, whose transparent huge pages are commonly enabled only for memory
//! that asks (`madvise` mode), a large output asks for them before its first write: one fault
//! per 2 MiB instead of 512, no memory wasted (only whole 2 MiB blocks inside the allocation,
//! all of which the output writes). Measured on this project's machine, 2^25 f64 triad into a
//! new array, 2 threads: 97–106 ms with 4 KiB pages, 42–48 ms with huge pages.

/// Large arrays generated code is done with, kept (with their sizes in bytes) for later
/// arrays of this or a later call: the private arrays of accumulation groups already combined,
/// the spare buffer of a fold over arrays. Allocating an array and touching its pages for the
/// first time costs several times writing it (8 MiB: 2.5 ms against 0.4 on the 2-core EPYC VM
/// the suite runs on), and the C allocator hands large freed blocks back to the OS, so a fresh
/// one faults again on every call.
static SPARES: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> = std::sync::Mutex::new(Vec::new());

/// The most bytes [`SPARES`] keeps.
const SPARES_MAX_BYTES: usize = 64 << 20;

/// An empty kept array of `T` with room for `len` elements and at most `most`, if there is one
/// (the smallest that fits, so that a larger one stays for a larger array).
pub(crate) fn take_spare<T: 'static>(len: usize, most: usize) -> Option<Vec<T>> {
    let mut spares = SPARES.lock().ok()?;
    let room = |spare: &Box<dyn std::any::Any + Send>| spare.downcast_ref::<Vec<T>>().map(Vec::capacity);
    let found = (0..spares.len())
        .filter(|&at| room(&spares[at].1).is_some_and(|room| (len..=most).contains(&room)))
        .min_by_key(|&at| spares[at].0)?;
    // `remove`, not `swap_remove`: the order is the order kept in (`keep_spare` lets go of the
    // front first).
    let mut spare = *spares.remove(found).1.downcast::<Vec<T>>().ok()?;
    spare.clear();
    Some(spare)
}

/// Keeps `spare` for later, letting go of the longest-kept arrays if [`SPARES`] would then
/// hold more than its limit (so that what one kind of work left, say an accumulation's arrays,
/// does not keep every later fold's spare out for the life of the process).
pub(crate) fn keep_spare<T: Send + 'static>(spare: Vec<T>) {
    let bytes = spare.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes > SPARES_MAX_BYTES {
        return;
    }
    let released = {
        let Ok(mut spares) = SPARES.lock() else { return };
        let released = make_room(&mut spares, bytes, SPARES_MAX_BYTES);
        spares.push((bytes, Box::new(spare)));
        released
    };
    // Freed outside the lock: handing memory back to the OS takes a while.
    drop(released);
}

/// Takes the longest-kept entries (the front) out of `spares` until `bytes` more fit in
/// `limit` (`bytes` at most `limit`), and returns them.
fn make_room<S>(spares: &mut Vec<(usize, S)>, bytes: usize, limit: usize) -> Vec<S> {
    let mut kept: usize = spares.iter().map(|(bytes, _)| bytes).sum();
    let mut released = Vec::new();
    while kept + bytes > limit && !spares.is_empty() {
        let (oldest, spare) = spares.remove(0);
        kept -= oldest;
        released.push(spare);
    }
    released
}

/// Outputs of at least this many bytes ask for huge pages (smaller ones hold at most one
/// aligned 2 MiB block, often none).
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// An empty vector with room for `len` elements, whose memory (if large) is advised to be
/// backed by huge pages before anything is written to it. Panics with an `ein: ` message, rather
/// than aborting the process as `Vec::with_capacity` would, if the memory cannot be had: `len`
/// comes from the user's data (an output's shape, an operand's size).
#[inline]
pub(crate) fn output_vec<T>(len: usize) -> Vec<T> {
    let mut elements: Vec<T> = Vec::new();
    if let Err(error) = elements.try_reserve_exact(len) {
        allocation_failure(len, std::mem::size_of::<T>(), &error);
    }
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    if bytes >= HUGE_PAGE_MIN_BYTES {
        advise_huge_pages(elements.as_mut_ptr().cast::<u8>(), bytes);
    }
    elements
}

/// A vector of `len` copies of `value`, allocated as [`output_vec`] does (so a failure panics
/// instead of aborting): scratch space sized by the user's data.
pub(crate) fn filled_vec<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut elements = output_vec(len);
    elements.resize(len, value);
    elements
}

/// Panics for an allocation of `len` elements of `element_bytes` bytes each that failed.
#[cold]
#[inline(never)]
fn allocation_failure(len: usize, element_bytes: usize, error: &std::collections::TryReserveError) -> ! {
    match len.checked_mul(element_bytes) {
        Some(bytes) => panic!("ein: cannot allocate {len} elements ({bytes} bytes): {error}"),
        None => {
            panic!("ein: cannot allocate {len} elements ({len} × {element_bytes} bytes, more than usize::MAX): {error}")
        }
    }
}

/// Asks the OS to back the whole 2 MiB blocks inside `start..start + bytes` with huge pages; a
/// hint only (ignored where unsupported, and its failure changes nothing but speed).
#[allow(unused_variables)]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let first = (start as usize).next_multiple_of(HUGE_PAGE);
        let end = (start as usize + bytes) & !(HUGE_PAGE - 1);
        if end > first {
            // SAFETY: madvise with MADV_HUGEPAGE only changes how the pages of this range (inside
            // the allocation, which this process owns and maps) are backed, never their contents
            // or mapping; the result is ignored, as the advice is optional.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ein_testing::expect_panic;

    #[test]
    fn the_longest_kept_spares_make_room_for_a_new_one() {
        let mut spares: Vec<(usize, &str)> = vec![(30, "a"), (20, "b"), (40, "c")];
        assert!(make_room(&mut spares, 10, 100).is_empty());
        assert_eq!(make_room(&mut spares, 30, 100), ["a"]);
        assert_eq!(spares, [(20, "b"), (40, "c")]);
        assert_eq!(make_room(&mut spares, 100, 100), ["b", "c"]);
        assert!(spares.is_empty());
    }

    #[test]
    fn output_vectors_have_the_capacity_asked_for_and_work_as_vectors() {
        for len in [0, 1, 1000, (HUGE_PAGE_MIN_BYTES / 8) + 3, 3 * HUGE_PAGE_MIN_BYTES / 8] {
            let mut elements = output_vec::<f64>(len);
            assert!(elements.capacity() >= len);
            elements.extend((0..len).map(|position| position as f64));
            assert!(elements.iter().enumerate().all(|(position, &value)| value == position as f64));
        }
    }

    /// The flags of the mapping that holds `address`, from `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn mapping_flags(address: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("Linux has /proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|first| first.split_once('-'));
            if let Some((start, end)) = range.filter(|(start, _)| start.chars().all(|c| c.is_ascii_hexdigit())) {
                let parse = |text: &str| usize::from_str_radix(text, 16).unwrap_or(0);
                inside = (parse(start)..parse(end)).contains(&address);
            } else if inside && line.starts_with("VmFlags:") {
                return line.to_owned();
            }
        }
        panic!("no mapping holds {address:#x}")
    }

    #[test]
    #[cfg_attr(miri, ignore = "an allocation Miri cannot make stops Miri instead of failing")]
    fn an_allocation_that_cannot_be_had_panics_instead_of_aborting() {
        // 2^60 f64 are 2^63 bytes, more than a Vec may hold; usize::MAX / 2 bytes is allowed as a
        // layout but no allocator can provide it.
        let message = expect_panic(|| output_vec::<f64>(1 << 60));
        assert!(
            message.starts_with("ein: cannot allocate 1152921504606846976 elements (9223372036854775808 bytes)"),
            "{message}"
        );
        let message = expect_panic(|| output_vec::<u8>(usize::MAX / 2));
        assert!(
            message.starts_with("ein: cannot allocate 9223372036854775807 elements (9223372036854775807 bytes)"),
            "{message}"
        );
        let message = expect_panic(|| filled_vec(usize::MAX / 2, 0.0f32));
        assert!(message.starts_with("ein: cannot allocate 9223372036854775807 elements ("), "{message}");
        assert!(message.contains("more than usize::MAX"), "{message}");
        assert_eq!(filled_vec(3, 1.5f32), [1.5; 3]);
    }

    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn large_output_vectors_ask_for_huge_pages() {
        // A kernel built without transparent huge pages has no such directory and refuses the
        // advice; any other marks the range ("hg").
        let offered = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
        let mut large = output_vec::<f64>(3 * HUGE_PAGE_MIN_BYTES / 8);
        let inside = (large.as_mut_ptr() as usize).next_multiple_of(2 << 20);
        let flags = mapping_flags(inside);
        assert_eq!(flags.split_whitespace().any(|flag| flag == "hg"), offered, "{flags}");
        // A small one is left alone.
        let small = output_vec::<f64>(16);
        assert!(!mapping_flags(small.as_ptr() as usize).split_whitespace().any(|flag| flag == "hg"));
        large.push(1.0);
    }
}
