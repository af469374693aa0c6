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

# guard PID SECS PROG: if timeout(1)'s PID still runs after SECS, print
# the stacks of the tasks stuck in the kernel (and every blocked task's
# to dmesg), and kill PID so that the run goes on.
guard() {
	local pid=$1 secs=$2 prog=$3 i p
	for ((i = 0; i < secs; i += 5)); do
		sleep 5
		kill -0 "$pid" 2>/dev/null || return 0
	done
	echo "# $prog did not end ${secs}s after it started: stuck tasks"
	for p in /proc/[0-9]*; do
		[ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" = D ] || continue
		echo "# ${p#/proc/} $(cat "$p/comm" 2>/dev/null):"
		sed 's/^/#   /' "$p/stack" 2>/dev/null
	done
	echo w >/proc/sysrq-trigger 2>/dev/null
	kill -9 "$pid" 2>/dev/null
}

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
	# timeout(1) waits for its program however long it takes to die: one
	# stuck in the kernel (D state) would hold the whole run. guard()
	# gives it 30 s past its time, then reports the stuck tasks and lets
	# the run go on without it.
	t_start=$SECONDS
	timeout -k 10 "$t_prog" "$out/$prog" >"$log" 2>&1 &
	tpid=$!
	guard "$tpid" $((t_prog + 30)) "$prog" >"$log.hung" 2>&1 &
	wait "$tpid"
	rc=$?
	secs=$((SECONDS - t_start))
	[ -z "$idle" ] || "$svctl" dev set softverbs0 idle_us \
		"$(cat /sys/module/softverbs/parameters/idle_us)" || rc=1
	sed 's/^/# /' "$log"
	# What guard() saw, if it had to (it ends within 5 s of the program)
	cat "$log.hung" 2>/dev/null
	rm -f "$log.hung"
	totals=$(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) xfail:[0-9]* xpass:[0-9]* skip:\([0-9]*\) error:\([0-9]*\).*/\1 \2 \3 \4/p' "$log" | tail -n 1)
	rm -f "$log"
	if [ -z "$totals" ]; then
		# Crashed, hung or never started: the whole program fails.
		echo "not ok $n selftests: softverbs: $t # exit=$rc, no totals, ${secs} s"
		fail=$((fail + 1))
		continue
	fi
	read -r p f s e <<<"$totals"
	pass=$((pass + p)) fail=$((fail + f + e)) skip=$((skip + s))
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$e" -eq 0 ]; then
		echo "ok $n selftests: softverbs: $t # ${secs} s"
	else
		[ "$f" -eq 0 ] && [ "$e" -eq 0 ] && fail=$((fail + 1))
		echo "not ok $n selftests: softverbs: $t # exit=$rc, ${secs} s"
	fi
done

# Every test must have released the device: the module unloads.
if ! rmmod softverbs; then
	echo "# rmmod softverbs failed after the tests"
	fail=$((fail + 1))
fi

echo "$kver: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
