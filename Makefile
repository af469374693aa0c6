# SPDX-License-Identifier: GPL-2.0
#
# softverbs top-level build.
#
#   make                 module + library + tools + selftests
#   make KVER=6.1.0-56-amd64      build the module for that kernel
#   make KDIR=/path/to/build      ... or for that kernel build tree
#   make sparse          run sparse over the kernel code (C=2)
#   make checkpatch      kernel coding style (linux-source-6.1's checkpatch.pl)
#   make check           run every test in a VM, for every installed kernel
#   make bench           softverbs vs Soft-RoCE vs memcpy in one VM boot (scripts/bench)
#   make install         library, tools, man pages, udev rule, module via DKMS
#                        (DESTDIR, PREFIX, LIBDIR ...: scripts/install)
#   make uninstall       remove exactly what make install put there
#   make clean
#
# Kbuild is in ./Kbuild and kernel/Kbuild; this file only drives it.

KVER ?= $(shell $(CURDIR)/scripts/default-kver)
KDIR ?= /lib/modules/$(KVER)/build
BUILD := $(CURDIR)/build
export KVER BUILD

.PHONY: all module user selftests sparse checkpatch check clean ksft-headers bench \
	install uninstall

all: module user selftests

# The module's objects are per kernel: when KDIR changes, start afresh.
module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at $(KDIR): run scripts/install-deps" >&2; exit 1; }
	@if [ "$$(cat kernel/.kdir 2>/dev/null)" != "$(KDIR)" ]; then \
		rm -f kernel/*.o kernel/*.ko kernel/*.mod kernel/*.mod.c \
		      kernel/.*.cmd kernel/modules.order Module.symvers modules.order \
		      kernel/*/*.o kernel/*/.*.cmd; \
		echo "$(KDIR)" > kernel/.kdir; \
	fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# The module is built by DKMS, for every kernel, from the installed source.
install: user
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" LIBDIR="$(LIBDIR)" \
		BINDIR="$(BINDIR)" MANDIR="$(MANDIR)" SV_DKMS="$(SV_DKMS)" \
		$(CURDIR)/scripts/install

uninstall:
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" LIBDIR="$(LIBDIR)" \
		BINDIR="$(BINDIR)" MANDIR="$(MANDIR)" SV_DKMS="$(SV_DKMS)" \
		$(CURDIR)/scripts/install --uninstall

sparse:
	@rm -f kernel/*.o kernel/*/*.o
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 C=2 CHECK="sparse -Wno-decl" modules

user:
	$(MAKE) -C user

selftests: ksft-headers user
	$(MAKE) -C selftests

# kselftest_harness.h, kselftest.h and checkpatch.pl come from Debian's
# linux-source-6.1 tarball at build time; they are never committed.
ksft-headers:
	@$(CURDIR)/scripts/extract-linux-source

CHECKPATCH = $(BUILD)/linux-src/scripts/checkpatch.pl --no-tree --strict \
	--terse --quiet --ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES

checkpatch:
	@$(CURDIR)/scripts/extract-linux-source
	$(CHECKPATCH) -f $(filter-out %.mod.c kernel/compat.h,$(wildcard kernel/*.[ch] kernel/*/*.[ch]))
	@# uapi is compiled in userspace too (no __aligned()): checkpatch
	@# exempts include/uapi/ from this check, not our uapi/.
	$(CHECKPATCH) --ignore PREFER_DEFINED_ATTRIBUTE_MACRO -f uapi/*.h
	@# Version checks are what compat.h is for.
	$(CHECKPATCH) --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kernel/compat.h

check:
	$(CURDIR)/scripts/test

bench:
	$(CURDIR)/scripts/bench

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD) kernel/.kdir
	$(MAKE) -C user clean
	$(MAKE) -C selftests clean
