# CREM for Linux. `make help` lists the targets.
SHELL := /bin/bash
KDIR ?= $(shell vm/kdir.sh normal)
KDIR_DEBUG ?= $(shell vm/kdir.sh debug)
BUILD ?= $(CURDIR)/build
# The kernel's Rust is Debian's rustc 1.85, never the rustup toolchain on PATH.
KMAKE = PATH=/usr/bin:/bin:/usr/sbin:/sbin:$$HOME/.cargo/bin $(MAKE) LLVM=1 \
	RUSTC=/usr/bin/rustc BINDGEN=$$HOME/.cargo/bin/bindgen
MODULE_SRCS = Kbuild include rust/crem_main.rs rust/acks.rs rust/addr.rs rust/backlog.rs rust/collector.rs rust/config.rs rust/create.rs rust/dispatch.rs rust/ffi.rs rust/engine.rs rust/events.rs rust/flow.rs rust/flow_info.rs rust/device.rs rust/hook.rs rust/hook_points.rs \
	rust/host.rs rust/inject.rs rust/intercept.rs rust/netns.rs rust/pool.rs rust/removal.rs rust/report.rs rust/netlink rust/socket.rs rust/gf.rs rust/store.rs rust/table.rs rust/trace.rs rust/workspace.rs \
	rust/kernel_ext \
	rust/helpers netlink rust/core/src kunit

.PHONY: all module module-kunit module-debug setup kernel kernel-debug check \
	check-debug check-debug-all check-full check-flows demo demo-full fuzz fuzz-kernel bench bench-gf connects clean help netlink-gen \
	install install-module install-tools uninstall uninstall-module uninstall-tools \
	check-install ctl-release

all: module

help:
	@echo "make setup        install packages, bindgen, build the cached test kernel"
	@echo "make              build crem.ko against KDIR (default: the cached kernel)"
	@echo "make check        every test: cargo fmt/clippy/test, module, KUnit and e2e in QEMU"
	@echo "make check-debug  KUnit and e2e on the debug kernel (KASAN, lockdep, kmemleak)"
	@echo "make check-debug-all  every in-VM step on the debug kernel"
	@echo "make check-full   make check, the longer cases and every debug-kernel step"
	@echo "make demo         RDMA over the emulated lossy long link, with and without CREM"
	@echo "make demo-full    the grid: workloads (perftest, NVMe-oF/fio, 8 QPs) x loss x RTT"
	@echo "                  x mode (gateway and host), 3 trials each (hours; README)"
	@echo "make fuzz         run every fuzz target for FUZZ_SECONDS (default 30) each"
	@echo "make fuzz-kernel  fuzz crem.ko in a debug-kernel VM: CREM datagrams and genetlink"
	@echo "                  for FUZZ_KERNEL_SECONDS (default 120; FUZZ_SEED= replays)"
	@echo "make bench        crem-core benchmarks (GF(2^8), coding)"
	@echo "make bench-gf     crem's encoder/decoder against ISA-L (libisal), cell by cell"
	@echo "make connects     RDMA CM connection failures per 100, with and without CREM"
	@echo "                  (CONNECTS_TRIALS, default 15; CONNECTS_LOSS, default 0)"
	@echo "make install      crem.ko (modules_install, depmod), crem-ctl, man pages, completions,"
	@echo "                  a sample config and crem@.service; DESTDIR=, PREFIX= (/usr/local)"
	@echo "                  install-module / install-tools: one part; uninstall[-...] undoes"
	@echo "make check-install  install into a temporary DESTDIR and check it, then in a VM"

setup:
	vm/setup.sh

kernel:
	vm/build-kernel.sh normal

kernel-debug:
	vm/build-kernel.sh debug

module:
	@test -f $(KDIR)/Makefile || { echo "no kernel at KDIR=$(KDIR): run 'make setup'"; exit 1; }
	$(KMAKE) -C $(KDIR) M=$(CURDIR) modules

# Variants build in copies of the sources so their objects never mix.
$(BUILD)/%/.synced: FORCE
	@mkdir -p $(@D)
	@rsync -a --relative $(MODULE_SRCS) $(@D)/
	@touch $@

