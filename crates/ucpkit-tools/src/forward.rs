//! The agent sandbox's network: connections carried between a local
//! address inside (where the agent's network namespace has only
//! loopback) and a Unix socket to the outside, and from that socket to
//! the one host and port it stands for.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

use crate::confine::Endpoint;

/// Most connections one forwarder carries at once (each is two threads).
const MAX_CONNECTIONS: usize = 64;

/// Outside: each connection to `listener` is carried to `target`, at most
/// [`MAX_CONNECTIONS`] at once (more are closed at once).
pub(crate) fn forward_out(listener: UnixListener, target: Endpoint) {
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for stream in listener.incoming().flatten() {
        if open.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            continue;
        }
        let (target, carrying) = (target.clone(), open.clone());
        // Where no thread can start, the connection is closed (the
        // closure drops it): its client sees the refusal.
        let started = std::thread::Builder::new().spawn(move || {
            match TcpStream::connect((target.host.as_str(), target.port)) {
                Ok(remote) => carry(stream, remote),
                Err(_) => drop(stream),
            }
            carrying.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
        if started.is_err() {
            open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// Inside: each connection to `listener` is carried to the outside
/// forwarder at `socket`.
pub(crate) fn forward_in(listener: TcpListener, socket: PathBuf) {
    for stream in listener.incoming().flatten() {
        let socket = socket.clone();
        // Where no thread can start, the connection is closed.
        let _ = std::thread::Builder::new().spawn(move || {
            if let Ok(outside) = UnixStream::connect(&socket) {
                carry(stream, outside);
            }
        });
    }
}

/// A stream that can be closed for writing.
trait HalfClose: Read + Write + Send + 'static {
    fn close_write(&self);
    fn twin(&self) -> std::io::Result<Self>
    where
        Self: Sized;
}

impl HalfClose for TcpStream {
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn twin(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
}

impl HalfClose for UnixStream {
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn twin(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
}

/// Copies both ways between `a` and `b` until both sides close.
fn carry<A: HalfClose, B: HalfClose>(a: A, b: B) {
    let (Ok(mut a_read), Ok(mut b_read)) = (a.twin(), b.twin()) else { return };
    let (mut a_write, mut b_write) = (a, b);
    // Where no thread can start, both streams close (the failed closure
    // drops its halves).
    let Ok(upstream) = std::thread::Builder::new().spawn(move || {
        let _ = std::io::copy(&mut a_read, &mut b_write);
        b_write.close_write();
    }) else {
        return;
    };
    let _ = std::io::copy(&mut b_read, &mut a_write);
    a_write.close_write();
    let _ = upstream.join();
}
