//! The terminal as a guarded resource.
//!
//! [`Guard::enter`] turns on raw mode, the alternate screen, bracketed paste and (only when
//! asked) mouse capture, recording each mode in process-wide flags. [`restore`] undoes
//! exactly the recorded modes in reverse order, and runs from `Drop`, from the panic hook,
//! on SIGTERM / SIGHUP (the event loop quits and the guard drops) and before suspending.
//!
//! The panic hook restores the terminal only when the panicking thread is the UI thread: a
//! panic on a worker thread must not tear the terminal down under a UI that keeps running
//! (the worker's channel closes and the UI reports it). Its message is kept for the status
//! line instead of being printed over the screen.
//!
//! What the process cannot see (SIGKILL, an abort) is covered by a guardian process
//! ([`super::guardian`]), told when the modes are on and off, which restores the terminal if
//! the TUI dies with them on.
//!
//! Ctrl-Z arrives as a key (raw mode turns ISIG off): [`Guard::suspend`] restores the
//! terminal and stops the process with SIGSTOP (a self-sent SIGTSTP can be discarded for an
//! orphaned process group); when the shell continues it, the modes are entered again and
//! the caller repaints everything.

use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::ThreadId;

use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};

static RAW: AtomicBool = AtomicBool::new(false);
static ALT: AtomicBool = AtomicBool::new(false);
static PASTE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);
static UI_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);
static WORKER_PANIC: Mutex<Option<String>> = Mutex::new(None);
static GUARDIAN: Mutex<Option<super::guardian::Guardian>> = Mutex::new(None);

/// Tells the guardian, if there is one, whether the modes are on. Never waits for the lock:
/// this runs from the panic hook too.
fn tell_guardian(on: bool) {
    if let Ok(mut g) = GUARDIAN.try_lock()
        && let Some(g) = g.as_mut()
    {
        g.modes(on);
    }
}

/// Undoes every recorded terminal mode, in reverse order. Idempotent.
pub fn restore() {
    let mut out = io::stdout();
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    if PASTE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableBracketedPaste);
    }
    if ALT.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, LeaveAlternateScreen);
    }
    let _ = execute!(out, cursor::Show);
    if RAW.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
    }
    let _ = out.flush();
    tell_guardian(false);
}

/// A panic message from a non-UI thread, taken once (shown in the status line).
pub fn take_worker_panic() -> Option<String> {
    WORKER_PANIC.lock().ok().and_then(|mut g| g.take())
}

/// Installs the panic hook (once per process; later calls only re-register the UI thread).
pub fn install_panic_hook() {
    if let Ok(mut g) = UI_THREAD.lock() {
        let first = g.is_none();
        *g = Some(std::thread::current().id());
        if !first {
            return;
        }
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_ui = UI_THREAD
            .lock()
            .ok()
            .and_then(|g| *g)
            .is_some_and(|id| id == std::thread::current().id());
        if on_ui || !ALT.load(Ordering::SeqCst) {
            restore();
            previous(info);
        } else if let Ok(mut g) = WORKER_PANIC.lock() {
            *g = Some(format!("internal error in a background thread: {info}"));
        }
    }));
}

/// The terminal modes of a running TUI; restores them when dropped.
pub struct Guard {
    mouse: bool,
}

impl Guard {
    /// Enters raw mode and the alternate screen (plus mouse capture when `mouse`).
    pub fn enter(mouse: bool) -> io::Result<Guard> {
        install_panic_hook();
        // Started before the terminal changes: it reads the settings to restore.
        if let Ok(mut g) = GUARDIAN.lock()
            && g.is_none()
        {
            *g = super::guardian::Guardian::spawn();
        }
        let g = Guard { mouse };
        g.modes_on()?;
        Ok(g)
    }

    fn modes_on(&self) -> io::Result<()> {
        tell_guardian(true);
        enable_raw_mode()?;
        RAW.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        execute!(out, EnterAlternateScreen)?;
        ALT.store(true, Ordering::SeqCst);
        execute!(out, EnableBracketedPaste)?;
        PASTE.store(true, Ordering::SeqCst);
        if self.mouse {
            execute!(out, EnableMouseCapture)?;
            MOUSE.store(true, Ordering::SeqCst);
        }
        execute!(out, cursor::Hide)?;
        Ok(())
    }

    /// Turns mouse capture on or off.
    pub fn set_mouse(&mut self, on: bool) -> io::Result<()> {
        self.mouse = on;
        let mut out = io::stdout();
        if on {
            execute!(out, EnableMouseCapture)?;
        } else {
            execute!(out, DisableMouseCapture)?;
        }
        MOUSE.store(on, Ordering::SeqCst);
        Ok(())
    }

    /// Restores the terminal, stops the process until the shell continues it, then enters
    /// the modes again. The caller must clear and repaint.
    pub fn suspend(&mut self) -> io::Result<()> {
        restore();
        signal_hook::low_level::raise(signal_hook::consts::SIGSTOP)?;
        self.modes_on()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
        if let Some(g) = GUARDIAN.lock().ok().and_then(|mut g| g.take()) {
            g.finish();
        }
    }
}
