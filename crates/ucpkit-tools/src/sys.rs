//! System calls made between fork and exec (by a command's keeper and by
//! the command): plain calls on memory prepared before the fork, with no
//! allocation and no lock.

use std::ffi::CStr;

/// A system call's result as an error when it is negative.
pub(crate) fn check(result: i32) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `text` to a `/proc` file with raw system calls.
pub(crate) fn write_proc(path: &CStr, text: &CStr) -> std::io::Result<()> {
    // SAFETY: both pointers are valid NUL-terminated strings; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    let bytes = text.to_bytes();
    // SAFETY: `bytes` is valid for its length.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let failed = (written < 0).then(std::io::Error::last_os_error);
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    failed.map_or(Ok(()), Err)
}

/// Whether the folder the calling process is in is the one `handle` is
/// on (same device and inode).
pub(crate) fn in_folder(handle: std::os::fd::RawFd) -> std::io::Result<bool> {
    // SAFETY: both buffers are valid, zeroed `stat`s; "." is a valid path.
    let (mut here, mut there): (libc::stat, libc::stat) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    check(unsafe { libc::stat(c".".as_ptr(), &mut here) })?;
    check(unsafe { libc::fstat(handle, &mut there) })?;
    Ok((here.st_dev, here.st_ino) == (there.st_dev, there.st_ino))
}
