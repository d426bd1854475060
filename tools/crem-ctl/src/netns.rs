//! `-n NETNS`: run in another network namespace, as `ip -n` does.

use crate::Fail;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Where `ip netns add NAME` puts a namespace.
const NETNS_RUN_DIR: &str = "/run/netns";

/// Joins the network namespace @name: a name under /run/netns, or a path
/// (anything with a '/', e.g. /proc/PID/ns/net). Before any socket is
/// opened: a socket stays in the namespace it was made in.
pub fn enter(name: &str) -> Result<(), Fail> {
    let path = if name.contains('/') {
        name.to_string()
    } else {
        format!("{NETNS_RUN_DIR}/{name}")
    };
    let f = File::open(&path)
        .map_err(|e| Fail::Usage(format!("network namespace \"{name}\": {path}: {e}")))?;
    // SAFETY: a valid open fd; setns changes only this (single-threaded)
    // process's namespace.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        let msg = format!("network namespace \"{name}\": setns: {e}");
        return Err(if e.kind() == io::ErrorKind::PermissionDenied {
            Fail::Denied(msg)
        } else {
            Fail::Usage(msg)
        });
    }
    Ok(())
}
