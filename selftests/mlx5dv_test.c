// SPDX-License-Identifier: GPL-2.0
/*
 * libmlx5.so.1's softverbs face (Documentation/mlx5dv.rst), as an mlx5
 * program sees it: this test links build/compat's libibverbs.so.1 and
 * libmlx5.so.1, as a program built against rdma-core does.
 *
 *   - mlx5dv_is_supported(), mlx5dv_open_device(), mlx5dv_query_device()
 *     on softverbs devices and on a device that is not one;
 *   - the calls that hand out mlx5 hardware layouts: EOPNOTSUPP;
 *   - mlx5dv_create_qp(): the errno of every comp_mask bit and create flag
 *     on every QP type, as rdma-core's mlx5 provider and mlx5_ib give it;
 *   - on a device bound to one end of a veth pair whose other end is in a
 *     network namespace of the test's own: TUNNEL_OFFLOADS (VXLAN and GRE
 *     frames from the far side with right and wrong inner and outer
 *     checksums: IBV_WC_IP_CSUM_OK on RAW_PACKET and RSS QPs, with and
 *     without the flag), TIR_ALLOW_SELF_LOOPBACK_UC/_MC (what QPs of one
 *     context receive of what another QP of it sends), and EPERM for an
 *     unprivileged caller's RAW_PACKET QP.
 */
#include <errno.h>
#include <grp.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#define SV_VETH_FIXTURE	dv
#define NS	"svdv_peer"
#define NEAR	"svdv0"
#define FAR	"svdv1"
#define DEV	"svdv"
#define NEAR_IP	"10.83.0.1"
#define FAR_IP	"10.83.0.2"
#define NOBODY	65534

#include "sv_steer_test.h"

/* Each veth test makes and removes a pair and a namespace: slow on TCG */
#define DV_TIMEOUT	120

/* ---- mlx5dv_create_qp() on softverbs0 (no netdev) ---- */

FIXTURE(lo) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

FIXTURE_SETUP(lo)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
}

FIXTURE_TEARDOWN(lo)
{
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

static void qp_attr(struct ibv_qp_init_attr_ex *ia, struct ibv_pd *pd,
		    struct ibv_cq *cq, enum ibv_qp_type type)
{
	memset(ia, 0, sizeof(*ia));
	ia->qp_type = type;
	ia->send_cq = ia->recv_cq = cq;
	ia->cap.max_send_wr = ia->cap.max_recv_wr = 4;
	ia->cap.max_send_sge = ia->cap.max_recv_sge = 1;
	ia->comp_mask = IBV_QP_INIT_ATTR_PD;
	ia->pd = pd;
}

/* mlx5dv_create_qp() with @mask and @flags: 0, or its errno. */
static int dv_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ia,
		     uint64_t mask, uint32_t flags)
{
	struct mlx5dv_qp_init_attr da = { .comp_mask = mask,
					  .create_flags = flags };
	struct ibv_qp *qp;

	errno = 0;
	qp = mlx5dv_create_qp(ctx, ia, &da);
	if (!qp)
		return errno ? errno : -1;
	return ibv_destroy_qp(qp) ? -2 : 0;
}

#define CF	MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS

/* A device that is not a softverbs one, as rdma-core lists an mlx5. */
static struct ibv_device *foreign_device(void)
{
	struct ibv_device *d = calloc(1, sizeof(*d));

	if (d) {
		strcpy(d->name, "mlx5_0");
		strcpy(d->ibdev_path, "/sys/class/infiniband/mlx5_0");
	}
	return d;
}

TEST_F(lo, supported_and_open)
{
	struct mlx5dv_context_attr oa = {};
	struct ibv_device *fd = foreign_device();
	struct ibv_context fctx = { .device = fd };
	struct mlx5dv_context dattr = {};
	struct ibv_qp_init_attr_ex ia;
	struct ibv_context *c;
	int i;

	ASSERT_NE(NULL, fd);
	for (i = 0; self->list[i]; i++)
		EXPECT_TRUE(mlx5dv_is_supported(self->list[i]));
	EXPECT_FALSE(mlx5dv_is_supported(fd));

	/* NULL or zero attributes open it; it is an ordinary context. */
	c = mlx5dv_open_device(self->list[0], NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, ibv_close_device(c));
	c = mlx5dv_open_device(self->list[0], &oa);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(self->list[0], c->device);
	EXPECT_EQ(0, mlx5dv_query_device(c, &dattr));
	EXPECT_EQ(0, ibv_close_device(c));
	/* rdma-core 44: any comp_mask bit, any flag but DEVX: EINVAL */
	oa.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_open_device(self->list[0], &oa));
	EXPECT_EQ(EINVAL, errno);
	oa.comp_mask = 0;
	oa.flags = 1 << 1;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_open_device(self->list[0], &oa));
	EXPECT_EQ(EINVAL, errno);
	/* A DEVX context opens (for DR, mkeys); DevX objects do not */
	oa.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	c = mlx5dv_open_device(self->list[0], &oa);
	ASSERT_NE(NULL, c);
	{
		uint32_t in[4] = {}, out[4];

		errno = 0;
		EXPECT_EQ(NULL, mlx5dv_devx_obj_create(c, in, sizeof(in), out,
						       sizeof(out)));
		EXPECT_EQ(EOPNOTSUPP, errno);
	}
	EXPECT_EQ(0, ibv_close_device(c));

	/* Not a softverbs device or context: EOPNOTSUPP, as not mlx5 */
	oa.flags = 0;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_open_device(fd, &oa));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, mlx5dv_query_device(&fctx, &dattr));
	qp_attr(&ia, self->pd, self->cq, IBV_QPT_RC);
	EXPECT_EQ(EOPNOTSUPP, dv_create(&fctx, &ia, 0, 0));
	free(fd);
}

