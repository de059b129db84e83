//! A stack overflow in a simulated GPU thread as an error, not a SIGSEGV.
//!
//! Every simulated thread runs on a coroutine stack of the launch's `stack_bytes` with a guard
//! page below it (`corosensei`'s `DefaultStack`): the threads that run one after another before a
//! block's first barrier (thread 0 among them) on the block's *runner* coroutine, the others on
//! their own coroutines. Rust's stack probes make any frame, however large, touch the guard page
//! before anything below it, so an overflow always faults there.
//!
//! A SIGSEGV handler, on an alternate signal stack (the overflowing stack has no room for it),
//! looks at the innermost coroutine running on its OS thread ([`resuming`] keeps track). If the
//! fault is in that coroutine's guard page, it uses corosensei's trap handling: it rewrites the
//! interrupted registers so that, once the handler returns (no `longjmp`), the coroutine's stack
//! is reset and the coroutine returns [`Ended::Overflowed`] to whoever resumed it; the executor
//! then stops the block with [`Interruption::StackOverflow`](super::interrupt::Interruption) for that
//! thread. Any other fault goes to the handler that was installed before (Rust's own reports an
//! overflow of an OS thread's stack), or the default action.
//!
//! What an overflow leaves behind: the overflowing thread's frames are discarded without running
//! their destructors (what they owned on the heap leaks), and the block stops as after a panic.
//! An overflow inside the allocator or the panic machinery (a panic message formatted with the
//! last bytes of stack) would leave their locks or counters as they were: the stack size should
//! leave room for a panic, which the minimum of 64 KiB does.
//!
//! Only x86-64 Linux has the handler; elsewhere an overflow still ends the process.

use core::cell::Cell;
use corosensei::stack::{DefaultStack, Stack};
use corosensei::trap::CoroutineTrapHandler;
use corosensei::{on_stack, Coroutine, CoroutineResult};

/// The stack of each simulated thread when a launch does not say.
pub const DEFAULT_STACK_BYTES: usize = 256 * 1024;

/// How a coroutine (a thread's or a block's runner) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    Returned,
    /// Its stack overflowed: the signal handler made it return this.
    Overflowed,
}

/// A coroutine that can overflow: its trap handler and its guard page.
#[derive(Clone, Copy)]
pub(crate) struct Guarded {
    trap: CoroutineTrapHandler<Ended>,
    /// `[start, end)` of the guard page below its stack.
    guard: (usize, usize),
}

impl Guarded {
    /// The coroutine whose trap handler is `trap`, made on a stack whose `limit` was
    /// `stack_limit` (read before the stack moved into the coroutine).
    pub(crate) fn new(stack_limit: usize, trap: CoroutineTrapHandler<Ended>) -> Guarded {
        // corosensei's `DefaultStack` maps one guard page at the bottom of its mapping, which is
        // its `limit`.
        Guarded {
            trap,
            guard: (stack_limit, stack_limit + page_size()),
        }
    }
}

