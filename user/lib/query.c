// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: device, port, GID and P_Key queries. The kernel's answers
 * (struct sv_query_*) use the verbs encodings, so values pass through.
 */
#include <stdint.h>
#include <string.h>
#include <endian.h>
#include <time.h>

#include "sv_verbs.h"
#include "sv_system.h"

/* uapi encodings equal <infiniband/verbs.h>'s. */
_Static_assert(SV_DEVICE_SYS_IMAGE_GUID == IBV_DEVICE_SYS_IMAGE_GUID, "");
_Static_assert(SV_DEVICE_RC_RNR_NAK_GEN == IBV_DEVICE_RC_RNR_NAK_GEN, "");
_Static_assert(SV_ATOMIC_HCA == IBV_ATOMIC_HCA, "");
_Static_assert(SV_PORT_ACTIVE == IBV_PORT_ACTIVE, "");
_Static_assert(SV_MTU_4096 == IBV_MTU_4096, "");
_Static_assert(SV_PORT_IP_BASED_GIDS == IBV_PORT_IP_BASED_GIDS, "");
_Static_assert(SV_LINK_LAYER_ETHERNET == IBV_LINK_LAYER_ETHERNET, "");
_Static_assert(SV_GID_TYPE_ROCE_V1 == IBV_GID_TYPE_ROCE_V1, "");
_Static_assert(SV_GID_TYPE_ROCE_V2 == IBV_GID_TYPE_ROCE_V2, "");

/* rdma-core's private enum for ibv_query_gid_type() (IBVERBS_PRIVATE_34). */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

SV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index,
				 enum ibv_gid_type_sysfs *type);

int sv_query_device_raw(struct ibv_context *ctx, struct sv_query_device *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return sv_cmd(ctx, SV_IOC_QUERY_DEVICE, q);
}

static void sv_fill_device_attr(struct ibv_device_attr *a,
				const struct sv_query_device *q)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->fw_ver, q->fw_ver, sizeof(a->fw_ver));
	a->fw_ver[sizeof(a->fw_ver) - 1] = 0;
	a->node_guid = q->node_guid;
	a->sys_image_guid = q->sys_image_guid;
	a->max_mr_size = q->max_mr_size;
	a->page_size_cap = q->page_size_cap;
	a->vendor_id = q->vendor_id;
	a->vendor_part_id = q->vendor_part_id;
	a->hw_ver = q->hw_ver;
	a->max_qp = q->max_qp;
	a->max_qp_wr = q->max_qp_wr;
	a->device_cap_flags = q->device_cap_flags;
	a->max_sge = q->max_sge;
	a->max_sge_rd = q->max_sge_rd;
	a->max_cq = q->max_cq;
	a->max_cqe = q->max_cqe;
	a->max_mr = q->max_mr;
	a->max_pd = q->max_pd;
	a->max_qp_rd_atom = q->max_qp_rd_atom;
	a->max_res_rd_atom = q->max_res_rd_atom;
	a->max_qp_init_rd_atom = q->max_qp_init_rd_atom;
	a->atomic_cap = q->atomic_cap;
	a->max_mcast_grp = q->max_mcast_grp;
	a->max_mcast_qp_attach = q->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = q->max_total_mcast_qp_attach;
	a->max_ah = q->max_ah;
	a->max_srq = q->max_srq;
	a->max_srq_wr = q->max_srq_wr;
	a->max_srq_sge = q->max_srq_sge;
	a->max_pkeys = q->max_pkeys;
	a->local_ca_ack_delay = q->local_ca_ack_delay;
	a->phys_port_cnt = q->phys_port_cnt;
	a->max_mw = q->max_mw;
	/* No EE contexts, RDDs, raw IPv6/Ethertype QPs or FMRs: 0. */
}

/*
 * IB_UVERBS_DEVICE_FLUSH_GLOBAL, _FLUSH_PERSISTENT and _ATOMIC_WRITE:
 * rdma-core 44's header has no names for them.
 */