TEST_F(lo, query_device)
{
	const uint64_t always = MLX5DV_CONTEXT_MASK_CQE_COMPRESION |
		MLX5DV_CONTEXT_MASK_SWP | MLX5DV_CONTEXT_MASK_STRIDING_RQ |
		MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS |
		MLX5DV_CONTEXT_MASK_DYN_BFREGS |
		MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS |
		MLX5DV_CONTEXT_MASK_DC_ODP_CAPS |
		MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD |
		MLX5DV_CONTEXT_MASK_DCI_STREAMS |
		MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH |
		MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD;
	struct mlx5dv_context a, zero;

	/* Everything asked, and bits nobody knows: these are answered */
	memset(&a, 0xa5, sizeof(a));
	a.comp_mask = ~0ULL;
	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &a));
	EXPECT_EQ(always, a.comp_mask);
	EXPECT_EQ(0, a.version);
	EXPECT_EQ(MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE, a.flags);
	memset(&zero, 0, sizeof(zero));
	EXPECT_EQ(0, memcmp(&zero.cqe_comp_caps, &a.cqe_comp_caps,
			    sizeof(a.cqe_comp_caps)));
	EXPECT_EQ(0, memcmp(&zero.sw_parsing_caps, &a.sw_parsing_caps,
			    sizeof(a.sw_parsing_caps)));
	EXPECT_EQ(0, memcmp(&zero.striding_rq_caps, &a.striding_rq_caps,
			    sizeof(a.striding_rq_caps)));
	/* softverbs0 has no netdev: no RAW_PACKET QPs, no tunnels */
	EXPECT_EQ(0, a.tunnel_offloads_caps);
	EXPECT_EQ(0, a.max_dynamic_bfregs);
	EXPECT_EQ(0, a.flow_action_flags);
	EXPECT_EQ(0x3f, a.dc_odp_caps);	/* as RC's (dc_test) */
	EXPECT_EQ(0, memcmp(&zero.sig_caps, &a.sig_caps, sizeof(a.sig_caps)));
	/* DCI streams (dc_test) */
	EXPECT_EQ(4, a.dci_streams_caps.max_log_num_concurent);
	EXPECT_EQ(4, a.dci_streams_caps.max_log_num_errored);
	EXPECT_EQ(0, a.max_wr_memcpy_length);
	EXPECT_EQ(0, memcmp(&zero.crypto_caps, &a.crypto_caps,
			    sizeof(a.crypto_caps)));
	/* No clock page, no mapped clock, no LAG: not answered, untouched */
	memset(&a, 0xa5, sizeof(a));
	a.comp_mask = MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
		      MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK |
		      MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS;
	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &a));
	EXPECT_EQ(0, a.comp_mask);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, a.max_clock_info_update_nsec);
	EXPECT_EQ(0xa5, a.num_lag_ports);
	/* Nothing asked: flags only, the rest untouched */
	memset(&a, 0xa5, sizeof(a));
	a.comp_mask = 0;
	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &a));
	EXPECT_EQ(0, a.comp_mask);
	EXPECT_EQ(MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE, a.flags);
	EXPECT_EQ(0xa5a5a5a5, a.tunnel_offloads_caps);
	EXPECT_EQ(0xa5a5a5a5, a.dc_odp_caps);
}

