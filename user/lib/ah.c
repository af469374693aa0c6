// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs address handles: ibv_create_ah, ibv_destroy_ah, and the
 * ones built from a received completion, ibv_init_ah_from_wc and
 * ibv_create_ah_from_wc. The kernel side is kernel/ah.c.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "sv_verbs.h"
#include "sv_system.h"

SV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
				       struct ibv_ah_attr *attr)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_create_ah, pd, attr);
	struct sv_create_ah c = { .size = sizeof(c) };
	struct sv_ah *ah;
	int ret;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	c.pd_handle = pd->handle;
	memcpy(c.attr.dgid, attr->grh.dgid.raw, sizeof(c.attr.dgid));
	c.attr.flow_label = attr->grh.flow_label;
	c.attr.sgid_index = attr->grh.sgid_index;
	c.attr.hop_limit = attr->grh.hop_limit;
	c.attr.traffic_class = attr->grh.traffic_class;
	c.attr.sl = attr->sl;
	c.attr.dlid = attr->dlid;
	c.attr.src_path_bits = attr->src_path_bits;
	c.attr.static_rate = attr->static_rate;
	c.attr.is_global = attr->is_global;
	c.attr.port_num = attr->port_num;
	ret = sv_cmd(pd->context, SV_IOC_CREATE_AH, &c);
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->ah.handle = c.handle;
	ah->attr = *attr;
	return &ah->ah;
}

SV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	SV_SYSTEM_FORWARD(ah->context, ibv_destroy_ah, ah);
	struct sv_destroy_ah d = { .size = sizeof(d), .handle = ah->handle };
	int ret;

	ret = sv_cmd(ah->context, SV_IOC_DESTROY_AH, &d);
	if (ret)
		return ret;
	free(to_svah(ah));
	return 0;
}

/* A RoCEv2 IPv4 packet's "GRH": 20 unused bytes, then the IPv4 header. */
struct sv_grh_ipv4 {
	uint8_t unused[20];
	uint8_t ver_ihl;
	uint8_t tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	uint8_t ttl;
	uint8_t protocol;
	__be16 check;
	__be32 saddr;
	__be32 daddr;
};

static bool sv_ipv4_header_ok(const struct sv_grh_ipv4 *h)
{
	const uint8_t *p = &h->ver_ihl;
	uint32_t sum = 0;
	int i;

	if (h->ver_ihl != 0x45)
		return false;
	for (i = 0; i < 20; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void sv_gid_v4mapped(uint8_t *gid, __be32 addr)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(&gid[12], &addr, 4);
}

/*
 * The index of GID gid in port's table: a RoCE v2 entry if there is one
 * (softverbs sends RoCE v2), else v1 unless v2_only. -1 if none.
 */
static int sv_find_sgid(struct ibv_context *ctx, uint8_t port,
			const uint8_t *gid, bool v2_only)
{
	struct ibv_gid_entry e;
	int i, v1 = -1;

	for (i = 0; i < SV_GID_TBL_LEN; i++) {
		if (ibv_query_gid_ex(ctx, port, i, &e, 0))
			continue;
		if (memcmp(e.gid.raw, gid, 16))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			return i;
		if (v1 < 0)
			v1 = i;
	}
	return v2_only ? -1 : v1;
}

/*
 * The address vector that answers the sender of a received packet: its
 * source becomes our destination. On RoCE the GRH (an IPv6 header, or for
 * RoCE v2 over IPv4 an IPv4 header in the GRH buffer's last 20 bytes) is
 * required; the packet's destination GID picks our source GID index.
 */
SV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				  uint8_t port_num, struct ibv_wc *wc,
				  struct ibv_grh *grh,
				  struct ibv_ah_attr *ah_attr)
{
	SV_SYSTEM_FORWARD(context, ibv_init_ah_from_wc, context, port_num, wc,
	                  grh, ah_attr);
	const struct sv_grh_ipv4 *ip4 = (const void *)grh;
	uint8_t local[16];
	bool v4;
	int idx;

	if (!context || !wc || !ah_attr || port_num != SV_PORT_NUM ||
	    !grh || !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;

	v4 = sv_ipv4_header_ok(ip4);
	if (v4) {
		sv_gid_v4mapped(ah_attr->grh.dgid.raw, ip4->saddr);
		sv_gid_v4mapped(local, ip4->daddr);
		ah_attr->grh.traffic_class = ip4->tos;
	} else if ((((const uint8_t *)grh)[0] >> 4) == 6) {
		uint32_t flow = ntohl(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		memcpy(local, grh->dgid.raw, sizeof(local));
		ah_attr->grh.flow_label = flow & 0xfffff;
		ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
	} else {
		errno = EINVAL;
		return -1;
	}
	idx = sv_find_sgid(context, port_num, local, v4);
	if (idx < 0) {
		errno = ENOENT;
		return -1;
	}
	ah_attr->grh.sgid_index = idx;
	return 0;
}

SV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
					       struct ibv_wc *wc,
					       struct ibv_grh *grh,
					       uint8_t port_num)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_create_ah_from_wc, pd, wc, grh,
	                  port_num);
	struct ibv_ah_attr attr;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