#define SV_DEVICE_FLUSH_GLOBAL		(1ULL << 38)
#define SV_DEVICE_FLUSH_PERSISTENT	(1ULL << 39)
#define SV_DEVICE_ATOMIC_WRITE		(1ULL << 40)

/*
 * query_device_ex op: fills attr_size bytes (at least the basic attrs).
 * Completions carry device clock stamps (hca_core_clock, in kHz, and
 * completion_timestamp_mask: SV_DEVICE_CLOCK in the uapi header); a QP
 * accepts IBV_QP_CREATE_PCI_WRITE_END_PADDING (which changes nothing) on
 * every device; RSS and the raw packet features: wq.c; CQ moderation
 * (ibv_modify_cq: cq.c) up to mlx5's bounds; device memory (dm.c);
 * packet pacing (qp.c); on-demand paging as the kernel reports it (an
 * older module: none); tag matching on RC (kernel/tm.c). Extended
 * capabilities softverbs lacks read as 0.
 */
static int sv_query_device_ex(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct sv_query_device q;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	ret = sv_query_device_raw(context, &q);
	if (ret)
		return ret;

	memset(&ex, 0, sizeof(ex));
	sv_fill_device_attr(&ex.orig_attr, &q);
	ex.device_cap_flags_ex = q.device_cap_flags |
				 IBV_DEVICE_PCI_WRITE_END_PADDING |
				 SV_DEVICE_FLUSH_GLOBAL |
				 SV_DEVICE_FLUSH_PERSISTENT |
				 SV_DEVICE_ATOMIC_WRITE;
	ex.phys_port_cnt_ex = q.phys_port_cnt;
	ex.completion_timestamp_mask = SV_TIMESTAMP_MASK;
	ex.hca_core_clock = SV_HCA_CORE_CLOCK_KHZ;
	ex.max_dm_size = SV_MAX_DM_SIZE;
	/* ibv_modify_qp_rate_limit(): the engine paces these QP types. */
	ex.packet_pacing_caps.qp_rate_limit_min = SV_QP_RATE_LIMIT_MIN;
	ex.packet_pacing_caps.qp_rate_limit_max = SV_QP_RATE_LIMIT_MAX;
	ex.packet_pacing_caps.supported_qpts = 1U << IBV_QPT_RC |
		1U << IBV_QPT_UC | 1U << IBV_QPT_UD | 1U << IBV_QPT_RAW_PACKET;
	ex.cq_mod_caps.max_cq_count = SV_MAX_CQ_MOD_COUNT;
	ex.cq_mod_caps.max_cq_period = SV_MAX_CQ_MOD_PERIOD;
	sv_wq_fill_caps(&ex, q.raw_caps);
	ex.odp_caps.general_caps = q.odp_caps;
	ex.odp_caps.per_transport_caps.rc_odp_caps = q.odp_transport_caps;
	ex.odp_caps.per_transport_caps.uc_odp_caps = q.odp_transport_caps;
	ex.odp_caps.per_transport_caps.ud_odp_caps = q.odp_transport_caps;
	ex.xrc_odp_caps = q.odp_transport_caps;
	/* Tag matching on RC QPs (kernel/tm.c) */
	ex.tm_caps.max_rndv_hdr_size = SV_TM_MAX_RNDV_HDR;
	ex.tm_caps.max_num_tags = SV_TM_MAX_NUM_TAGS;
	ex.tm_caps.flags = SV_TM_CAP_RC;
	ex.tm_caps.max_ops = SV_TM_MAX_OPS;
	ex.tm_caps.max_sge = SV_TM_MAX_SGE;

	/* A newer caller's fields this library does not know: zero. */
	memset(attr, 0, attr_size);
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

/* The op ibv_query_device() of old binaries reached through ops. */
static int sv_compat_query_device(struct ibv_context *context,
				  struct ibv_device_attr *attr)
{
	return sv_query_device_ex(context, NULL,
				  (struct ibv_device_attr_ex *)attr,
				  sizeof(*attr));
}

SV_EXPORT int ibv_query_device(struct ibv_context *context,
			       struct ibv_device_attr *device_attr)
{
	SV_SYSTEM_FORWARD(context, ibv_query_device, context, device_attr);
	return sv_compat_query_device(context, device_attr);
}

static int sv_query_port(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct sv_query_port q = { .size = sizeof(q), .port_num = port_num };
	struct ibv_port_attr a;
	int ret;

	ret = sv_cmd(context, SV_IOC_QUERY_PORT, &q);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.state = q.state;
	a.max_mtu = q.max_mtu;
	a.active_mtu = q.active_mtu;
	a.gid_tbl_len = q.gid_tbl_len;
	a.port_cap_flags = q.port_cap_flags;
	a.max_msg_sz = q.max_msg_sz;
	a.bad_pkey_cntr = q.bad_pkey_cntr;
	a.qkey_viol_cntr = q.qkey_viol_cntr;
	a.pkey_tbl_len = q.pkey_tbl_len;
	a.lid = q.lid;
	a.sm_lid = q.sm_lid;
	a.lmc = q.lmc;
	a.max_vl_num = q.max_vl_num;
	a.sm_sl = q.sm_sl;
	a.subnet_timeout = q.subnet_timeout;
	a.init_type_reply = q.init_type_reply;
	a.active_width = q.active_width;
	a.active_speed = q.active_speed;
	a.phys_state = q.phys_state;
	a.link_layer = q.link_layer;
	a.flags = q.flags;
	a.port_cap_flags2 = q.port_cap_flags2;

	memset(port_attr, 0, port_attr_len);
	memcpy(port_attr, &a,
	       port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

/*
 * The exported symbol: binaries built against old headers pass the
 * shorter struct that ended before `flags`; current headers reach
 * sv_query_port through verbs_context.query_port instead.
 */
SV_EXPORT int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
			       struct _compat_ibv_port_attr *port_attr)
{
	SV_SYSTEM_FORWARD(context, ibv_query_port, context, port_num, port_attr);
	return sv_query_port(context, port_num,
			     (struct ibv_port_attr *)port_attr,
			     offsetof(struct ibv_port_attr, flags));
}

static int sv_query_gid_entry(struct ibv_context *context, uint32_t port_num,
			      uint32_t index, struct ibv_gid_entry *e)
{
	struct sv_query_gid q = {
		.size = sizeof(q), .port_num = port_num, .index = index,
	};
	int ret;

	ret = sv_cmd(context, SV_IOC_QUERY_GID, &q);
	if (ret)
		return ret;
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, q.gid, sizeof(e->gid.raw));
	e->gid_index = index;
	e->port_num = port_num;
	e->gid_type = q.gid_type;
	e->ndev_ifindex = q.ndev_ifindex;
	return 0;
}

/* Returns 0 or an errno value; an empty entry is ENODATA. */
SV_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				uint32_t gid_index, struct ibv_gid_entry *entry,
				uint32_t flags, size_t entry_size)
{
	SV_SYSTEM_FORWARD(context, _ibv_query_gid_ex, context, port_num,
			  gid_index, entry, flags, entry_size);
	struct ibv_gid_entry e;
	int ret;

	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = sv_query_gid_entry(context, port_num, gid_index, &e);
	if (ret)
		return ret;
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

/* Every valid entry of every port; the count or a negative errno. */
SV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
				       struct ibv_gid_entry *entries,
				       size_t max_entries, uint32_t flags,
				       size_t entry_size)
{
	SV_SYSTEM_FORWARD(context, _ibv_query_gid_table, context, entries,
	                  max_entries, flags, entry_size);
	struct ibv_device_attr attr;
	struct ibv_port_attr pattr;
	size_t n = 0;
	uint32_t port;
	int i, ret;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	ret = sv_compat_query_device(context, &attr);
	if (ret)
		return -ret;
	for (port = 1; port <= attr.phys_port_cnt; port++) {
		ret = sv_query_port(context, port, &pattr, sizeof(pattr));
		if (ret)
			return -ret;
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			ret = sv_query_gid_entry(context, port, i, &e);
			if (ret == ENODATA)
				continue;
			if (ret)
				return -ret;
			if (n == max_entries)
				return -EINVAL;
			memset((char *)entries + n * entry_size, 0, entry_size);
			memcpy((char *)entries + n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return n;
}

/* 0 or -1 with errno; an empty entry reads as the zero GID. */
SV_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			    int index, union ibv_gid *gid)
{
	SV_SYSTEM_FORWARD(context, ibv_query_gid, context, port_num, index, gid);
	struct ibv_gid_entry e;
	int ret;

	ret = index < 0 ? EINVAL :
	      sv_query_gid_entry(context, port_num, index, &e);
	if (ret == ENODATA) {
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	*gid = e.gid;
	return 0;
}

/* rdma-core's private call (ibv_devinfo uses it); an empty entry is v1. */
SV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index,
				 enum ibv_gid_type_sysfs *type)
{
	SV_SYSTEM_FORWARD(context, ibv_query_gid_type, context, port_num,
			  index, type);
	struct ibv_gid_entry e;
	int ret;

	ret = sv_query_gid_entry(context, port_num, index, &e);
	if (ret == ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ?
		IBV_GID_TYPE_SYSFS_ROCE_V2 : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* 0 or -1 with errno; the P_Key in network byte order. */
SV_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			     int index, __be16 *pkey)
{
	SV_SYSTEM_FORWARD(context, ibv_query_pkey, context, port_num, index,
	                  pkey);
	struct sv_query_pkey q = {
		.size = sizeof(q), .port_num = port_num, .index = index,
	};
	int ret;

	ret = index < 0 ? EINVAL : sv_cmd(context, SV_IOC_QUERY_PKEY, &q);
	if (ret) {
		errno = ret;
		return -1;
	}
	*pkey = htobe16(q.pkey);
	return 0;
}

/* The table index of pkey (network order), or -1 with errno. */
SV_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				 uint8_t port_num, __be16 pkey)
{
	SV_SYSTEM_FORWARD(context, ibv_get_pkey_index, context, port_num, pkey);
	struct ibv_port_attr pattr;
	__be16 p;
	int i, ret;

	ret = sv_query_port(context, port_num, &pattr, sizeof(pattr));
	if (ret) {
		errno = ret;
		return -1;
	}
	for (i = 0; i < pattr.pkey_tbl_len; i++) {
		if (ibv_query_pkey(context, port_num, i, &p))
			return -1;
		if (p == pkey)
			return i;
	}
	errno = ENOENT;
	return -1;
}

/*
 * ibv_query_rt_values_ex: the device clock, read here with
 * clock_gettime() (the vDSO: no syscall) because it is the kernel's
 * CLOCK_MONOTONIC_RAW (SV_DEVICE_CLOCK). As mlx5 reports its cycle
 * counter: tv_sec 0, tv_nsec the ticks (ns). Unknown comp_mask bits are
 * EINVAL (mlx5); comp_mask returns what was filled.
 */
static int sv_query_rt_values(struct ibv_context *context,
			      struct ibv_values_ex *values)
{
	struct timespec ts;
	uint32_t mask = 0;

	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(SV_DEVICE_CLOCK, &ts))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = ts.tv_sec * 1000000000LL +
					    ts.tv_nsec;
		mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = mask;
	return 0;
}

/* The core's ops, installed like every other file's. */
static int sv_query_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.query_device_ex = sv_query_device_ex;
	ctx->vctx.query_rt_values = sv_query_rt_values;
	ctx->vctx.query_port = sv_query_port;
	ctx->vctx.context.ops._compat_query_device = sv_compat_query_device;
	return 0;
}
SV_CTX_PROVIDER(query, sv_query_ctx_init, NULL);