/* What exposes mlx5 hardware layouts stays EOPNOTSUPP. */
TEST_F(lo, hardware_layouts)
{
	struct ibv_alloc_dm_attr dm = { .length = 4096 };
	struct mlx5dv_alloc_dm_attr mdm = {
		.type = MLX5DV_DM_TYPE_MEMIC,
	};
	struct mlx5dv_cq mcq = {};
	struct mlx5dv_obj obj = { .cq = { .in = self->cq, .out = &mcq } };
	struct mlx5dv_clock_info ci;
	uint32_t in[4] = {}, out[4];

	EXPECT_EQ(EOPNOTSUPP, mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_devx_obj_create(self->ctx, in, sizeof(in), out,
					       sizeof(out)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, mlx5dv_devx_general_cmd(self->ctx, in, sizeof(in),
						      out, sizeof(out)));
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_devx_alloc_uar(self->ctx, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_alloc_var(self->ctx, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_alloc_dm(self->ctx, &dm, &mdm));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, mlx5dv_get_clock_info(self->ctx, &ci));
}

TEST_F(lo, create_qp_masks)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp *qp;

	qp_attr(&ia, self->pd, self->cq, IBV_QPT_RC);
	/* No mlx5 attributes, or none selected: an ordinary QP */
	qp = mlx5dv_create_qp(self->ctx, &ia, NULL);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(IBV_QPT_RC, qp->qp_type);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, dv_create(self->ctx, &ia, 0, 0));
	/* create_flags are read only with their comp_mask bit */
	EXPECT_EQ(0, dv_create(self->ctx, &ia, 0, ~0U));
	EXPECT_EQ(0, dv_create(self->ctx, &ia, CF, 0));

	/* Unknown comp_mask bits and create flags: EINVAL */
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, 1 << 4, 0));
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, 1ULL << 63, 0));
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, CF, 1 << 7));
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, CF, 1U << 31));
	/* Scatter to CQE disabled and allowed at once */
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, CF,
				    MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |
				    MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE));
	/* Signature pipelining needs SQD->RTS: not on this device */
	EXPECT_EQ(EOPNOTSUPP, dv_create(self->ctx, &ia, CF,
					MLX5DV_QP_CREATE_SIG_PIPELINING));

	/* DC (dc_test): a DRIVER QP only, of a known dc_type (0 is none) */
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia,
				    MLX5DV_QP_INIT_ATTR_MASK_DC, 0));
	ia.qp_type = IBV_QPT_DRIVER;
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia,
				    MLX5DV_QP_INIT_ATTR_MASK_DC, 0));
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, 0, 0));
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_qp(self->ctx, &ia, NULL));
	EXPECT_EQ(EINVAL, errno);
	/*
	 * send_ops_flags (mkey_test): none is an ordinary QP; DCI streams
	 * of no DCI: ignored
	 */
	ia.qp_type = IBV_QPT_RC;
	EXPECT_EQ(0, dv_create(self->ctx, &ia,
			       MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, 0));
	EXPECT_EQ(0, dv_create(self->ctx, &ia,
			       MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, 0));
	/* SOURCE_QPN on another QP than UD, as mlx5's create_qp() */
	ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.create_flags = IBV_QP_CREATE_SOURCE_QPN;
	ia.source_qpn = 100;
	EXPECT_EQ(EINVAL, dv_create(self->ctx, &ia, 0, 0));
}

static const uint32_t dv_flags[] = {
	MLX5DV_QP_CREATE_TUNNEL_OFFLOADS,
	MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC,
	MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC,
	MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
	MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE,
	MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE,
};

/* The errno of each flag of dv_flags[] on each QP type (0: created). */
enum { T_RC, T_UC, T_UD, T_RAW, T_RSS, T_N };
static const int dv_errno[T_N][6] = {
	/*         TUNNEL  SELF_UC SELF_MC DISABLE ALLOW   CREDIT */
	[T_RC]  = { EINVAL, EINVAL, EINVAL, 0,      0,      0 },
	[T_UC]  = { EINVAL, EINVAL, EINVAL, 0,      0,      EINVAL },
	[T_UD]  = { EINVAL, EINVAL, EINVAL, 0,      0,      EINVAL },
	[T_RAW] = { 0,      0,      0,      0,      0,      EINVAL },
	[T_RSS] = { 0,      0,      0,      0,      EINVAL, EINVAL },
};

TEST_F(lo, create_flags_by_type)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC,
						  IBV_QPT_UD };
	struct ibv_qp_init_attr_ex ia;
	unsigned int t, i;

	for (t = 0; t < 3; t++) {
		for (i = 0; i < 6; i++) {
			qp_attr(&ia, self->pd, self->cq, types[t]);
			EXPECT_EQ(dv_errno[t][i],
				  dv_create(self->ctx, &ia, CF, dv_flags[i]))
				TH_LOG("type %d flag %#x", types[t], dv_flags[i]);
		}
	}
	/* No netdev, no RAW_PACKET QP, with or without flags */
	qp_attr(&ia, self->pd, self->cq, IBV_QPT_RAW_PACKET);
	EXPECT_EQ(EOPNOTSUPP, dv_create(self->ctx, &ia, CF,
					MLX5DV_QP_CREATE_TUNNEL_OFFLOADS));
}

/* ---- on a device bound to a veth end ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* An IPv4 header at @p (20 bytes) for @len bytes of @proto, checksummed. */
static void put_ipv4(uint8_t *p, const char *src, const char *dst,
		     uint8_t proto, size_t len)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, 20 + len);
	p[8] = 64;
	p[9] = proto;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	put16(p + 10, csum_fold(sum16(p, 20, 0)));
}

/*
 * An IP packet at @p of TCP or UDP (@proto) with 32 payload bytes, every
 * checksum right; its length. *l4: the offset of its L4 header.
 */
