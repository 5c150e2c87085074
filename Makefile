# o2lnd top-level Makefile.
#
#   make            build o2lnd.ko (against KDIR) and the C++ userspace
#   make install    o2ctl, the manual pages (o2ctl.8, o2lnd.4) and
#                   o2lnd.service into $(DESTDIR)$(PREFIX) (PREFIX default
#                   /usr/local), built without the tests (no GoogleTest) in
#                   INSTALL_BUILD (default $(BUILD)-install); the
#                   module installs through DKMS (docs/admin-guide.md)
#   make run        set up the test bed, boot two guests on Soft-RoCE, ping
#   make check      the whole test suite, setup and builds included; ends
#                   with the stage times against the budget and
#                   "N passed, N failed" (FILTER=<gtest filter> runs a
#                   subset of the scenarios)
#   make bench-recovery  recovery-after-reboot benchmark on two guests
#                   (RUNS=<n> per case, default 3); writes results/recovery.md
#   make bench-msg  small-message rate and latency, o2lnd vs perftest, in one
#                   guest (ROUNDS=<n>, default 3); writes results/bench-msg.md;
#                   O2_BENCH_TOPO=two: two guests, eth0 to eth0, writes
#                   results/bench-msg-two.md
#   make bench-bulk 1 MiB bulk throughput (selftest brw write/read) and ping
#                   RTT, o2lnd vs perftest ib_write_bw/ib_read_bw/ib_send_lat,
#                   in one guest (ROUNDS=<n>, default 3); writes
#                   results/bench-bulk.md; O2_BENCH_TOPO=two: two guests,
#                   eth0 to eth0, writes results/bench-bulk-two.md
#   make bench-routing  routed vs direct 1 MiB brw write bandwidth, three
#                   guests (ROUNDS=<n>, default 3); results/bench-routing.md
#   make bench-faults  brw/ping rates at 0, 0.1, 1, 5% netem loss beside
#                   ib_write_bw, and per ack_timeout (14, 16, 18) the 1% loss
#                   rates and the time to detect a paused peer; two guests,
#                   one boot; results/bench-faults.md
#   make bench-vs-o2iblnd  o2lnd beside Lustre's o2iblnd (lst) in two guests
#                   of one boot, alternating stacks, 3 rounds: bulk, 4 KiB,
#                   ping, CPU per GiB; results/bench-vs-o2iblnd.md (needs the
#                   Lustre peer: O2_LUSTRE_SRC, see testbed/lustre-build.sh)
#   make bench-soak the connection soaks at lengths make check does not
#                   afford (1000 race rounds, 600 s of dead-peer pings);
#                   results/bench-soak.md
#
# When invoked by Kbuild (KERNELRELEASE set) this file defers to Kbuild.

ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# Default KDIR: the headers of the guest kernel the test bed boots
# (testbed/setup.sh records its ABI and unpacks its headers, never
# installing them, into $(O2_CACHE)/kernels/headers-<release>): Debian's
# 6.1, or with O2_KERNEL=debian612 its 6.12; else the newest unpacked
# there, else the newest installed.  Any other kernel: make
# KDIR=/lib/modules/<release>/build.  The module builds with W=1 (O2_W=, to
# leave it out); Kbuild's -Werror makes a warning an error.
O2_CACHE ?= /var/cache/o2lnd
GUEST_ABI := $(shell cat $(TOP)/.testbed-abi$(if $(filter debian612,$(O2_KERNEL)),-debian612) 2>/dev/null)
ifneq ($(GUEST_ABI),)
KDIR ?= $(O2_CACHE)/kernels/headers-$(GUEST_ABI)/usr/src/linux-headers-$(GUEST_ABI)
else
KDIR ?= $(or $(lastword $(sort $(wildcard $(O2_CACHE)/kernels/headers-*-amd64/usr/src/linux-headers-*-amd64))), \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
endif
BUILD ?= $(TOP)/build
JOBS ?= $(shell nproc)
O2_W ?= 1

.PHONY: all module userspace install setup run check distclean bench-recovery bench-msg bench-bulk bench-routing bench-faults bench-vs-o2iblnd bench-soak clean tidy format checkpatch

all: module userspace

module:
	@test -d "$(KDIR)" || { echo "o2lnd: no kernel headers at KDIR=$(KDIR); run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) $(if $(O2_W),W=$(O2_W)) modules

# ccache (installed by make setup) keeps a warm rebuild of a fresh clone
# short, wherever the clone is (paths under the tree are hashed relative to
# it); its cache lives in $(O2_CACHE)/ccache, so an empty O2_CACHE builds
# from nothing.
CCACHE := $(shell command -v ccache 2>/dev/null)
userspace:
	cmake -S $(TOP) -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		$(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE)) >/dev/null
	CCACHE_DIR=$(O2_CACHE)/ccache CCACHE_BASEDIR=$(TOP) CCACHE_NOHASHDIR=1 cmake --build $(BUILD) -j$(JOBS)

# The product alone: o2ctl (libo2lnd linked in statically) and the manual
# pages, configured with O2LND_BUILD_TESTS=OFF in a build tree of its own,
# so GoogleTest is not needed (yaml-cpp is: o2ctl import reads YAML) and
# $(BUILD) is left as is.
# Beside $(BUILD), at its depth in the tree, ccache finds what
# `make userspace` compiled (it hashes paths relative to the build folder).
PREFIX ?= /usr/local
INSTALL_BUILD ?= $(BUILD)-install
install:
	cmake -S $(TOP) -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DO2LND_BUILD_TESTS=OFF \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		$(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE)) >/dev/null
	CCACHE_DIR=$(O2_CACHE)/ccache CCACHE_BASEDIR=$(TOP) CCACHE_NOHASHDIR=1 cmake --build $(INSTALL_BUILD) -j$(JOBS) --target o2ctl
	DESTDIR=$(DESTDIR) cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

