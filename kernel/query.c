// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs: device, port, GID and P_Key queries, and the device's RoCE
 * GID table. The limits reported here are the SV_MAX_* numbers of the
 * uapi header, which the object files enforce.
 */
#include <linux/spinlock.h>
#include <linux/string.h>

#include "sv.h"

/* The only port: port numbers start at 1 in verbs. */
static int sv_check_port(u32 port_num)
{
	return port_num == 1 ? 0 : -EINVAL;
}

int sv_query_device(struct sv_file *f, void *arg)
{
	struct sv_query_device *q = arg;
	struct sv_device *sdev = f->sdev;

	if (q->comp_mask)
		return -EINVAL;

	strscpy_pad(q->fw_ver, SV_FW_VER, sizeof(q->fw_ver));
	q->node_guid = sdev->node_guid;
	q->sys_image_guid = sdev->node_guid;
	q->max_mr_size = SV_MAX_MR_SIZE;
	q->page_size_cap = SV_PAGE_SIZE_CAP;
	q->vendor_id = READ_ONCE(sdev->vendor_id);
	q->vendor_part_id = READ_ONCE(sdev->part_id);
	q->hw_ver = SV_HW_VER;
	q->max_qp = sv_obj_limit(sdev, SV_OBJ_QP);
	q->max_qp_wr = sv_depth(sdev, SV_DEPTH_QP_WR);
	q->device_cap_flags = SV_DEVICE_CAP_FLAGS;
	/* RAW_PACKET QPs and their TX offloads (steer/tx.c) need a netdev. */
	q->raw_caps = READ_ONCE(sdev->ndev) ? SV_RAW_CAP_NETDEV |
		      SV_RAW_CAP_IP_CSUM | SV_RAW_CAP_TSO : 0;
	q->max_sge = SV_MAX_SGE;
	q->max_sge_rd = SV_MAX_SGE_RD;
	q->max_cq = sv_obj_limit(sdev, SV_OBJ_CQ);
	q->max_cqe = sv_depth(sdev, SV_DEPTH_CQE);
	q->max_mr = sv_obj_limit(sdev, SV_OBJ_MR);
	q->max_mw = q->max_mr;		/* windows are MRs to the limits */
	/* ODP MRs (mr/odp.c) go everywhere a pinned one does. */
	q->odp_caps = SV_ODP_SUPPORT | SV_ODP_SUPPORT_IMPLICIT;
	q->odp_transport_caps = SV_ODP_TRANSPORT_CAPS;
	q->max_pd = sv_obj_limit(sdev, SV_OBJ_PD);
	q->max_qp_rd_atom = SV_MAX_QP_RD_ATOM;
	q->max_res_rd_atom = q->max_qp * SV_MAX_QP_RD_ATOM;
	q->max_qp_init_rd_atom = SV_MAX_QP_INIT_RD_ATOM;
	q->atomic_cap = SV_ATOMIC_HCA;
	q->max_mcast_grp = SV_MAX_MCAST_GRP;
	q->max_mcast_qp_attach = SV_MAX_MCAST_QP_ATTACH;
	q->max_total_mcast_qp_attach = SV_MAX_TOTAL_MCAST_QP_ATTACH;
	q->max_ah = sv_obj_limit(sdev, SV_OBJ_AH);
	q->max_srq = sv_obj_limit(sdev, SV_OBJ_SRQ);
	q->max_srq_wr = sv_depth(sdev, SV_DEPTH_SRQ_WR);
	q->max_srq_sge = SV_MAX_SRQ_SGE;
	q->max_pkeys = SV_MAX_PKEYS;
	q->local_ca_ack_delay = SV_LOCAL_CA_ACK_DELAY;
	q->phys_port_cnt = SV_PHYS_PORT_CNT;
	q->max_inline_data = SV_MAX_INLINE_DATA;
	q->num_comp_vectors = SV_NUM_COMP_VECTORS;
	return 0;
}