static size_t put_ip(uint8_t *p, bool v6, int proto, const char *src,
		     const char *dst, size_t *l4)
{
	size_t hl = v6 ? 40 : 20, l4len = (proto == IPPROTO_TCP ? 20 : 8) + 32;
	uint8_t *h = p + hl;
	uint32_t s;

	memset(h, 0, l4len);
	put16(h, 40000);
	put16(h + 2, 5000);
	if (proto == IPPROTO_TCP) {
		h[12] = 5 << 4;
		h[13] = 0x10;		/* ACK */
		put16(h + 14, 512);
	} else {
		put16(h + 4, l4len);
	}
	sv_fill((char *)h + l4len - 32, 32, 3);
	if (v6) {
		memset(p, 0, 40);
		p[0] = 0x60;
		put16(p + 4, l4len);
		p[6] = proto;
		p[7] = 64;
		inet_pton(AF_INET6, "fd00::2", p + 8);
		inet_pton(AF_INET6, "fd00::1", p + 24);
		s = sum16(p + 8, 32, 0);
	} else {
		put_ipv4(p, src, dst, proto, l4len);
		s = sum16(p + 12, 8, 0);
	}
	s = sum16(h, l4len, s + proto + l4len);
	put16(h + (proto == IPPROTO_TCP ? 16 : 6), csum_fold(s) ?: 0xffff);
	*l4 = hl;
	return hl + l4len;
}

enum tun { TUN_NONE, TUN_VXLAN, TUN_GRE, TUN_GRE_TEB, TUN_GRE_CSUM };

struct pkt_opts {
	enum tun tun;
	bool v6;		/* the inner packet is IPv6 */
	int proto;		/* the inner L4: IPPROTO_UDP (0) or _TCP */
	bool bad_inner_ip, bad_inner_l4, bad_outer_ip, bad_outer_l4;
	bool zero_outer_udp;	/* VXLAN: no outer UDP checksum */
};

/*
 * A frame from the far end to the device: an IPv4 packet to NEAR_IP,
 * tunnelling (VXLAN, GRE of IPv4 or of Ethernet, GRE with a checksum) an
 * inner packet, with the checksums @o breaks; TUN_NONE: the inner packet
 * is the frame's own.
 */
static void mk_pkt(struct frame *f, const uint8_t *dst, const uint8_t *src,
		   const struct pkt_opts *o)
{
	static const uint8_t imac[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	int proto = o->proto ?: IPPROTO_UDP;
	size_t c = 14 + 20, inner, l4, n, tot;
	uint8_t *b = f->b;
	uint32_t s;

	memset(f->b, 0, sizeof(f->b));
	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	put16(b + 12, ETH_P_IP);
	switch (o->tun) {
	case TUN_NONE:
		c = 14;
		break;
	case TUN_VXLAN:
	case TUN_GRE_TEB:
		if (o->tun == TUN_VXLAN) {
			c += 8;
			b[c] = 0x08;		/* a VNI follows */
			b[c + 6] = 42;		/* VNI 42 << 8 */
			c += 8;
		} else {
			put16(b + c + 2, 0x6558);
			c += 4;
		}
		/* an Ethernet frame inside */
		memcpy(b + c, imac, 12);
		put16(b + c + 12, o->v6 ? ETH_P_IPV6 : ETH_P_IP);
		c += 14;
		break;
	case TUN_GRE:
		put16(b + c + 2, o->v6 ? ETH_P_IPV6 : ETH_P_IP);
		c += 4;
		break;
	case TUN_GRE_CSUM:
		put16(b + c, 0x8000);
		put16(b + c + 2, o->v6 ? ETH_P_IPV6 : ETH_P_IP);
		c += 8;
		break;
	}
	inner = c;
	if (o->tun == TUN_NONE)
		n = put_ip(b + inner, false, proto, FAR_IP, NEAR_IP, &l4);
	else
		n = put_ip(b + inner, o->v6, proto, "192.168.7.2",
			   "192.168.7.1", &l4);
	if (o->bad_inner_ip && !o->v6)
		b[inner + 10] ^= 0x5a;
	if (o->bad_inner_l4)
		b[inner + l4 + (proto == IPPROTO_TCP ? 16 : 6)] ^= 0x5a;
	tot = inner + n;
	f->len = tot;
	if (o->tun == TUN_NONE)
		return;
	put_ipv4(b + 14, FAR_IP, NEAR_IP,
		 o->tun == TUN_VXLAN ? IPPROTO_UDP : IPPROTO_GRE, tot - 34);
	if (o->bad_outer_ip)
		b[14 + 10] ^= 0x5a;
	if (o->tun == TUN_VXLAN) {
		put16(b + 34, 50000);
		put16(b + 36, 4789);
		put16(b + 38, tot - 34);
		if (!o->zero_outer_udp) {
			s = sum16(b + 14 + 12, 8, IPPROTO_UDP + tot - 34);
			put16(b + 40, csum_fold(sum16(b + 34, tot - 34, s)) ?: 0xffff);
		}
		if (o->bad_outer_l4)
			b[41] ^= 0x5a;
	} else if (o->tun == TUN_GRE_CSUM) {
		put16(b + 38, csum_fold(sum16(b + 34, tot - 34, 0)));
		if (o->bad_outer_l4)
			b[39] ^= 0x5a;
	}
}

static int far_send_frame(int s, int ifindex, const struct frame *f)
{
	return far_send(s, ifindex, f->b, f->len);
}

/* A RAW_PACKET QP from mlx5dv_create_qp(), in RTS, receives posted. */
static int dvqp_open(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct rawqp *r, uint32_t flags)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 256,
					   .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_init_attr_ex ia;
	struct mlx5dv_qp_init_attr da = { .comp_mask = CF,
					  .create_flags = flags };
	int i;

	memset(r, 0, sizeof(*r));
	r->cqx = ibv_create_cq_ex(ctx, &cqa);
	if (!r->cqx)
		return -1;
	r->cq = ibv_cq_ex_to_cq(r->cqx);
	r->buf = aligned_alloc(4096, NRECV * 2048 + BUFSZ);
	if (!r->buf)
		return -1;
	r->mr = ibv_reg_mr(pd, r->buf, NRECV * 2048 + BUFSZ,
			   IBV_ACCESS_LOCAL_WRITE);
	qp_attr(&ia, pd, r->cq, IBV_QPT_RAW_PACKET);
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 64;
	r->qp = mlx5dv_create_qp(ctx, &ia, &da);
	if (!r->mr || !r->qp || raw_qp_init(r->qp))
		return -1;
	for (i = 0; i < NRECV; i++)
		if (post_rq(r, i))
			return -1;
	return 0;
}

