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

/// Asks the kernel to back `[ptr, ptr + len)` with transparent huge pages
/// (2 MiB; a hint that may be ignored: without it, or where THP is off, a
/// solver is slower, not wrong). Solvers that update cells of a large table
/// at random miss the TLB on nearly every access with 4 KiB pages. Call it
/// before the pages are first touched.
pub fn advise_huge(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let a = (ptr as usize).next_multiple_of(PAGE);
        let b = (ptr as usize + len) / PAGE * PAGE;
        if b > a {
            // SAFETY: [a, b) lies inside the caller's live allocation and is
            // page aligned; MADV_HUGEPAGE changes no contents, only how the
            // kernel backs the pages. A failure is harmless and ignored.
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// `len` zero bytes, backed by huge pages where the system allows
/// ([`advise_huge`]).
pub fn zeroed_bytes(len: usize) -> Vec<u8> {
    let v = vec![0u8; len];
    advise_huge(v.as_ptr(), len);
    v
}

/// `len` zero words, backed by huge pages where the system allows
/// ([`advise_huge`]).
pub fn zeroed_words(len: usize) -> Vec<u64> {
    let v = vec![0u64; len];
    advise_huge(v.as_ptr().cast(), len * 8);
    v
}