setup:
	$(TOP)/testbed/setup.sh

run: setup
	@$(MAKE) --no-print-directory all
	$(TOP)/testbed/run-demo.sh

# check.sh runs setup and the build as its first two timed stages.
check:
	BUILD=$(BUILD) $(TOP)/testbed/check.sh $(if $(FILTER),--filter '$(FILTER)')

bench-recovery: setup
	@$(MAKE) --no-print-directory all
	$(TOP)/testbed/bench-recovery.sh $(if $(RUNS),--runs $(RUNS))

bench-msg: setup
	@$(MAKE) --no-print-directory all
	$(TOP)/testbed/bench-msg.sh $(if $(ROUNDS),--rounds $(ROUNDS))

bench-bulk: setup
	@$(MAKE) --no-print-directory all
	$(TOP)/testbed/bench-bulk.sh $(if $(ROUNDS),--rounds $(ROUNDS))

bench-routing bench-faults bench-vs-o2iblnd bench-soak: setup
	@$(MAKE) --no-print-directory all
	$(TOP)/testbed/bench-itest.sh $(@:bench-%=%) $(if $(ROUNDS),--rounds $(ROUNDS))

checkpatch:
	$(TOP)/scripts/checkpatch.sh

format:
	clang-format -i $$(git -C $(TOP) ls-files '*.cc' '*.h' | grep -v '^module/\|^kunit/\|^include/')

tidy: userspace
	run-clang-tidy -p $(BUILD) -quiet '$(TOP)/(lib|o2ctl|userspace-tests|testbed)/.*\.cc$$'

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf $(BUILD)

# clean, and the cache (guest kernels, headers, Lustre peers, ccache); the
# host packages setup installed stay (they are tools and libraries, never
# a kernel): listed, with the command that removes them.
distclean: clean
	@if [ -s "$(O2_CACHE)/host-packages" ]; then \
		echo "o2lnd: packages the test bed installed on this host (kept):"; \
		sort -u "$(O2_CACHE)/host-packages" | sed 's/^/  /'; \
		echo "o2lnd: to remove them: apt-get purge $$(sort -u "$(O2_CACHE)/host-packages" | tr '\n' ' ')"; \
	else \
		echo "o2lnd: the test bed installed no package on this host (none recorded in $(O2_CACHE)/host-packages)"; \
	fi
	rm -rf "$(O2_CACHE)"

endif
