# SPDX-License-Identifier: GPL-2.0
#
# Sourced by scripts/bench-guest and scripts/bench-syscalls (in the VM):
# "${syscount[@]}" FILE -- CMD... runs CMD and counts its (and its
# children's) syscalls into FILE; syscount_read FILE prints the count.
# perf counts at the raw_syscalls tracepoint without stopping the process;
# strace (the fallback) stops it at every syscall, which takes CPU from a
# polling engine and so changes what is measured.
# shellcheck shell=bash disable=SC2034
if command -v perf >/dev/null &&
	perf stat -e raw_syscalls:sys_enter -x, -o /dev/null -- true 2>/dev/null; then
	syscount=(perf stat -e raw_syscalls:sys_enter '-x,' -o)
	syscount_read() { awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$1" 2>/dev/null; }
else
	syscount=(strace -f -c -o)
	syscount_read() { awk '$NF == "total" { print $4 }' "$1" 2>/dev/null; }
fi
