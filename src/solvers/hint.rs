//! Hints to the processor that the solvers' inner loops share; they change
//! no result.

/// Asks the CPU to bring `x`'s cache line in (a hint; no effect on
/// results): a loop that will read or write scattered cells asks for a
/// batch of lines first, so that their fetches overlap.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no memory; `x` is a live
    // reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