module-kunit: $(BUILD)/kunit/.synced
	$(KMAKE) -C $(KDIR) M=$(BUILD)/kunit CREM_KUNIT=1 modules

module-debug: $(BUILD)/debug/.synced
	$(KMAKE) -C $(KDIR_DEBUG) M=$(BUILD)/debug CREM_KUNIT=1 modules

check:
	vm/check.sh normal

check-debug:
	vm/check.sh debug

check-full:
	vm/check.sh full

# The flows test alone (also a step of `make check`): ~3.5 min.
check-flows: module
	cargo build -p crem-ctl --release
	vm/flows.sh crem.ko target/release/crem-ctl normal

# Every in-VM step on the debug kernel (longer than CI's representative set).
check-debug-all:
	CREM_CHECK_DEBUG_ALL=1 vm/check.sh debug

# The demo needs crem.ko (gateways) and crem-ctl (their configuration).
# Two runs: ib_write_bw and rping in every mode, then the second workload,
# NVMe over Fabrics with fio, without CREM and with fixed k/m (one trial:
# without CREM its writes run into the timeout). DEMO_ARGS goes to both
# (the NVMe run's own settings win over it).
DEMO_NVME_ARGS ?= --workloads nvme --modes off,fixed --trials 1 --fio-mib 16 \
	--fio-rand-ios 256 --timeout 45
demo: module
	cargo build -p crem-ctl --release
	vm/demo.py $(DEMO_ARGS)
	vm/demo.py $(DEMO_ARGS) $(DEMO_NVME_ARGS)

# The grid (issue 19 #5): every workload (ib_write_bw and rping, NVMe over
# Fabrics with fio, 8 queue pairs) x loss (0 and 1 %, the issue's) x RTT x
# mode: without CREM, gateway mode fixed and adaptive, host mode; three
# trials per cell, 16 cells. Selective repeat (sr, both) and other losses
# are make demo's (perftest); DEMO_ARGS adds them. Hours under TCG: see
# README. A transfer's timeout is 150 s: 1024 random 4 KiB reads at queue
# depth 1 take some 57 s at 50 ms loss-free, and the demo's 60 s cut
# two of them off in stop 57's run.
DEMO_FULL_ARGS ?= --workloads perftest,nvme,multiqp --modes off,fixed,adaptive,host \
	--loss 0,1 --rtt 10,50 --trials 3 --timeout 150
# RESUME=results/demo-<stamp>.partial.json goes on with an interrupted grid
# (the same options, the binaries it kept; the cells it holds are not run
# again).
demo-full: module
	cargo build -p crem-ctl --release
	vm/demo.py $(DEMO_FULL_ARGS) $(DEMO_ARGS) $(if $(RESUME),--resume $(RESUME))

fuzz:
	rust/core/fuzz/run.sh $(or $(FUZZ_SECONDS),30)

# The module itself, on the debug kernel (KASAN, lockdep, kmemleak,
# panic_on_warn): vm/fuzz-kernel.sh. Both parts run at once for the time given.
fuzz-kernel: module-debug
	cargo build -p crem-ctl --release
	vm/fuzz-kernel.sh $(or $(FUZZ_KERNEL_SECONDS),120) debug

bench:
	cargo bench -p crem-core

# crem's GF(2^8) coder (the module's code, its backend chosen as at load)
# against ISA-L's ec_encode_data on the same cells; about 30 s. Figures in
# docs/perf.md.
bench-gf:
	cargo run --release -q -p crem-gf-bench

# About 6 min a boot under TCG, two boots per loss.
connects: module
	cargo build -p crem-ctl --release
	vm/connects.sh $(or $(CONNECTS_TRIALS),15) $(or $(CONNECTS_LOSS),0)

clean:
	-$(KMAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD)

FORCE:

netlink-gen:
	netlink/gen.sh

