# Shared settings for the vm/ scripts (sourced, not run).
say() { printf '[crem] %s\n' "$*" >&2; }
die() { printf '[crem] error: %s\n' "$*" >&2; exit 1; }

CREM_CACHE=${CREM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crem}
BINDGEN=${BINDGEN:-$HOME/.cargo/bin/bindgen}
KSRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
# The kernel's Rust must be Debian's 1.85: keep the rustup toolchain out of its way.
KMAKE_ENV=(env PATH=/usr/bin:/bin:/usr/sbin:/sbin:$HOME/.cargo/bin)
KMAKE_ARGS=(LLVM=1 RUSTC=/usr/bin/rustc BINDGEN="$BINDGEN")

# kernel_version: the packaged source's version, e.g. 6.12.117-1~deb12u1
kernel_pkg_version() { dpkg-query -W -f='${Version}' linux-source-6.12; }

# kernel_key VARIANT: cache key over everything the built kernel depends on.
kernel_key() {
  local variant=$1 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  {
    kernel_pkg_version
    /usr/bin/rustc --version
    "$BINDGEN" --version 2>/dev/null
    clang --version | head -1
    cat "$here/kernel.config"
    [ "$variant" = debug ] && cat "$here/kernel-debug.config"
    cat "$here/build-kernel.sh"
    kernel_patch_text
  } | sha256sum | cut -c1-16
}

# kernel_patches: the fixes the test kernels carry on top of the packaged
# source (vm/kernel-patches/*.patch, applied in name order at extraction).
kernel_patches() {
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  find "$here/kernel-patches" -maxdepth 1 -name '*.patch' 2>/dev/null | LC_ALL=C sort
}
kernel_patch_text() { kernel_patches | xargs -r cat; }

# kernel_dir VARIANT: the build (O=) directory of that variant.
kernel_dir() { echo "$CREM_CACHE/kernel-$1-$(kernel_key "$1")"; }
# The source tree is per patch set: a patched tree never passes for the
# packaged one, or the other way round.
kernel_src() {
  echo "$CREM_CACHE/src-$(kernel_pkg_version | tr '~' '_')-p$(kernel_patch_text | sha256sum | cut -c1-8)"
}

# kvm_usable: "yes" if a probe boot under KVM works here, else "no". KVM is
# present but broken on some of these machines, so it is opt-in by proof; the
# answer is cached per kernel. CREM_KVM=0/1 overrides.
# host_tsc_khz: the host's TSC frequency in kHz if it is constant and known
# (the kernel's "tsc: Detected N MHz", else /proc/cpuinfo's cpu MHz when
# the CPU says constant_tsc and tsc_known_freq), else nothing.
host_tsc_khz() {
  local mhz
  grep -qw constant_tsc /proc/cpuinfo || return 0
  mhz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -1)
  if [ -z "$mhz" ] && grep -qw tsc_known_freq /proc/cpuinfo; then
    mhz=$(sed -n 's/^cpu MHz[[:space:]]*: \([0-9.]*\)/\1/p' /proc/cpuinfo | head -1)
  fi
  [ -n "$mhz" ] && awk -v m="$mhz" 'BEGIN { printf "%d\n", m * 1000 }'
}

kvm_usable() {
  case "${CREM_KVM:-}" in 0) echo no; return ;; 1) echo yes; return ;; esac
  local kdir stamp
  kdir=$(kernel_dir normal); stamp=$kdir/.kvm-probe
  if [ ! -f "$stamp" ]; then
    if [ -w /dev/kvm ] && timeout -k 2 20 qemu-system-x86_64 -enable-kvm -cpu host -m 256 \
         -nographic -no-reboot -kernel "$kdir/arch/x86/boot/bzImage" \
         -append "console=ttyS0 panic=-1 init=/nonexistent" </dev/null 2>/dev/null \
         | grep -q 'Kernel panic\|No working init'; then
      echo yes >"$stamp"
    else
      echo no >"$stamp"
    fi
  fi
  cat "$stamp"
}

# kernel_reports FILE...: print the files (console logs) that hold a kernel
# report: a splat, KASAN, lockdep or kmemleak finding. Status 0 if any does.
KERNEL_REPORT_RE='BUG:|WARNING:|Oops|KASAN|kmemleak: [1-9][0-9]* new suspected|possible circular locking|inconsistent lock state|sleeping function called|skb_under_panic|Kernel panic'
kernel_reports() { grep -lE "$KERNEL_REPORT_RE" "$@" 2>/dev/null; }

# The VMs' links are QEMU UDP sockets on loopback. Under TCG a guest drains
# its virtio ring in bursts, and QEMU stops reading a socket while the ring
# is full: with Linux's default 208 KiB receive buffer the host kernel then
# dropped what a link carried (7,069 datagrams in one loss-free NVMe write
# run, rcvd_seq_err and RDMA retries with netem dropping nothing). Those are
# losses no netem setting asked for, on links CREM does not cover.
# HOST_UDP_RMEM is the receive buffer QEMU's sockets get (the default for
# new sockets: QEMU sets none of its own); host_udp_drops reads the host's
# UDP receive-buffer drop counter, which topo.sh reports per run.
HOST_UDP_RMEM=${HOST_UDP_RMEM:-8388608}
host_udp_buffers() {
  local cur
  cur=$(cat /proc/sys/net/core/rmem_default)
  [ "$cur" -ge "$HOST_UDP_RMEM" ] && return 0
  # Host-wide and left so (every later VM run needs it too).
  if echo "$HOST_UDP_RMEM" 2>/dev/null >/proc/sys/net/core/rmem_default; then
    say "net.core.rmem_default $cur -> $HOST_UDP_RMEM (the VM links' sockets; left so)"
  else
    say "warning: net.core.rmem_default is $cur and not writable here: the VM links may drop datagrams under load (see host_udp_drops)"
  fi
}
host_udp_drops() { awk '/^Udp:/ { v = $6 } END { print v + 0 }' /proc/net/snmp; }
