// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs queue depth limits: how many work requests one send or
 * receive queue (max_qp_wr, also a WQ's), one SRQ (max_srq_wr) and how
 * many entries one CQ (max_cqe) may have on a device.
 *
 * They are the device's: a new device takes the module parameters
 * max_qp_wr, max_cqe and max_srq_wr (defaults SV_DEFAULT_MAX_*, the
 * uapi header's), svctl dev set changes them at run time (netlink
 * SV_NL_ATTR_MAX_QP_WR ...), and SV_IOC_QUERY_DEVICE reports the current
 * values, so a program sizes its queues by what the kernel enforces.
 * Both take 1..SV_NL_DEPTH_MAX: a queue's memory is charged to its
 * creator's memory cgroup (sv_mbuf), which bounds it otherwise. A
 * lowered limit applies to creates and resizes from then on; queues that
 * are larger keep their size.
 */
#include <linux/moduleparam.h>

#include "sv.h"

static unsigned int sv_depth_default[SV_DEPTH_MAX] = {
	[SV_DEPTH_QP_WR] = SV_DEFAULT_MAX_QP_WR,
	[SV_DEPTH_CQE] = SV_DEFAULT_MAX_CQE,
	[SV_DEPTH_SRQ_WR] = SV_DEFAULT_MAX_SRQ_WR,
};

static int sv_depth_default_set(const char *val, const struct kernel_param *kp)
{
	return sv_limit_param_set(val, kp, SV_NL_DEPTH_MAX);
}

static const struct kernel_param_ops sv_depth_default_ops = {
	.set = sv_depth_default_set,
	.get = param_get_uint,
};

module_param_cb(max_qp_wr, &sv_depth_default_ops,
		&sv_depth_default[SV_DEPTH_QP_WR], 0644);
MODULE_PARM_DESC(max_qp_wr, "A new device's max_qp_wr (default 16384)");
module_param_cb(max_cqe, &sv_depth_default_ops,
		&sv_depth_default[SV_DEPTH_CQE], 0644);
MODULE_PARM_DESC(max_cqe, "A new device's max_cqe (default 65536)");
module_param_cb(max_srq_wr, &sv_depth_default_ops,
		&sv_depth_default[SV_DEPTH_SRQ_WR], 0644);
MODULE_PARM_DESC(max_srq_wr,
		 "A new device's max_srq_wr (default 16384; each 1-4194304, svctl dev set changes a device's)");

void sv_depth_device_init(struct sv_device *sdev)
{
	int d;

	for (d = 0; d < SV_DEPTH_MAX; d++)
		sdev->max_depth[d] = READ_ONCE(sv_depth_default[d]);
}

u32 sv_depth(struct sv_device *sdev, enum sv_depth d)
{
	return READ_ONCE(sdev->max_depth[d]);
}

/* svctl dev set: the netlink policy has checked 1..SV_NL_DEPTH_MAX. */
void sv_depth_set(struct sv_device *sdev, enum sv_depth d, u32 n)
{
	WRITE_ONCE(sdev->max_depth[d], n);
}