/* One completion within @ms: its wc_flags (and status), else -1. */
static int rx_flags(struct ibv_cq_ex *cq, int ms, int *status)
{
	struct ibv_poll_cq_attr pa = {};
	int waited = 0, flags;

	for (;;) {
		if (!ibv_start_poll(cq, &pa)) {
			*status = cq->status;
			flags = ibv_wc_read_wc_flags(cq);
			ibv_end_poll(cq);
			return flags;
		}
		if (waited >= ms * sv_slow())
			return -1;
		usleep(1000);
		waited++;
	}
}

/* Send @f from the far end: IBV_WC_IP_CSUM_OK of its completion, or -1. */
static int csum_ok_of(struct __test_metadata *_metadata,
		      FIXTURE_DATA(dv) *self, struct rawqp *r,
		      const struct frame *f)
{
	int flags, status = -1;

	if (far_send_frame(self->pkt, self->far_ifindex, f))
		return -1;
	flags = rx_flags(r->cqx, 3000, &status);
	if (flags < 0 || status != IBV_WC_SUCCESS)
		return -1;
	/* Every buffer is alike: post one back (any index will do). */
	post_rq(r, 0);
	EXPECT_EQ(0, flags & ~IBV_WC_IP_CSUM_OK);
	return !!(flags & IBV_WC_IP_CSUM_OK);
}

/* Every IPv4 packet to NEAR_IP on the device's MAC. */
static struct ibv_flow *ip_rule(struct ibv_qp *qp, const uint8_t *mac)
{
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&a, mac, ETH_P_IP);
	fa_ipv4(&a, NULL, NEAR_IP);
	return ibv_create_flow(qp, &a.attr);
}

/*
 * The frames of the tunnel tests and IBV_WC_IP_CSUM_OK for each: with
 * TUNNEL_OFFLOADS (inner and outer must be right, the inner packet IPv4)
 * and without (the outer headers are the frame's: a VXLAN one is UDP, a
 * GRE one neither TCP nor UDP).
 */