# ---- make install / make uninstall -------------------------------------
# install-module: crem.ko through the kernel's modules_install into
# $(DESTDIR)/lib/modules/RELEASE/updates/ for the kernel at KDIR (by
# default the cached test kernel: build against the running one with
# `make KDIR=/lib/modules/$$(uname -r)/build`), then depmod, which is left
# to the packager when DESTDIR is set. install-tools: crem-ctl, its man
# pages (crem-ctl generate-man) and crem(4), its bash/zsh/fish completions,
# the sample configuration /etc/crem/crem0.conf.sample (a configuration of
# the operator's is never written) and crem@.service.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
CTL = $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/release/crem-ctl
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
# Where modules_install puts an external module (its INSTALL_MOD_DIR default).
MODDIR = $(DESTDIR)/lib/modules/$(KRELEASE)/updates

install: install-module install-tools

ctl-release:
	cargo build -p crem-ctl --release

install-module:
	@test -f crem.ko || { echo "crem.ko is not built: run 'make' first (against KDIR=$(KDIR);" \
		"'make setup' builds that kernel), or 'make install-tools' for crem-ctl alone"; exit 1; }
	@test -n "$(KRELEASE)" || { echo "no kernel build at KDIR=$(KDIR) (no include/config/kernel.release)"; exit 1; }
	$(KMAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true modules_install
	@if [ -z "$(DESTDIR)" ]; then echo "depmod -a $(KRELEASE)"; PATH="$$PATH:/usr/sbin:/sbin" depmod -a $(KRELEASE); \
	else echo "DESTDIR is set: depmod left to the package (depmod -a $(KRELEASE) on the target)"; fi

install-tools: ctl-release
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(SYSCONFDIR)/crem $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 0755 $(CTL) $(DESTDIR)$(BINDIR)/crem-ctl
	$(CTL) generate-man $(DESTDIR)$(MANDIR)/man8 >/dev/null
	install -m 0644 docs/man/crem.4 $(DESTDIR)$(MANDIR)/man4/crem.4
	$(CTL) completions bash >$(DESTDIR)$(BASHCOMPDIR)/crem-ctl
	$(CTL) completions zsh >$(DESTDIR)$(ZSHCOMPDIR)/_crem-ctl
	$(CTL) completions fish >$(DESTDIR)$(FISHCOMPDIR)/crem-ctl.fish
	install -m 0644 dist/crem0.conf.sample $(DESTDIR)$(SYSCONFDIR)/crem/crem0.conf.sample
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/crem@.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/crem@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/crem@.service

uninstall: uninstall-module uninstall-tools

uninstall-module:
	@test -n "$(KRELEASE)" || { echo "no kernel build at KDIR=$(KDIR): which release's crem.ko to remove?"; exit 1; }
	rm -f $(MODDIR)/crem.ko
	@if [ -z "$(DESTDIR)" ]; then echo "depmod -a $(KRELEASE)"; PATH="$$PATH:/usr/sbin:/sbin" depmod -a $(KRELEASE); fi

# The operator's /etc/crem/*.conf stay (and so /etc/crem with them).
uninstall-tools:
	rm -f $(DESTDIR)$(BINDIR)/crem-ctl $(DESTDIR)$(MANDIR)/man8/crem-ctl.8 \
		$(DESTDIR)$(MANDIR)/man8/crem-ctl-*.8 $(DESTDIR)$(MANDIR)/man4/crem.4 \
		$(DESTDIR)$(BASHCOMPDIR)/crem-ctl $(DESTDIR)$(ZSHCOMPDIR)/_crem-ctl \
		$(DESTDIR)$(FISHCOMPDIR)/crem-ctl.fish $(DESTDIR)$(SYSCONFDIR)/crem/crem0.conf.sample \
		$(DESTDIR)$(SYSTEMDUNITDIR)/crem@.service
	@rmdir $(DESTDIR)$(SYSCONFDIR)/crem 2>/dev/null || true

# install-tools into a temporary DESTDIR, and into a PREFIX for
# systemd-analyze verify; install-module too if crem.ko is built; then
# install's DESTDIR in a VM (CREM_INSTALL_VM=0: not).
check-install:
	KDIR=$(KDIR) vm/install-check.sh
