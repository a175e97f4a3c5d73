//! A counting global allocator: live heap bytes and their high-water mark, so that the
//! memory figures are the saver's own bytes (a delta around the saver), not the process's
//! resident set (which holds the bench's inputs, the allocator's free lists and the
//! conformance run).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Counting is on only around a memory figure ([`start`]), so that the timed figures pay
/// one relaxed load per allocation, not two atomic updates.
static ON: AtomicBool = AtomicBool::new(false);

fn grow(n: usize) {
    if ON.load(Relaxed) {
        let live = LIVE.fetch_add(n, Relaxed) + n;
        PEAK.fetch_max(live, Relaxed);
    }
}

fn shrink(n: usize) {
    if ON.load(Relaxed) {
        LIVE.fetch_sub(n, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` with the same layout; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrink(layout.size());
            grow(new_size);
        }
        p
    }
}

/// Starts counting from zero: only what is allocated from now on, and freed again, counts
/// (a block allocated before and freed while counting makes `live` wrap below zero, so
/// the saver under measurement must be created after this call).
pub fn start() {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ON.store(true, Relaxed);
}

/// Stops counting.
pub fn stop() {
    ON.store(false, Relaxed);
}

/// Live heap bytes counted since [`start`] (signed: frees of older blocks count too).
pub fn live() -> isize {
    LIVE.load(Relaxed) as isize
}

/// The high-water mark of live heap bytes since [`start`].
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}
