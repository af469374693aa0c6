#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the softverbs selftests on this kernel, as root, in the test VM:
# load the module, run every test program (kselftest TAP), unload, and end
# with "<kernel>: N passed, N failed, N skipped".
#
#   run_tests.sh [TEST...]     default: every program in $BUILD/selftests
#
# A TEST of the form PROGRAM@idle_us=N runs PROGRAM with softverbs0's
# engine idle time set to N (svctl dev set), then sets it back: the
# default list runs datapath_test once more with idle_us=0, where every
# work request is executed by the poster's doorbell syscall.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${BUILD:-$top/build}/selftests
export SV_KO=${SV_KO:-$top/kernel/softverbs.ko}
# Each program's time limit: selftests/settings' timeout=, or its own
# timeout.PROGRAM=. A slow kernel (the debug kernel: scripts/test-debug)
# scales every timeout, the harness's per-test ones too (sv_harness.h).
timeout_base=$(sed -n 's/^timeout=//p' "$top/selftests/settings")
kver=$(uname -r)

if [ $# -gt 0 ]; then
	tests=("$@")
else
	# module_test first: it unloads and reloads the module itself.
	tests=(module_test)
	for t in "$top"/selftests/*_test.c; do
		t=${t##*/}
		t=${t%.c}
		[ "$t" = module_test ] || tests+=("$t")
		[ "$t" != datapath_test ] || tests+=("$t@idle_us=0")
	done
fi
svctl=${BUILD:-$top/build}/bin/svctl

pass=0 fail=0 skip=0
echo "TAP version 13"
echo "1..${#tests[@]}"

if ! insmod "$SV_KO"; then
	echo "Bail out! insmod $SV_KO failed"
	echo "$kver: 0 passed, 1 failed, 0 skipped"
	exit 1
fi

n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	log=$(mktemp)
	echo "# selftests: softverbs: $t"
	prog=${t%%@*} idle=
	[ "$prog" = "$t" ] || idle=${t#*@idle_us=}
	if [ -n "$idle" ] && ! "$svctl" dev set softverbs0 idle_us "$idle"; then
		echo "not ok $n selftests: softverbs: $t # svctl dev set failed"
		fail=$((fail + 1))
		continue
	fi
	t_prog=$(sed -n "s/^timeout\.$prog=//p" "$top/selftests/settings")
	t_prog=$((${t_prog:-$timeout_base} * ${SV_SLOW:-1}))
	timeout "$t_prog" "$out/$prog" >"$log" 2>&1
	rc=$?
	[ -z "$idle" ] || "$svctl" dev set softverbs0 idle_us \
		"$(cat /sys/module/softverbs/parameters/idle_us)" || rc=1
	sed 's/^/# /' "$log"
	totals=$(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) xfail:[0-9]* xpass:[0-9]* skip:\([0-9]*\) error:\([0-9]*\).*/\1 \2 \3 \4/p' "$log" | tail -n 1)
	rm -f "$log"
	if [ -z "$totals" ]; then
		# Crashed, hung or never started: the whole program fails.
		echo "not ok $n selftests: softverbs: $t # exit=$rc, no totals"
		fail=$((fail + 1))
		continue
	fi
	read -r p f s e <<<"$totals"
	pass=$((pass + p)) fail=$((fail + f + e)) skip=$((skip + s))
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$e" -eq 0 ]; then
		echo "ok $n selftests: softverbs: $t"
	else
		[ "$f" -eq 0 ] && [ "$e" -eq 0 ] && fail=$((fail + 1))
		echo "not ok $n selftests: softverbs: $t # exit=$rc"
	fi
done

# Every test must have released the device: the module unloads.
if ! rmmod softverbs; then
	echo "# rmmod softverbs failed after the tests"
	fail=$((fail + 1))
fi

echo "$kver: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
