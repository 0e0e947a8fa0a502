//! Termination signals: SIGTERM and SIGINT become a clean shutdown.
//!
//! Owns [`TerminationSignals`]. [`TerminationSignals::block`] blocks SIGTERM and SIGINT in the
//! calling thread; it must run in `main` before any other thread exists, so every thread
//! inherits the mask and no signal handler ever runs in a random thread (no async-signal-safety
//! puzzles). [`TerminationSignals::spawn_waiter`] then starts one thread that takes the signals
//! synchronously with `sigwait(3)` and reports each one through a callback, in ordinary thread
//! context. A second signal while shutting down is reported too (the caller decides).
//!
//! We use `libc` directly (already in the dependency tree) rather than `signal-hook`: the
//! block-then-sigwait pattern is a dozen lines and needs no handler or self-pipe.
//!
//! Invariants: SIGTERM and SIGINT are blocked before any other thread exists, so only the
//! waiter thread ever receives them; a signal becomes one shutdown request.

use std::io;

/// SIGTERM and SIGINT, blocked in this process.
pub struct TerminationSignals {
    set: libc::sigset_t,
}

// SAFETY: sigset_t is plain data (a bit set); sharing it between threads is sound.
unsafe impl Send for TerminationSignals {}

impl TerminationSignals {
    /// Blocks SIGTERM and SIGINT in the calling thread (and so in threads it starts later).
    pub fn block() -> io::Result<TerminationSignals> {
        // SAFETY: sigemptyset/sigaddset initialise the set we own; pthread_sigmask only reads
        // it. All pointers are to live locals.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            if libc::sigemptyset(&mut set) != 0
                || libc::sigaddset(&mut set, libc::SIGTERM) != 0
                || libc::sigaddset(&mut set, libc::SIGINT) != 0
            {
                return Err(io::Error::last_os_error());
            }
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(TerminationSignals { set })
        }
    }

    /// Starts the thread that waits for the signals and calls `on_signal` with each one's
    /// name ("SIGTERM" or "SIGINT"). The thread runs until the process exits.
    pub fn spawn_waiter(
        self,
        on_signal: impl Fn(&'static str) + Send + 'static,
    ) -> io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("signals".to_string())
            .spawn(move || loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: `self.set` is an initialised set owned by this closure; `sig` is a
                // live local the call writes to.
                let rc = unsafe { libc::sigwait(&self.set, &mut sig) };
                if rc != 0 {
                    // Only EINVAL is documented, which our fixed set cannot cause.
                    continue;
                }
                let name = match sig {
                    libc::SIGTERM => "SIGTERM",
                    libc::SIGINT => "SIGINT",
                    _ => continue,
                };
                on_signal(name);
            })
    }
}