static const struct {
	const char *name;
	struct pkt_opts o;
	int tunnel, plain;
} csum_cases[] = {
	{ "udp", { .tun = TUN_NONE }, 1, 1 },
	{ "udp bad l4", { .tun = TUN_NONE, .bad_inner_l4 = 1 }, 0, 0 },
	{ "vxlan", { .tun = TUN_VXLAN }, 1, 1 },
	{ "vxlan tcp", { .tun = TUN_VXLAN, .proto = IPPROTO_TCP }, 1, 1 },
	{ "vxlan inner l4 bad", { .tun = TUN_VXLAN, .bad_inner_l4 = 1 }, 0, 1 },
	{ "vxlan inner tcp bad", { .tun = TUN_VXLAN, .proto = IPPROTO_TCP,
				   .bad_inner_l4 = 1 }, 0, 1 },
	{ "vxlan inner ip bad", { .tun = TUN_VXLAN, .bad_inner_ip = 1 }, 0, 1 },
	{ "vxlan outer udp bad", { .tun = TUN_VXLAN, .bad_outer_l4 = 1 }, 0, 0 },
	{ "vxlan outer udp 0", { .tun = TUN_VXLAN, .zero_outer_udp = 1 }, 1, 1 },
	{ "vxlan outer ip bad", { .tun = TUN_VXLAN, .bad_outer_ip = 1 }, 0, 0 },
	{ "vxlan inner ipv6", { .tun = TUN_VXLAN, .v6 = 1 }, 0, 1 },
	{ "gre", { .tun = TUN_GRE }, 1, 0 },
	{ "gre inner l4 bad", { .tun = TUN_GRE, .bad_inner_l4 = 1 }, 0, 0 },
	{ "gre inner ip bad", { .tun = TUN_GRE, .bad_inner_ip = 1 }, 0, 0 },
	{ "gre outer ip bad", { .tun = TUN_GRE, .bad_outer_ip = 1 }, 0, 0 },
	{ "gre teb tcp", { .tun = TUN_GRE_TEB, .proto = IPPROTO_TCP }, 1, 0 },
	{ "gre teb l4 bad", { .tun = TUN_GRE_TEB, .bad_inner_l4 = 1 }, 0, 0 },
	{ "gre csum", { .tun = TUN_GRE_CSUM }, 1, 0 },
	{ "gre csum bad", { .tun = TUN_GRE_CSUM, .bad_outer_l4 = 1 }, 0, 0 },
};

#define N_CASES	(sizeof(csum_cases) / sizeof(csum_cases[0]))

TEST_F_TIMEOUT(dv, query_bound, DV_TIMEOUT)
{
	struct mlx5dv_context a = {
		.comp_mask = MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS,
	};

	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &a));
	EXPECT_EQ(MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS, a.comp_mask);
	EXPECT_EQ(MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_VXLAN |
		  MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GRE,
		  a.tunnel_offloads_caps);
}

/* An RSS QP over @t, from mlx5dv_create_qp() with @flags, or plain. */
static struct ibv_qp *rss_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_rwq_ind_table *t, uint64_t fields,
			     bool dv, uint32_t flags)
{
	static uint8_t key[40] = { 1, 2, 3 };
	struct mlx5dv_qp_init_attr da = { .comp_mask = CF,
					  .create_flags = flags };
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd, .rwq_ind_tbl = t,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(key), .rx_hash_key = key,
			.rx_hash_fields_mask = fields,
		},
	};

	errno = 0;
	return dv ? mlx5dv_create_qp(ctx, &ia, &da) : ibv_create_qp_ex(ctx, &ia);
}

struct rss {
	struct ibv_cq_ex *cqx;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *t;
	char *buf;
	struct ibv_mr *mr;
};

static int rss_open(struct ibv_context *ctx, struct ibv_pd *pd, struct rss *r)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 64,
					   .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = NRECV,
				       .max_sge = 1, .pd = pd };
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr ta = {};
	int i;

	memset(r, 0, sizeof(*r));
	r->cqx = ibv_create_cq_ex(ctx, &cqa);
	r->buf = aligned_alloc(4096, NRECV * 2048);
	if (!r->cqx || !r->buf)
		return -1;
	r->mr = ibv_reg_mr(pd, r->buf, NRECV * 2048, IBV_ACCESS_LOCAL_WRITE);
	wa.cq = ibv_cq_ex_to_cq(r->cqx);
	r->wq = ibv_create_wq(ctx, &wa);
	if (!r->mr || !r->wq)
		return -1;
	for (i = 0; i < NRECV; i++) {
		struct ibv_sge sg = { (uintptr_t)(r->buf + i * 2048), 2048,
				      r->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_wq_recv(r->wq, &wr, &bad))
			return -1;
	}
	if (ibv_modify_wq(r->wq, &ma))
		return -1;
	ta.ind_tbl = &r->wq;
	r->t = ibv_create_rwq_ind_table(ctx, &ta);
	return r->t ? 0 : -1;
}

static void rss_close(struct rss *r)
{
	if (r->t)
		ibv_destroy_rwq_ind_table(r->t);
	if (r->wq)
		ibv_destroy_wq(r->wq);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(r->cqx));
	free(r->buf);
}

