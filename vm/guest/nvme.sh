# Sourced by host.sh: NVMe over Fabrics (RDMA) across the WAN, the storage
# workload of the users CREM is for. Host b exports a RAM disk (brd, sized on
# the kernel command line by run-vm.sh) through nvmet-rdma on rxe; host a
# connects with nvme-cli and runs fio against it with data verification.
#
# A fio test is named fio_RW_BS_qdN (fio_write_128k_qd8, fio_randread_4k_qd16):
# fio's rw= (write, read, randwrite, randread), block size and queue depth,
# against the first $fio_mib MiB of the namespace (random ones $fio_rand_ios
# I/Os). Writes are read back and checked (do_verify); reads check what they
# read against the crc32c header fio wrote in every 4 KiB block, so every
# test verifies its data (verify_fatal: one bad block fails the transfer).
# Host b fills the disk that way before it exports it, so a read test needs
# no write before it. NVMe writes travel as the target's RDMA READs, NVMe
# reads as its RDMA WRITEs: both directions of the WAN carry the payload.
NVME_NQN=nqn.2014-08.org.example:crem-ram0
NVME_PORT=4420
fio_mib=${arg_fio_mib:-32} fio_rand_ios=${arg_fio_rand_ios:-1024}

# fio_common: what every fio run here shares (the verification format).
fio_common() {
  echo "--direct=1 --ioengine=libaio --verify=crc32c --verify_interval=4096 --verify_state_save=0" \
    "--verify_fatal=1 --size=${fio_mib}M --output-format=json"
}

# nvmet_export: host b's target (configfs), after filling the disk locally.
nvmet_export() {
  local cfs=/sys/kernel/config nv sub port
  mountpoint -q $cfs || mount -t configfs none $cfs || return 1
  [ -b /dev/ram0 ] || { log "no /dev/ram0 (brd)"; return 1; }
  # shellcheck disable=SC2046
  fio --name=fill --filename=/dev/ram0 --rw=write --bs=1M --do_verify=0 \
    $(fio_common) >/tmp/fill.json || { log "filling /dev/ram0 failed"; return 1; }
  nv=$cfs/nvmet sub=$cfs/nvmet/subsystems/$NVME_NQN port=$cfs/nvmet/ports/1
  mkdir $sub && echo 1 >$sub/attr_allow_any_host && mkdir $sub/namespaces/1 \
    && echo /dev/ram0 >$sub/namespaces/1/device_path && echo 1 >$sub/namespaces/1/enable \
    && mkdir $port && echo rdma >$port/addr_trtype && echo $adrfam >$port/addr_adrfam \
    && echo "$rme" >$port/addr_traddr && echo $NVME_PORT >$port/addr_trsvcid \
    && ln -s $sub $port/subsystems/$NVME_NQN || { log "nvmet configfs set-up failed"; return 1; }
  log "nvmet-rdma: $NVME_NQN on $rme:$NVME_PORT, /dev/ram0 ($(($(cat /sys/block/ram0/size) / 2048)) MiB, first $fio_mib MiB filled)"
}

# nvmet_unexport: host b's teardown (the port first: no new connections).
nvmet_unexport() {
  local nv=/sys/kernel/config/nvmet
  [ -d $nv/ports/1 ] || return 0
  rm -f $nv/ports/1/subsystems/$NVME_NQN; rmdir $nv/ports/1
  echo 0 >$nv/subsystems/$NVME_NQN/namespaces/1/enable
  rmdir $nv/subsystems/$NVME_NQN/namespaces/1 $nv/subsystems/$NVME_NQN
}

# nvme_dev: host a's namespace block device once connected (or nothing).
nvme_dev() {
  local d
  for d in /sys/class/nvme/nvme*; do
    [ -e "$d" ] && grep -qx "$NVME_NQN" "$d/subsysnqn" 2>/dev/null || continue
    ls -d "$d"/nvme*n1 2>/dev/null | head -1 | sed 's|.*/|/dev/|'
    return 0
  done
}

# nvme_ctrl: host a's controller (nvme0) once connected (or nothing).
nvme_ctrl() { local d; d=$(nvme_dev); d=${d#/dev/}; echo "${d%n1}"; }

# nvme_attach: host a connects (once, before its first fio test) and logs
# how long that took.
nvme_attach() {
  local t0 i=0
  [ -n "$(nvme_dev)" ] && return 0
  t0=$(now_ns)
  # Recoveries keep the kernel's 10 s reconnect delay (what an operator
  # gets), but a controller lost for longer than a transfer's timeout is
  # given up, so that no test waits on the previous one's for minutes.
  nvme connect -t rdma -a "$rpeer" -s $NVME_PORT -n $NVME_NQN --ctrl-loss-tmo="$tmo" \
    >/tmp/nvme-connect.log 2>&1 \
    || { log "nvme connect failed: $(tail -1 /tmp/nvme-connect.log)"; return 1; }
  while [ -z "$(nvme_dev)" ] || [ ! -b "$(nvme_dev)" ]; do
    i=$((i + 1)); [ $i -gt 300 ] && { log "no namespace after nvme connect"; return 1; }
    sleep 0.1
  done
  log "nvme connect: $(nvme_dev) in $(( ($(now_ns) - t0) / 1000000 )) ms"
}

# nvme_live: wait (at most the transfer timeout) until host a's controller
# is live again after a recovery; status 1 if it is not.
nvme_live() {
  local c i=0
  c=$(nvme_ctrl)
  [ -n "$c" ] || return 1
  while [ "$(cat /sys/class/nvme/$c/state 2>/dev/null)" != live ]; do
    i=$((i + 1)); [ $i -gt $((tmo * 10)) ] && { log "$c not live: $(cat /sys/class/nvme/$c/state)"; return 1; }
    sleep 0.1
  done
}

nvme_detach() {
  [ -n "$(nvme_dev)" ] || return 0
  nvme disconnect -n $NVME_NQN >/dev/null 2>&1 || log "nvme disconnect failed"
}

# fio_run TEST JSON: run fio test TEST (fio_RW_BS_qdN) against the namespace,
# its JSON report to JSON; fio's exit status.
fio_run() {
  local spec rw bs qd amount
  spec=${1#fio_}; rw=${spec%%_*}; spec=${spec#*_}; bs=${spec%%_*}; qd=${spec#*_qd}
  case $rw in write|read) amount= ;; randwrite|randread) amount="--number_ios=$fio_rand_ios" ;;
    *) log "$1: unknown fio rw $rw"; return 2 ;; esac
  # shellcheck disable=SC2046
  # -k: fio waits for its in-flight I/O after SIGTERM.
  timeout -k 10 "$tmo" fio --name="$1" --filename="$(nvme_dev)" --rw="$rw" --bs="$bs" \
    --iodepth="$qd" $amount $(fio_common) >"$2" 2>/tmp/fio.err
  local rc=$?
  [ -s /tmp/fio.err ] && cat /tmp/fio.err >>"$2.err"
  return $rc
}

# nvme_recoveries: how often host a's NVMe controller has gone into error
# recovery so far (a QP in error, a keep-alive or I/O timeout: it
# reconnects after 10 s), from the kernel log.
nvme_recoveries() { dmesg | grep -c 'nvme nvme[0-9]*: starting error recovery'; }