std::thread_local! {
    /// The innermost coroutine running on this OS thread, for the signal handler.
    static RUNNING: Cell<Option<Guarded>> = const { Cell::new(None) };
    /// This OS thread's block runner, between blocks.
    static RUNNER: Cell<Option<KeptRunner>> = const { Cell::new(None) };
    /// This OS thread's stack for the executor's own steps ([`on_step_stack`]), between steps.
    static STEP_STACK: Cell<Option<DefaultStack>> = const { Cell::new(None) };
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// A new coroutine stack of `bytes` usable bytes (rounded up to pages) and a guard page.
///
/// # Panics
/// If it cannot be mapped (the message says what to change).
pub(crate) fn new_stack(bytes: usize) -> DefaultStack {
    DefaultStack::new(bytes).unwrap_or_else(|error| {
        panic!(
            "cannot map a {bytes}-byte stack for a simulated thread: {error}. Each thread of a \
             cooperative block has its own stack (two memory mappings); with many cores and \
             1024-thread blocks, raise `vm.max_map_count`, use smaller blocks or stacks, or fewer \
             executor threads (RAYON_NUM_THREADS)"
        )
    })
}

/// The stack [`on_step_stack`] runs the executor's steps on: virtual memory, of which a step
/// commits only the pages it touches.
const STEP_STACK_BYTES: usize = 8 << 20;

/// Runs `step`, a part of the executor's own work that a simulated thread reaches (a warp's
/// tensor-core product, with all 32 lanes' operands and accumulators), on a stack of this OS
/// thread's, not on the simulated thread's `stack_bytes`: those are the kernel's. In a debug
/// build such a step's frames came to most of the default 256 KiB, so a kernel whose own frames
/// were deep overflowed *inside* the step, where the overflow's stop (which runs no destructors)
/// left a thread-local `RefCell` borrowed and every later block on that OS thread failed. A panic
/// in `step` propagates. Nested calls (and Miri, which cannot switch stacks) run `step` in place.
#[inline]
pub(crate) fn on_step_stack<R>(step: impl FnOnce() -> R) -> R {
    if cfg!(miri) {
        return step();
    }
    let Some(mut stack) = STEP_STACK.take().or_else(|| {
        // Only the outermost call makes one: a nested call finds the stack taken and runs in
        // place (on the step stack already).
        (!ON_STEP_STACK.get()).then(|| new_stack(STEP_STACK_BYTES))
    }) else {
        return step();
    };
    ON_STEP_STACK.set(true);
    // A panic in `step` unwinds out of `on_stack` with the stack dropped (unmapped); the next
    // step maps a new one.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            ON_STEP_STACK.set(false);
        }
    }
    let _leave = Leave;
    let result = on_stack(&mut stack, step);
    STEP_STACK.set(Some(stack));
    result
}

std::thread_local! {
    /// Whether this OS thread runs on its step stack now.
    static ON_STEP_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `resume`, which resumes the coroutine `guarded` describes, with that coroutine marked as
/// the innermost one running on this OS thread, so that an overflow of its stack makes it return
/// [`Ended::Overflowed`].
#[inline]
pub(crate) fn resuming<R>(guarded: Guarded, resume: impl FnOnce() -> R) -> R {
    struct Restore(Option<Guarded>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RUNNING.set(self.0);
        }
    }
    let _restore = Restore(RUNNING.replace(Some(guarded)));
    resume()
}