int sv_query_port(struct sv_file *f, void *arg)
{
	struct sv_query_port *q = arg;
	u32 port_num = q->port_num;
	u8 state = READ_ONCE(f->sdev->port_state);
	int ret;

	ret = sv_check_port(port_num);
	if (ret)
		return ret;
	if (q->reserved)
		return -EINVAL;

	/* Every output field is written: nothing the caller passed leaks. */
	*q = (struct sv_query_port) {
		.size = q->size,
		.port_num = port_num,
		.state = state,
		.max_mtu = SV_MTU_4096,
		/* 4096 without a netdev; a bound netdev's MTU bounds it. */
		.active_mtu = READ_ONCE(f->sdev->active_mtu),
		.gid_tbl_len = SV_GID_TBL_LEN,
		.port_cap_flags = SV_PORT_CAP_FLAGS,
		.max_msg_sz = SV_MAX_MSG_SZ,
		.pkey_tbl_len = SV_MAX_PKEYS,
		.max_vl_num = SV_MAX_VL_NUM,
		.active_width = SV_WIDTH_4X,
		.active_speed = SV_SPEED_EDR,
		.phys_state = state == SV_PORT_ACTIVE ? SV_PHYS_STATE_LINK_UP :
			      SV_PHYS_STATE_DISABLED,
		.link_layer = SV_LINK_LAYER_ETHERNET,
	};
	return 0;
}

int sv_query_gid(struct sv_file *f, void *arg)
{
	struct sv_query_gid *q = arg;
	struct sv_device *sdev = f->sdev;
	struct sv_gid_entry *e;
	int ret;

	ret = sv_check_port(q->port_num);
	if (ret)
		return ret;
	if (q->reserved || q->index >= SV_GID_TBL_LEN)
		return -EINVAL;

	spin_lock_bh(&sdev->gid_lock);
	e = &sdev->gids[q->index];
	if (e->valid) {
		memcpy(q->gid, e->gid, sizeof(q->gid));
		q->gid_type = e->type;
		q->ndev_ifindex = e->ifindex;
	} else {
		ret = -ENODATA;
	}
	spin_unlock_bh(&sdev->gid_lock);
	return ret;
}

int sv_query_pkey(struct sv_file *f, void *arg)
{
	struct sv_query_pkey *q = arg;
	int ret;

	ret = sv_check_port(q->port_num);
	if (ret)
		return ret;
	if (q->reserved || q->index >= SV_MAX_PKEYS)
		return -EINVAL;
	q->pkey = SV_DEFAULT_PKEY;
	return 0;
}

/*
 * Add a RoCE v1/v2 pair for one address to the free slots of the table.
 * Returns -ENOSPC when the table is full, 0 when the address is present.
 * Callable from process or BH context (address notifiers).
 */
int sv_gid_add(struct sv_device *sdev, const u8 gid[16], u32 ifindex)
{
	static const u32 types[] = { SV_GID_TYPE_ROCE_V1, SV_GID_TYPE_ROCE_V2 };
	unsigned int i, t = 0, slot[ARRAY_SIZE(types)];
	int ret = 0;

	spin_lock_bh(&sdev->gid_lock);
	for (i = 0; i < SV_GID_TBL_LEN; i++) {
		struct sv_gid_entry *e = &sdev->gids[i];

		if (e->valid && !memcmp(e->gid, gid, 16) &&
		    e->ifindex == ifindex)
			goto out;
		if (!e->valid && t < ARRAY_SIZE(types))
			slot[t++] = i;
	}
	if (t < ARRAY_SIZE(types)) {
		ret = -ENOSPC;
		goto out;
	}
	for (t = 0; t < ARRAY_SIZE(types); t++) {
		struct sv_gid_entry *e = &sdev->gids[slot[t]];

		memcpy(e->gid, gid, 16);
		e->type = types[t];
		e->ifindex = ifindex;
		e->valid = true;
	}
	sv_route_changed();
out:
	spin_unlock_bh(&sdev->gid_lock);
	return ret;
}

/*
 * Remove the entries of @ifindex that hold @gid (both GID types), or all
 * of them if @gid is NULL; true if there were any.
 */
static bool sv_gid_remove(struct sv_device *sdev, const u8 *gid, u32 ifindex)
{
	bool found = false;
	unsigned int i;

	spin_lock_bh(&sdev->gid_lock);
	for (i = 0; i < SV_GID_TBL_LEN; i++) {
		struct sv_gid_entry *e = &sdev->gids[i];

		if (e->valid && e->ifindex == ifindex &&
		    (!gid || !memcmp(e->gid, gid, 16))) {
			memset(e, 0, sizeof(*e));
			found = true;
		}
	}
	if (found)
		sv_route_changed();
	spin_unlock_bh(&sdev->gid_lock);
	return found;
}

