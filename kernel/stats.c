// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs counters: per-CPU u64s per device, added to from any context
 * with sv_stat_add() and summed by the management plane ("stat show").
 * A device has one port, so the port 1 counters are the device's.
 *
 * The data path (engine.c, exec.c) counts messages, completions, RNR
 * NAKs, retries and doorbells; steering (steer/rx.c) counts the frames
 * its rules look at and what became of them. Documentation/management.rst
 * says what each counter counts, exactly.
 */
#include <linux/percpu.h>

#include "sv.h"

static const char * const sv_stat_names[SV_STAT_MAX] = {
	[SV_STAT_TX_PKTS] = "tx_packets",
	[SV_STAT_TX_BYTES] = "tx_bytes",
	[SV_STAT_RX_PKTS] = "rx_packets",
	[SV_STAT_RX_BYTES] = "rx_bytes",
	[SV_STAT_COMPLETIONS] = "completions",
	[SV_STAT_RNR_NAKS] = "rnr_naks",
	[SV_STAT_RETRIES] = "retries",
	[SV_STAT_STEER_HITS] = "steering_hits",
	[SV_STAT_STEER_MISSES] = "steering_misses",
	[SV_STAT_STEER_DROPS] = "steering_drops",
	[SV_STAT_DOORBELLS] = "doorbells",
	[SV_STAT_DOORBELL_WQES] = "doorbell_wqes",
	[SV_STAT_RX_PEER_DROPS] = "rx_peer_drops",
	[SV_STAT_RX_RAW_DROPS] = "rx_raw_drops",
	[SV_STAT_STEER_MATCHED] = "steering_matched",
	[SV_STAT_STEER_TRAPPED] = "steering_trapped",
	[SV_STAT_STEER_COPIES] = "steering_copies",
	[SV_STAT_STEER_PASSED] = "steering_passed",
	[SV_STAT_RX_RAW_QUEUE_DROPS] = "rx_raw_queue_drops",
	[SV_STAT_STEER_TX_DROPS] = "steering_tx_drops",
	[SV_STAT_STEER_LOOP_DROPS] = "steering_loop_drops",
	[SV_STAT_DC_KEY_DROPS] = "dc_key_violations",
	[SV_STAT_RX_ODP_DROPS] = "rx_odp_drops",
	[SV_STAT_WIRE_TX_FRAMES] = "wire_tx_frames",
	[SV_STAT_WIRE_TX_BYTES] = "wire_tx_bytes",
	[SV_STAT_WIRE_TX_DROPS] = "wire_tx_drops",
	[SV_STAT_WIRE_RX_FRAMES] = "wire_rx_frames",
	[SV_STAT_WIRE_RX_BYTES] = "wire_rx_bytes",
	[SV_STAT_WIRE_RX_DROPS] = "wire_rx_drops",
	[SV_STAT_WIRE_ICRC_ERRORS] = "wire_icrc_errors",
	[SV_STAT_WIRE_RX_OOS] = "wire_rx_out_of_sequence",
	[SV_STAT_WIRE_RX_DUPLICATES] = "wire_rx_duplicates",
	[SV_STAT_WIRE_RETRANSMITS] = "wire_retransmits",
	[SV_STAT_WIRE_NAKS_SENT] = "wire_naks_sent",
	[SV_STAT_WIRE_NAKS_RECEIVED] = "wire_naks_received",
	[SV_STAT_DOORBELL_FRAMES] = "doorbell_frames",
	[SV_STAT_DRIVES] = "drives",
	[SV_STAT_DRIVE_WQES] = "drive_wqes",
	[SV_STAT_QP_RUNS] = "engine_qp_runs",
};

const char *sv_stat_name(enum sv_stat stat)
{
	return stat < SV_STAT_MAX ? sv_stat_names[stat] : "?";
}

int sv_stats_alloc(struct sv_device *sdev)
{
	sdev->stats = __alloc_percpu(sizeof(u64) * SV_STAT_MAX,
				     __alignof__(u64));
	return sdev->stats ? 0 : -ENOMEM;
}

void sv_stats_free(struct sv_device *sdev)
{
	free_percpu(sdev->stats);
	sdev->stats = NULL;
}

/* The sum over CPUs; concurrent adds may or may not be in it. */
u64 sv_stat_read(struct sv_device *sdev, enum sv_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->stats, cpu)[stat]);
	return sum;
}