/// A block runner: a coroutine that runs one block's body per resume, then yields, so that a
/// block costs two stack switches, not a new coroutine. Its input is the body, lifetime erased.
type Runner = Coroutine<*const (dyn Fn() + 'static), (), Ended, DefaultStack>;

/// A runner with the size of its stack and its guard.
struct KeptRunner {
    stack_bytes: usize,
    runner: Runner,
    guarded: Guarded,
}

fn new_runner(stack_bytes: usize) -> KeptRunner {
    let stack = new_stack(stack_bytes);
    let stack_limit = stack.limit().get();
    let runner = Runner::with_stack(stack, |yielder, mut body| loop {
        // SAFETY: `on_guarded_stack` passes a body that outlives this resume, and resumes the
        // runner again only with the next one.
        unsafe { (*body)() };
        body = yielder.suspend(());
    });
    let guarded = Guarded::new(stack_limit, runner.trap_handler());
    KeptRunner {
        stack_bytes,
        runner,
        guarded,
    }
}

/// Runs `body` on a guarded stack of `stack_bytes` (the block's runner): [`Ended::Overflowed`]
/// if the stack overflowed while `body` itself (not a coroutine it resumed) was running on it.
/// A panic in `body` propagates.
pub(crate) fn on_guarded_stack(stack_bytes: usize, body: &dyn Fn()) -> Ended {
    if cfg!(miri) {
        // Miri can neither switch stacks nor install signal handlers; it reports an overflow
        // itself. (Cooperative blocks still need coroutines, which it cannot run.)
        body();
        return Ended::Returned;
    }
    handler::install();
    let mut kept = RUNNER
        .take()
        .filter(|kept| kept.stack_bytes == stack_bytes)
        .unwrap_or_else(|| new_runner(stack_bytes));
    // SAFETY: only the lifetime is erased: the runner calls `body` during this resume only, and
    // this function returns after the resume has (yielded, trapped or panicked).
    let body: *const (dyn Fn() + 'static) =
        unsafe { core::mem::transmute::<&dyn Fn(), &'static dyn Fn()>(body) };
    let guarded = kept.guarded;
    let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
        resuming(guarded, || kept.runner.resume(body))
    }));
    match outcome {
        Ok(CoroutineResult::Yield(())) => {
            RUNNER.set(Some(kept));
            Ended::Returned
        }
        // The trap reset and ended the runner; the next block gets a new one. A panic unwound
        // it out of its stack.
        Ok(CoroutineResult::Return(ended)) => ended,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod handler {
    //! The SIGSEGV handler (x86-64 Linux: the registers corosensei's trap return needs).

    use super::{Ended, RUNNING};
    use core::cell::Cell;
    use core::mem::MaybeUninit;
    use corosensei::trap::TrapHandlerRegs;
    use std::sync::{Once, OnceLock};

    /// The SIGSEGV action before ours, for faults that are not a simulated thread's overflow
    /// (read in the handler: `OnceLock::get` is an atomic load).
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    /// Bytes of this crate's alternate signal stacks (the handler needs well under a page).
    const ALT_STACK_BYTES: usize = 64 * 1024;

    /// An alternate signal stack this crate installed on an OS thread that had none; removed
    /// and unmapped when the thread ends.
    struct AltStack(*mut libc::c_void);

    impl Drop for AltStack {
        fn drop(&mut self) {
            let disable = libc::stack_t {
                ss_sp: core::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            // SAFETY: this thread's own alternate stack, mapped in `ensure_alt_stack`; it is
            // disabled before it is unmapped, and no handler runs on it now (we are in a thread
            // destructor, not a signal handler).
            unsafe {
                libc::sigaltstack(&disable, core::ptr::null_mut());
                libc::munmap(self.0, ALT_STACK_BYTES);
            }
        }
    }

    std::thread_local! {
        static ALT_STACK_CHECKED: Cell<bool> = const { Cell::new(false) };
        static OWN_ALT_STACK: Cell<Option<AltStack>> = const { Cell::new(None) };
    }

    /// Installs the handler once per process, and makes sure this OS thread has an alternate
    /// signal stack (Rust gives its threads one; a thread made otherwise may lack it).
    pub(super) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: zeroed sigactions are valid; the first call only reads the current action,
            // kept before ours replaces it.
            unsafe {
                let mut previous: libc::sigaction = core::mem::zeroed();
                libc::sigaction(libc::SIGSEGV, core::ptr::null(), &mut previous);
                let _ = PREVIOUS.set(previous);
                let mut action: libc::sigaction = core::mem::zeroed();
                let handler: unsafe extern "C" fn(_, _, _) = on_fault;
                action.sa_sigaction = handler as libc::sighandler_t;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(libc::SIGSEGV, &action, core::ptr::null_mut());
            }
        });
        if !ALT_STACK_CHECKED.get() {
            ALT_STACK_CHECKED.set(true);
            ensure_alt_stack();
        }
    }

    fn ensure_alt_stack() {
        let mut current = MaybeUninit::<libc::stack_t>::uninit();
        // SAFETY: queries this thread's alternate stack into `current`.
        let has_one = unsafe {
            libc::sigaltstack(core::ptr::null(), current.as_mut_ptr()) == 0
                && current.assume_init().ss_flags & libc::SS_DISABLE == 0
        };
        if has_one {
            return;
        }
        // SAFETY: a fresh anonymous mapping; checked below.
        let at = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                ALT_STACK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return; // An overflow then ends the process, as without this module.
        }
        let stack = libc::stack_t {
            ss_sp: at,
            ss_flags: 0,
            ss_size: ALT_STACK_BYTES,
        };
        // SAFETY: `at` is a mapping of `ALT_STACK_BYTES` that lives until this thread ends
        // (`AltStack` disables it first).
        unsafe { libc::sigaltstack(&stack, core::ptr::null_mut()) };
        OWN_ALT_STACK.set(Some(AltStack(at)));
    }

    /// The SIGSEGV handler: a fault in the guard page of the innermost coroutine of this OS
    /// thread makes that coroutine return `Ended::Overflowed`; anything else goes on to the
    /// previous handler.
    unsafe extern "C" fn on_fault(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // A const-initialised thread-local without destructor: a plain TLS load, safe here.
        let running = RUNNING.try_with(Cell::get).ok().flatten();
        let context = context.cast::<libc::ucontext_t>();
        if let Some(guarded) = running {
            // SAFETY: the kernel hands a SA_SIGINFO handler a valid siginfo and ucontext.
            let (fault, sp) = unsafe {
                (
                    (*info).si_addr() as usize,
                    (*context).uc_mcontext.gregs[libc::REG_RSP as usize] as usize,
                )
            };
            let (start, end) = guarded.guard;
            if (start..end).contains(&fault) && guarded.trap.stack_ptr_in_bounds(sp) {
                // SAFETY: the fault is in the guard page of the coroutine running on this
                // thread (checked above, and `RUNNING` names a coroutine only while it is being
                // resumed, so it is alive), with the stack pointer inside it, as
                // `setup_trap_handler` requires; the registers it returns are written into the
                // interrupted context below, as it also requires. The discarded frames are
                // simulated-thread code, whose writes outside its stack the executor does not
                // read back after an overflow (the block is abandoned).
                let regs = unsafe { guarded.trap.setup_trap_handler(|| Ended::Overflowed) };
                let TrapHandlerRegs {
                    rip,
                    rsp,
                    rbp,
                    rdi,
                    rsi,
                } = regs;
                // SAFETY: as above, the interrupted context of this very fault.
                unsafe {
                    let gregs = &mut (*context).uc_mcontext.gregs;
                    gregs[libc::REG_RIP as usize] = rip as i64;
                    gregs[libc::REG_RSP as usize] = rsp as i64;
                    gregs[libc::REG_RBP as usize] = rbp as i64;
                    gregs[libc::REG_RDI as usize] = rdi as i64;
                    gregs[libc::REG_RSI as usize] = rsi as i64;
                }
                return;
            }
        }
        // SAFETY: the previous handler is called as the kind its flags say, with this fault's
        // arguments.
        unsafe { chain(signal, info, context.cast()) }
    }

    /// Hands the fault to the handler installed before ours, or restores the default action and
    /// returns, so that the faulting instruction runs again and ends the process as it would
    /// have without us.
    unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        let handler = PREVIOUS.get().map_or(libc::SIG_DFL, |p| p.sa_sigaction);
        let siginfo = PREVIOUS
            .get()
            .is_some_and(|p| p.sa_flags & libc::SA_SIGINFO != 0);
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // SAFETY: a zeroed sigaction with SIG_DFL is the default action.
            unsafe {
                let mut default: libc::sigaction = core::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, core::ptr::null_mut());
            }
        } else if siginfo {
            // SAFETY: a SA_SIGINFO handler has this signature.
            let handler: unsafe extern "C" fn(
                libc::c_int,
                *mut libc::siginfo_t,
                *mut libc::c_void,
            ) = unsafe { core::mem::transmute(handler) };
            unsafe { handler(signal, info, context) };
        } else {
            // SAFETY: a plain handler has this signature.
            let handler: unsafe extern "C" fn(libc::c_int) =
                unsafe { core::mem::transmute(handler) };
            unsafe { handler(signal) };
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
mod handler {
    /// No handler on this platform: an overflow ends the process.
    pub(super) fn install() {}
}