/* Remove every entry of one address (both GID types). */
void sv_gid_del(struct sv_device *sdev, const u8 gid[16], u32 ifindex)
{
	sv_gid_remove(sdev, gid, ifindex);
}

/* Remove the entries of a netdev's addresses; true if there were any. */
bool sv_gid_del_netdev(struct sv_device *sdev, u32 ifindex)
{
	return sv_gid_remove(sdev, NULL, ifindex);
}

/*
 * Is @gid in the table as an address of the netdev @ifindex (or of none:
 * the node GUID's), or of any netdev if @any? Under gid_lock.
 */
static bool sv_gid_match(struct sv_device *sdev, const u8 gid[16],
			 u32 ifindex, bool any)
{
	int i;

	for (i = 0; i < SV_GID_TBL_LEN; i++) {
		const struct sv_gid_entry *e = &sdev->gids[i];

		if (e->valid && (any || !e->ifindex || e->ifindex == ifindex) &&
		    !memcmp(e->gid, gid, 16))
			return true;
	}
	return false;
}

/* Is @gid an address of the netdev @ifindex? A frame for it must come in on it. */
bool sv_gid_on(struct sv_device *sdev, const u8 gid[16], u32 ifindex)
{
	bool found;

	spin_lock_bh(&sdev->gid_lock);
	found = sv_gid_match(sdev, gid, ifindex, false);
	spin_unlock_bh(&sdev->gid_lock);
	return found;
}

/* The netdev of the entry at @index, 0 if none (or the entry is empty). */
u32 sv_gid_ifindex(struct sv_device *sdev, u32 index)
{
	u32 ifindex = 0;

	if (index >= SV_GID_TBL_LEN)
		return 0;
	spin_lock_bh(&sdev->gid_lock);
	if (sdev->gids[index].valid)
		ifindex = sdev->gids[index].ifindex;
	spin_unlock_bh(&sdev->gid_lock);
	return ifindex;
}

/*
 * A fresh table: the link-local GID fe80::<node GUID>, which is the EUI-64
 * of the MAC, as entries 0 (RoCE v1) and 1 (RoCE v2).
 */
/* Is @gid in the device's table? (The data path routes by it.) */
bool sv_gid_present(struct sv_device *sdev, const u8 gid[16])
{
	bool found;

	spin_lock_bh(&sdev->gid_lock);
	found = sv_gid_match(sdev, gid, 0, true);
	spin_unlock_bh(&sdev->gid_lock);
	return found;
}

/* The index of @gid with GID type @type in the table, or -ENOENT. */
int sv_gid_index(struct sv_device *sdev, const u8 gid[16], u32 type)
{
	int i, found = -ENOENT;

	spin_lock_bh(&sdev->gid_lock);
	for (i = 0; i < SV_GID_TBL_LEN && found < 0; i++)
		if (sdev->gids[i].valid && sdev->gids[i].type == type &&
		    !memcmp(sdev->gids[i].gid, gid, 16))
			found = i;
	spin_unlock_bh(&sdev->gid_lock);
	return found;
}

/* The GID at @index, zero if the entry is empty. */
void sv_gid_get(struct sv_device *sdev, u32 index, u8 gid[16])
{
	memset(gid, 0, 16);
	if (index >= SV_GID_TBL_LEN)
		return;
	spin_lock_bh(&sdev->gid_lock);
	if (sdev->gids[index].valid)
		memcpy(gid, sdev->gids[index].gid, 16);
	spin_unlock_bh(&sdev->gid_lock);
}

void sv_gid_table_init(struct sv_device *sdev)
{
	u8 gid[16] = { 0xfe, 0x80 };

	spin_lock_init(&sdev->gid_lock);
	memset(sdev->gids, 0, sizeof(sdev->gids));
	memcpy(&gid[8], &sdev->node_guid, 8);
	sv_gid_add(sdev, gid, 0);
}
