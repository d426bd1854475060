# CREM for Linux. `make help` lists the targets.
SHELL := /bin/bash
KDIR ?= $(shell vm/kdir.sh normal)
KDIR_DEBUG ?= $(shell vm/kdir.sh debug)
BUILD ?= $(CURDIR)/build
# The kernel's Rust is Debian's rustc 1.85, never the rustup toolchain on PATH.
KMAKE = PATH=/usr/bin:/bin:/usr/sbin:/sbin:$$HOME/.cargo/bin $(MAKE) LLVM=1 \
	RUSTC=/usr/bin/rustc BINDGEN=$$HOME/.cargo/bin/bindgen
MODULE_SRCS = Kbuild include rust/crem_main.rs rust/ffi.rs rust/flow.rs rust/hook.rs \
	rust/host.rs rust/netns.rs \
	rust/glue rust/core/src kunit

.PHONY: all module module-kunit module-debug setup kernel kernel-debug check \
	check-debug check-debug-all check-full check-flows demo fuzz fuzz-kernel bench connects clean help netlink-gen

all: module

help:
	@echo "make setup        install packages, bindgen, build the cached test kernel"
	@echo "make              build crem.ko against KDIR (default: the cached kernel)"
	@echo "make check        every test: cargo fmt/clippy/test, module, KUnit and e2e in QEMU"
	@echo "make check-debug  KUnit and e2e on the debug kernel (KASAN, lockdep, kmemleak)"
	@echo "make check-debug-all  every in-VM step on the debug kernel"
	@echo "make check-full   make check, the longer cases and every debug-kernel step"
	@echo "make demo         RDMA over the emulated lossy long link, with and without CREM"
	@echo "make fuzz         run every fuzz target for FUZZ_SECONDS (default 30) each"
	@echo "make fuzz-kernel  fuzz crem.ko in a debug-kernel VM: CREM datagrams and genetlink"
	@echo "                  for FUZZ_KERNEL_SECONDS (default 120; FUZZ_SEED= replays)"
	@echo "make bench        crem-core benchmarks (GF(2^8), coding)"
	@echo "make connects     RDMA CM connection failures per 100, with and without CREM"
	@echo "                  (CONNECTS_TRIALS, default 15; CONNECTS_LOSS, default 0)"

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
demo: module
	cargo build -p crem-ctl --release
	vm/demo.py $(DEMO_ARGS)

fuzz:
	rust/core/fuzz/run.sh $(or $(FUZZ_SECONDS),30)

# The module itself, on the debug kernel (KASAN, lockdep, kmemleak,
# panic_on_warn): vm/fuzz-kernel.sh. Both parts run at once for the time given.
fuzz-kernel: module-debug
	cargo build -p crem-ctl --release
	vm/fuzz-kernel.sh $(or $(FUZZ_KERNEL_SECONDS),120) debug

bench:
	cargo bench -p crem-core

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