TEST_F_TIMEOUT(dv, create_flags_raw_rss, DV_TIMEOUT)
{
	const uint64_t inner = IBV_RX_HASH_INNER | IBV_RX_HASH_SRC_IPV4;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rss r;
	unsigned int i;

	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	for (i = 0; i < 6; i++) {
		qp_attr(&ia, self->pd, cq, IBV_QPT_RAW_PACKET);
		EXPECT_EQ(dv_errno[T_RAW][i],
			  dv_create(self->ctx, &ia, CF, dv_flags[i]))
			TH_LOG("flag %#x", dv_flags[i]);
	}
	qp_attr(&ia, self->pd, cq, IBV_QPT_RAW_PACKET);
	EXPECT_EQ(0, dv_create(self->ctx, &ia, CF,
			       MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |
			       MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |
			       MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC |
			       MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE));

	ASSERT_EQ(0, rss_open(self->ctx, self->pd, &r));
	for (i = 0; i < 6; i++) {
		qp = rss_qp(self->ctx, self->pd, r.t, IBV_RX_HASH_SRC_IPV4,
			    true, dv_flags[i]);
		EXPECT_EQ(dv_errno[T_RSS][i], qp ? 0 : errno)
			TH_LOG("flag %#x", dv_flags[i]);
		if (qp)
			EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
	/* An mlx5 TIR hashes inner fields only with tunnel offloads */
	qp = rss_qp(self->ctx, self->pd, r.t, inner, true, 0);
	EXPECT_EQ(NULL, qp);
	EXPECT_EQ(EOPNOTSUPP, errno);
	qp = rss_qp(self->ctx, self->pd, r.t, inner, true,
		    MLX5DV_QP_CREATE_TUNNEL_OFFLOADS);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	/* ... which ibv_create_qp_ex() cannot ask for: it hashes anyway */
	qp = rss_qp(self->ctx, self->pd, r.t, inner, false, 0);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	rss_close(&r);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* Without CAP_NET_RAW, a RAW_PACKET QP is EPERM, flags or none. */
TEST_F_TIMEOUT(dv, unprivileged, DV_TIMEOUT)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_cq *cq;
	int st;
	pid_t pid;

	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = 0;

		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		qp_attr(&ia, self->pd, cq, IBV_QPT_RAW_PACKET);
		bad |= dv_create(self->ctx, &ia, 0, 0) != EPERM;
		bad |= dv_create(self->ctx, &ia, CF,
				 MLX5DV_QP_CREATE_TUNNEL_OFFLOADS) != EPERM;
		/* Other QPs are anybody's */
		qp_attr(&ia, self->pd, cq, IBV_QPT_UD);
		bad |= dv_create(self->ctx, &ia, CF,
				 MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE) != 0;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* TUNNEL_OFFLOADS on RAW_PACKET QPs: each frame, with and without. */
TEST_F_TIMEOUT(dv, tunnel_offloads_raw, DV_TIMEOUT)
{
	struct ibv_flow *fl;
	struct rawqp r;
	struct frame f;
	unsigned int i, with;

	for (with = 0; with < 2; with++) {
		ASSERT_EQ(0, dvqp_open(self->ctx, self->pd, &r,
				       with ? MLX5DV_QP_CREATE_TUNNEL_OFFLOADS :
					      0));
		fl = ip_rule(r.qp, self->mac);
		ASSERT_NE(NULL, fl);
		for (i = 0; i < N_CASES; i++) {
			mk_pkt(&f, self->mac, self->far_mac, &csum_cases[i].o);
			EXPECT_EQ(with ? csum_cases[i].tunnel :
					 csum_cases[i].plain,
				  csum_ok_of(_metadata, self, &r, &f))
				TH_LOG("%s, %s tunnel offloads",
				       csum_cases[i].name, with ? "with" : "without");
		}
		EXPECT_EQ(0, ibv_destroy_flow(fl));
		rawqp_close(&r);
	}
	/* A QP of ibv_create_qp_ex() reports as one without the flag. */
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fl = ip_rule(r.qp, self->mac);
	ASSERT_NE(NULL, fl);
	for (i = 0; i < N_CASES; i++) {
		mk_pkt(&f, self->mac, self->far_mac, &csum_cases[i].o);
		EXPECT_EQ(csum_cases[i].plain, csum_ok_of(_metadata, self, &r, &f))
			TH_LOG("%s, ibv_create_qp_ex", csum_cases[i].name);
	}
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	rawqp_close(&r);
}

/* TUNNEL_OFFLOADS on an RSS QP: its WQs report for its TIR. */
TEST_F_TIMEOUT(dv, tunnel_offloads_rss, DV_TIMEOUT)
{
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	struct frame f;
	unsigned int i, with;
	struct rss r;

	ASSERT_EQ(0, rss_open(self->ctx, self->pd, &r));
	for (with = 0; with < 2; with++) {
		qp = rss_qp(self->ctx, self->pd, r.t, IBV_RX_HASH_SRC_IPV4 |
			    IBV_RX_HASH_DST_IPV4, true,
			    with ? MLX5DV_QP_CREATE_TUNNEL_OFFLOADS : 0);
		ASSERT_NE(NULL, qp);
		fl = ip_rule(qp, self->mac);
		ASSERT_NE(NULL, fl);
		for (i = 0; i < N_CASES; i++) {
			struct ibv_sge sg = { (uintptr_t)r.buf, 2048,
					      r.mr->lkey };
			struct ibv_recv_wr wr = { .sg_list = &sg, .num_sge = 1 };
			struct ibv_recv_wr *bad;
			int flags, status = -1;

			mk_pkt(&f, self->mac, self->far_mac, &csum_cases[i].o);
			ASSERT_EQ(0, far_send_frame(self->pkt, self->far_ifindex,
						    &f));
			flags = rx_flags(r.cqx, 3000, &status);
			/* Every buffer is alike: one back for the next */
			EXPECT_EQ(0, ibv_post_wq_recv(r.wq, &wr, &bad));
			EXPECT_EQ(IBV_WC_SUCCESS, status);
			EXPECT_EQ(with ? csum_cases[i].tunnel :
					 csum_cases[i].plain,
				  flags < 0 ? -1 : !!(flags & IBV_WC_IP_CSUM_OK))
				TH_LOG("%s, RSS %s tunnel offloads",
				       csum_cases[i].name,
				       with ? "with" : "without");
		}
		EXPECT_EQ(0, ibv_destroy_flow(fl));
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
	rss_close(&r);
}

/*
 * TIR_ALLOW_SELF_LOOPBACK_UC/_MC: a RAW_PACKET QP sends a frame to the
 * device's own MAC and one to a multicast MAC; which QPs of the device
 * receive them. QPs of mlx5dv_create_qp() in the sender's context only
 * with the flag of the frame's kind (mlx5's TIR self_lb_block bits, the
 * transport domain being the context); those of another context, and
 * those of ibv_create_qp_ex(), always.
 */
TEST_F_TIMEOUT(dv, self_loopback, DV_TIMEOUT)
{
	static const uint8_t mc[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x42 };
	static const uint32_t cases[] = {
		0,
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC,
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC,
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC,
	};
	struct ibv_flow *fl[6];
	struct rawqp s, p, d, o;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_wc wc;
	struct frame f;
	unsigned int i, k;

	ctx2 = sv_open_named(self->list, DEV);
	ASSERT_NE(NULL, ctx2);
	pd2 = ibv_alloc_pd(ctx2);
	ASSERT_NE(NULL, pd2);
	/* The sender, a plain QP of the context, one of another context */
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &s, IBV_QPT_RAW_PACKET, 0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &p, IBV_QPT_RAW_PACKET, 0));
	ASSERT_EQ(0, dvqp_open(ctx2, pd2, &o, 0));
	fl[0] = eth_rule(p.qp, self->mac, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fl[1] = eth_rule(p.qp, mc, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fl[2] = eth_rule(o.qp, self->mac, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fl[3] = eth_rule(o.qp, mc, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	for (i = 0; i < 4; i++)
		ASSERT_NE(NULL, fl[i]);

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ASSERT_EQ(0, dvqp_open(self->ctx, self->pd, &d, cases[k]));
		fl[4] = eth_rule(d.qp, self->mac, ETYPE, 0,
				 IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
		fl[5] = eth_rule(d.qp, mc, ETYPE, 0,
				 IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
		ASSERT_NE(NULL, fl[4]);
		ASSERT_NE(NULL, fl[5]);
		for (i = 0; i < 2; i++) {
			bool uc = i == 0;
			uint32_t want = uc ?
				MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC :
				MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC;

			eth_frame(&f, uc ? self->mac : mc, self->mac, ETYPE,
				  k * 2 + i, 100);
			memcpy(s.buf + NRECV * 2048, f.b, f.len);
			ASSERT_EQ(0, post_send(s.qp, IBV_WR_SEND, s.mr->lkey,
					       s.buf + NRECV * 2048, f.len, 99,
					       IBV_SEND_SIGNALED, 0, 0));
			ASSERT_EQ(1, rx_poll(&s, &wc, NULL, 3000 * sv_slow()));
			EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
			/* The plain QP and the other context's get it ... */
			ASSERT_EQ(1, rx_poll(&p, &wc, NULL, 3000 * sv_slow()));
			EXPECT_TRUE(rx_is(&p, &wc, &f));
			ASSERT_EQ(1, rx_poll(&o, &wc, NULL, 3000 * sv_slow()));
			EXPECT_TRUE(rx_is(&o, &wc, &f));
			/* ... the TIR of the sender's context if it allows */
			if (cases[k] & want) {
				ASSERT_EQ(1, rx_poll(&d, &wc, NULL,
						     3000 * sv_slow()));
				EXPECT_TRUE(rx_is(&d, &wc, &f));
			} else {
				EXPECT_EQ(0, rx_poll(&d, &wc, NULL,
						     300 * sv_slow()))
					TH_LOG("flags %#x got %s", cases[k],
					       uc ? "unicast" : "multicast");
			}
			/* The sender itself: no ALLOW_LOOP_BACK rule */
			EXPECT_EQ(0, rx_poll(&s, &wc, NULL, 10));
		}
		EXPECT_EQ(0, ibv_destroy_flow(fl[4]));
		EXPECT_EQ(0, ibv_destroy_flow(fl[5]));
		rawqp_close(&d);
	}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, ibv_destroy_flow(fl[i]));
	rawqp_close(&o);
	rawqp_close(&p);
	rawqp_close(&s);
	ibv_dealloc_pd(pd2);
	ibv_close_device(ctx2);
}

TEST_HARNESS_MAIN
