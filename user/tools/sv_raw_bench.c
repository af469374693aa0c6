// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_raw_bench: the verbs side of the raw Ethernet benchmark. Uses only the
 * standard libibverbs API (IBV_QPT_RAW_PACKET, ibv_create_flow), so it runs
 * on any verbs device that has them; scripts/bench-guest runs it on a
 * softverbs device bound to a veth (svctl link add).
 *
 *   sv_raw_bench rx -d DEV [-n RULES] [-k PROBES] [-t SECS] [-w SECS]
 *                   [-T SECS] [-r RQ] [-b BYTES] [-L LEVELS] [frame options]
 *
 *     A RAW_PACKET QP on port 1 of DEV (INIT, RTR, RTS) and RULES (1)
 *     ibv_create_flow rules, rule k matching flow k of sv_pkt.h exactly
 *     (ETH destination MAC and type, IPv4 destination, UDP destination
 *     port): sv_pkt_gen --flows RULES then hits every rule in turn.
 *     Insertion is timed three ways: PROBES (1000) creations of an extra
 *     rule (each destroyed again, only the creation timed) with 1 rule
 *     installed, the same with all RULES installed, and the creation of
 *     rules 2..RULES in one go. Then it prints "ready", keeps the RQ (RQ
 *     WRs of BYTES, 512 of 2048) full and counts the receive completions
 *     polled in a window of -t seconds (3) that opens -w seconds (1) after
 *     the first one; frames/s. Exits 3 if none came within -T seconds (30)
 *     of "ready".
 *
 *     With -E, the receiver sleeps on a completion channel while its CQ
 *     is empty (ibv_req_notify_cq, poll() of the channel's fd for up to
 *     50 ms, ibv_get_cq_event), as the AF_PACKET side sleeps in poll();
 *     without it, it polls the CQ without a break. -M COUNT:PERIOD
 *     moderates that CQ's events (ibv_modify_cq: an event per COUNT
 *     completions, or PERIOD microseconds after the first), as
 *     TPACKET_V3 wakes its reader per block of frames or block timeout.
 *
 *     With -L LEVELS (1..8), the rules are mlx5dv DR rules instead
 *     (libmlx5.so.1, loaded only then): the domain's root table sends
 *     every UDP frame on to a table of level 1, that one's to level 2, and
 *     so on; RULES rules in the table of level LEVELS, each matching flow k
 *     as above, send to the QP. Insertion is timed on those rules.
 *
 *   sv_raw_bench tx -d DEV [-t SECS] [-w SECS] [-q SQ] [-S N] [frame options]
 *
 *     Posts the frames (64 bytes; --flows in turn), chains of 32 WRs, with
 *     up to SQ (256) outstanding and every Nth (32) signaled: -w seconds
 *     unmeasured, then frames/s over -t seconds, by completions.
 *
 * Exit status: 0 done, 1 error, 2 usage, 3 no traffic, 4 a verbs call the
 * device does not support ("not supported: CALL: strerror" on stderr:
 * EOPNOTSUPP, ENOSYS or EPROTONOSUPPORT). RESULT lines (key=value) are for
 * scripts/bench-guest.
 */
#include <dlfcn.h>
#include <poll.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include "sv_pkt.h"

#define EXIT_NOTSUP 4
#define POLL_BATCH 64
#define POST_CHAIN 32

struct raw_rule {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_ipv4 ip;
	struct ibv_flow_spec_tcp_udp udp;
};
/* The specs follow each other with no padding, as ibv_create_flow reads them. */
_Static_assert(sizeof(struct raw_rule) == sizeof(struct ibv_flow_attr) +
	       sizeof(struct ibv_flow_spec_eth) +
	       sizeof(struct ibv_flow_spec_ipv4) +
	       sizeof(struct ibv_flow_spec_tcp_udp), "raw_rule has padding");

static const char *prog = "sv_raw_bench";

/* A failed verbs call: status 4 when the device does not support it. */
static void __attribute__((noreturn)) fail(const char *call, int err)
{
	if (err == EOPNOTSUPP || err == ENOSYS || err == EPROTONOSUPPORT) {
		fprintf(stderr, "not supported: %s: %s\n", call, strerror(err));
		printf("RESULT error=notsup call=%s\n", call);
		exit(EXIT_NOTSUP);
	}
	fprintf(stderr, "%s: %s: %s\n", prog, call, strerror(err));
	exit(1);
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: sv_raw_bench rx -d DEV [-n RULES] [-k PROBES] [-t SECS] [-w SECS] [-T SECS]\n"
		"                       [-r RQ] [-b BYTES] [-L LEVELS] [-E [-M COUNT:PERIOD]]\n"
		"                       [frame options]\n"
		"       sv_raw_bench tx -d DEV [-t SECS] [-w SECS] [-q SQ] [-S N] [frame options]\n"
		SV_PKT_USAGE);
	return f == stdout ? 0 : 2;
}

static void rule_fill(struct raw_rule *r, const struct sv_pkt_cfg *c,
		      uint32_t k)
{
	uint32_t dip;
	uint16_t dport;

	sv_flow_key(c, k, &dip, &dport);
	memset(r, 0, sizeof(*r));
	r->attr.type = IBV_FLOW_ATTR_NORMAL;
	r->attr.size = sizeof(*r);
	r->attr.num_of_specs = 3;
	r->attr.port = 1;
	r->eth.type = IBV_FLOW_SPEC_ETH;
	r->eth.size = sizeof(r->eth);
	memcpy(r->eth.val.dst_mac, c->dmac, 6);
	memset(r->eth.mask.dst_mac, 0xff, 6);
	r->eth.val.ether_type = htons(ETHERTYPE_IP);
	r->eth.mask.ether_type = 0xffff;
	r->ip.type = IBV_FLOW_SPEC_IPV4;
	r->ip.size = sizeof(r->ip);
	r->ip.val.dst_ip = htonl(dip);
	r->ip.mask.dst_ip = 0xffffffff;
	r->udp.type = IBV_FLOW_SPEC_UDP;
	r->udp.size = sizeof(r->udp);
	r->udp.val.dst_port = htons(dport);
	r->udp.mask.dst_port = 0xffff;
}

/* ---- -L: the rules as an mlx5dv DR pipeline ---- */

#define DR_MAX_LEVELS 8

/* The mlx5dv calls, from libmlx5.so.1 (dlopen: only with -L). */
static struct {
	struct mlx5dv_dr_domain *(*domain_create)(struct ibv_context *,
						  enum mlx5dv_dr_domain_type);
	int (*domain_destroy)(struct mlx5dv_dr_domain *);
	struct mlx5dv_dr_table *(*table_create)(struct mlx5dv_dr_domain *,
						uint32_t);
	int (*table_destroy)(struct mlx5dv_dr_table *);
	struct mlx5dv_dr_matcher *(*matcher_create)(struct mlx5dv_dr_table *,
						    uint16_t, uint8_t,
						    struct mlx5dv_flow_match_parameters *);
	int (*matcher_destroy)(struct mlx5dv_dr_matcher *);
	struct mlx5dv_dr_action *(*dest_table)(struct mlx5dv_dr_table *);
	struct mlx5dv_dr_action *(*dest_qp)(struct ibv_qp *);
	int (*action_destroy)(struct mlx5dv_dr_action *);
	struct mlx5dv_dr_rule *(*rule_create)(struct mlx5dv_dr_matcher *,
					      struct mlx5dv_flow_match_parameters *,
					      size_t, struct mlx5dv_dr_action **);
	int (*rule_destroy)(struct mlx5dv_dr_rule *);
} dv;

/* The pipeline: tables 0..levels, a UDP rule from each to the next. */
static struct {
	uint32_t levels;		/* 0: ibv_create_flow rules */
	struct mlx5dv_dr_domain *dmn;
	struct mlx5dv_dr_table *tbl[DR_MAX_LEVELS + 1];
	struct mlx5dv_dr_matcher *hop_m[DR_MAX_LEVELS], *m;
	struct mlx5dv_dr_action *hop_a[DR_MAX_LEVELS], *qp_a;
	struct mlx5dv_dr_rule *hop_r[DR_MAX_LEVELS];
} dr;

/* fte_match_param (mlx5_ifc.h): outer headers first, 512 bytes in all */
struct fte {
	size_t match_sz;
	uint8_t b[512];
};

#define FTE_ETHERTYPE	0x06
#define FTE_DMAC	0x08
#define FTE_PROTO	0x10
#define FTE_UDP_DPORT	0x1e
#define FTE_DST_IPV4	0x3c

static void dv_load(void)
{
	void *h = dlopen("libmlx5.so.1", RTLD_NOW);

	if (!h) {
		fprintf(stderr, "%s: %s\n", prog, dlerror());
		fail("dlopen(libmlx5.so.1)", ENOSYS);
	}
#define DV(f, sym) do { *(void **)&dv.f = dlsym(h, #sym);		\
			if (!dv.f) fail(#sym, ENOSYS); } while (0)
	DV(domain_create, mlx5dv_dr_domain_create);
	DV(domain_destroy, mlx5dv_dr_domain_destroy);
	DV(table_create, mlx5dv_dr_table_create);
	DV(table_destroy, mlx5dv_dr_table_destroy);
	DV(matcher_create, mlx5dv_dr_matcher_create);
	DV(matcher_destroy, mlx5dv_dr_matcher_destroy);
	DV(dest_table, mlx5dv_dr_action_create_dest_table);
	DV(dest_qp, mlx5dv_dr_action_create_dest_ibv_qp);
	DV(action_destroy, mlx5dv_dr_action_destroy);
	DV(rule_create, mlx5dv_dr_rule_create);
	DV(rule_destroy, mlx5dv_dr_rule_destroy);
#undef DV
}

#define DV_CHECK(call, what) do { errno = 0; if (!(call))		\
		fail(what, errno ? errno : EINVAL); } while (0)

static void dr_setup(struct ibv_context *ctx, struct ibv_qp *qp)
{
	struct fte mask = { .match_sz = sizeof(mask.b) };
	struct fte val = { .match_sz = sizeof(val.b) };
	uint32_t i;

	dv_load();
	DV_CHECK(dr.dmn = dv.domain_create(ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX),
		 "mlx5dv_dr_domain_create");
	for (i = 0; i <= dr.levels; i++)
		DV_CHECK(dr.tbl[i] = dv.table_create(dr.dmn, i),
			 "mlx5dv_dr_table_create");
	mask.b[FTE_PROTO] = 0xff;
	val.b[FTE_PROTO] = IPPROTO_UDP;
	for (i = 0; i < dr.levels; i++) {
		DV_CHECK(dr.hop_m[i] = dv.matcher_create(dr.tbl[i], 0, 1,
				(struct mlx5dv_flow_match_parameters *)&mask),
			 "mlx5dv_dr_matcher_create");
		DV_CHECK(dr.hop_a[i] = dv.dest_table(dr.tbl[i + 1]),
			 "mlx5dv_dr_action_create_dest_table");
		DV_CHECK(dr.hop_r[i] = dv.rule_create(dr.hop_m[i],
				(struct mlx5dv_flow_match_parameters *)&val, 1,
				&dr.hop_a[i]), "mlx5dv_dr_rule_create");
	}
	memset(mask.b + FTE_DMAC, 0xff, 6);
	sv_put16(mask.b + FTE_ETHERTYPE, 0xffff);
	sv_put32(mask.b + FTE_DST_IPV4, 0xffffffff);
	sv_put16(mask.b + FTE_UDP_DPORT, 0xffff);
	DV_CHECK(dr.m = dv.matcher_create(dr.tbl[dr.levels], 0, 1,
			(struct mlx5dv_flow_match_parameters *)&mask),
		 "mlx5dv_dr_matcher_create");
	DV_CHECK(dr.qp_a = dv.dest_qp(qp), "mlx5dv_dr_action_create_dest_ibv_qp");
}

static void dr_teardown(void)
{
	int i;

	if (!dr.levels)
		return;
	dv.matcher_destroy(dr.m);
	dv.action_destroy(dr.qp_a);
	for (i = (int)dr.levels - 1; i >= 0; i--) {
		dv.rule_destroy(dr.hop_r[i]);
		dv.matcher_destroy(dr.hop_m[i]);
		dv.action_destroy(dr.hop_a[i]);
	}
	for (i = (int)dr.levels; i >= 0; i--)
		dv.table_destroy(dr.tbl[i]);
	dv.domain_destroy(dr.dmn);
}

static void *dr_rule_create(const struct sv_pkt_cfg *c, uint32_t k)
{
	struct fte val = { .match_sz = sizeof(val.b) };
	struct mlx5dv_dr_rule *r;
	uint32_t dip;
	uint16_t dport;

	sv_flow_key(c, k, &dip, &dport);
	val.b[FTE_PROTO] = IPPROTO_UDP;	/* in the mask with the hops' */
	memcpy(val.b + FTE_DMAC, c->dmac, 6);
	sv_put16(val.b + FTE_ETHERTYPE, ETHERTYPE_IP);
	sv_put32(val.b + FTE_DST_IPV4, dip);
	sv_put16(val.b + FTE_UDP_DPORT, dport);
	DV_CHECK(r = dv.rule_create(dr.m,
			(struct mlx5dv_flow_match_parameters *)&val, 1,
			&dr.qp_a), "mlx5dv_dr_rule_create");
	return r;
}

/* ---- rules, either kind ---- */

static void *rule_create(struct ibv_qp *qp, const struct sv_pkt_cfg *c,
			 uint32_t k)
{
	struct raw_rule r;
	struct ibv_flow *f;

	if (dr.levels)
		return dr_rule_create(c, k);
	rule_fill(&r, c, k);
	errno = 0;
	f = ibv_create_flow(qp, (struct ibv_flow_attr *)&r);
	if (!f)
		fail("ibv_create_flow", errno ? errno : EINVAL);
	return f;
}

static void rule_destroy(void *f)
{
	int ret = dr.levels ? dv.rule_destroy(f) : ibv_destroy_flow(f);

	if (ret)
		fail(dr.levels ? "mlx5dv_dr_rule_destroy" : "ibv_destroy_flow",
		     ret);
}

/* Rules/s of probes creations of one more rule (destroyed after each). */
static double probe_insert(struct ibv_qp *qp, const struct sv_pkt_cfg *c,
			   uint32_t first_key, uint32_t probes)
{
	double spent = 0, t;
	uint32_t j;

	for (j = 0; j < probes; j++) {
		void *f;

		t = sv_now();
		f = rule_create(qp, c, first_key + j);
		spent += sv_now() - t;
		rule_destroy(f);
	}
	return spent > 0 ? probes / spent : 0;
}

/* -E: sleep on a completion channel when the receive CQ is empty. */
static bool use_events;
/* -M: the moderation of that CQ's events (ibv_modify_cq) */
static struct ibv_moderate_cq moderation;

struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;	/* -E */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buflen;
};

/*
 * The CQ is empty: arm it, look once more, then sleep on the channel for
 * at most 50 ms (as the AF_PACKET side sleeps in poll()); what is there.
 */
static int wait_cq(struct bench *b, struct ibv_wc *wc)
{
	struct pollfd p = { .fd = b->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	if (ibv_req_notify_cq(b->rcq, 0))
		fail("ibv_req_notify_cq", errno);
	n = ibv_poll_cq(b->rcq, POLL_BATCH, wc);
	if (n)
		return n;
	if (poll(&p, 1, 50) > 0) {
		if (ibv_get_cq_event(b->ch, &cq, &cq_ctx))
			fail("ibv_get_cq_event", errno);
		ibv_ack_cq_events(cq, 1);
	}
	return ibv_poll_cq(b->rcq, POLL_BATCH, wc);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		fail("ibv_get_device_list", errno);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n) {
		fprintf(stderr, "%s: no verbs device %s (have:", prog, name);
		for (i = 0; i < n; i++)
			fprintf(stderr, " %s", ibv_get_device_name(list[i]));
		fprintf(stderr, ")\n");
		exit(1);
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		fail("ibv_open_device", errno);
	ibv_free_device_list(list);
	return ctx;
}

static void setup(struct bench *b, const char *dev, uint32_t sq, uint32_t rq,
		  size_t buflen)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {};
	struct ibv_port_attr pa;
	int ret;

	b->ctx = open_dev(dev);
	ret = ibv_query_port(b->ctx, 1, &pa);
	if (ret)
		fail("ibv_query_port", ret);
	if (pa.state != IBV_PORT_ACTIVE)
		fprintf(stderr, "%s: warning: port 1 of %s is %s\n", prog, dev,
			ibv_port_state_str(pa.state));
	b->pd = ibv_alloc_pd(b->ctx);
	if (!b->pd)
		fail("ibv_alloc_pd", errno);
	b->buflen = buflen;
	b->buf = aligned_alloc(4096, (buflen + 4095) & ~(size_t)4095);
	if (!b->buf)
		fail("aligned_alloc", ENOMEM);
	memset(b->buf, 0, buflen);
	b->mr = ibv_reg_mr(b->pd, b->buf, buflen, IBV_ACCESS_LOCAL_WRITE);
	if (!b->mr)
		fail("ibv_reg_mr", errno);
	b->scq = ibv_create_cq(b->ctx, (int)sq, NULL, NULL, 0);
	if (!b->scq)
		fail("ibv_create_cq", errno);
	if (use_events) {
		b->ch = ibv_create_comp_channel(b->ctx);
		if (!b->ch)
			fail("ibv_create_comp_channel", errno);
	}
	b->rcq = ibv_create_cq(b->ctx, (int)rq, NULL, b->ch, 0);
	if (!b->rcq)
		fail("ibv_create_cq", errno);
	if (moderation.cq_count || moderation.cq_period) {
		struct ibv_modify_cq_attr m = {
			.attr_mask = IBV_CQ_ATTR_MODERATE,
			.moderate = moderation,
		};
		int ret = ibv_modify_cq(b->rcq, &m);

		if (ret)
			fail("ibv_modify_cq", ret);
	}
	ia.send_cq = b->scq;
	ia.recv_cq = b->rcq;
	errno = 0;
	b->qp = ibv_create_qp(b->pd, &ia);
	if (!b->qp)
		fail("ibv_create_qp(IBV_QPT_RAW_PACKET)", errno ? errno : EINVAL);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	if (ret)
		fail("ibv_modify_qp(INIT)", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE);
	if (ret)
		fail("ibv_modify_qp(RTR)", ret);
	a.qp_state = IBV_QPS_RTS;
	ret = ibv_modify_qp(b->qp, &a, IBV_QP_STATE);
	if (ret)
		fail("ibv_modify_qp(RTS)", ret);
}

static void teardown(struct bench *b)
{
	int ret;

	if ((ret = ibv_destroy_qp(b->qp)))
		fail("ibv_destroy_qp", ret);
	ibv_destroy_cq(b->scq);
	ibv_destroy_cq(b->rcq);
	if (b->ch)
		ibv_destroy_comp_channel(b->ch);
	ibv_dereg_mr(b->mr);
	ibv_dealloc_pd(b->pd);
	ibv_close_device(b->ctx);
	free(b->buf);
}

/* Post receives of bytes each for the buffers numbered in ids[0..n-1]. */
static void post_recvs(struct bench *b, const uint32_t *ids, int n,
		       uint32_t bytes)
{
	struct ibv_recv_wr wr[POLL_BATCH], *bad;
	struct ibv_sge sge[POLL_BATCH];
	int i, ret;

	while (n > 0) {
		int m = n < POLL_BATCH ? n : POLL_BATCH;

		for (i = 0; i < m; i++) {
			sge[i].addr = (uintptr_t)b->buf + (size_t)ids[i] * bytes;
			sge[i].length = bytes;
			sge[i].lkey = b->mr->lkey;
			wr[i].wr_id = ids[i];
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < m ? &wr[i + 1] : NULL;
		}
		ret = ibv_post_recv(b->qp, wr, &bad);
		if (ret)
			fail("ibv_post_recv", ret);
		ids += m;
		n -= m;
	}
}

static int rx(const char *dev, struct sv_pkt_cfg *c, uint32_t rules,
	      uint32_t probes, double secs, double warm, double timeout,
	      uint32_t rq, uint32_t bytes)
{
	struct ibv_wc wc[POLL_BATCH];
	void **flows;
	struct bench b = {};
	unsigned long long count = 0, total = 0, errors = 0, mismatched = 0;
	uint32_t *ids, i, last_win;
	double t, t_first_rule, at1 = 0, atn = 0, fill = 0, fill_last = 0;
	double first = -1, start = 0, end = 0, deadline, now, del;
	struct sv_pkt_cfg probe_cfg = *c;
	int n;

	/* Probe rules are flows rules.. rules+probes-1: they never collide. */
	probe_cfg.flows = rules + probes;
	c->flows = rules;
	if (sv_pkt_cfg_check(&probe_cfg))
		return 2;
	setup(&b, dev, 1, rq, (size_t)rq * bytes);
	if (dr.levels)
		dr_setup(b.ctx, b.qp);

	flows = calloc(rules, sizeof(*flows));
	if (!flows)
		fail("calloc", ENOMEM);
	t = sv_now();
	flows[0] = rule_create(b.qp, c, 0);
	t_first_rule = sv_now() - t;
	if (probes)
		at1 = probe_insert(b.qp, c, rules, probes);
	/* Rules 2..N; the last min(1000, N-1) of them timed on their own. */
	last_win = rules - 1 < 1000 ? rules - 1 : 1000;
	t = sv_now();
	for (i = 1; i < rules; i++) {
		if (i == rules - last_win)
			fill_last = sv_now();
		flows[i] = rule_create(b.qp, c, i);
	}
	now = sv_now();
	if (rules > 1) {
		fill = (rules - 1) / (now - t);
		fill_last = last_win / (now - fill_last);
	}
	if (probes)
		atn = probe_insert(b.qp, c, rules, probes);
	printf("%s rx: first rule %.1f us; %u probe insertions with 1 rule installed: %.0f rules/s",
	       prog, t_first_rule * 1e6, probes, at1);
	if (rules > 1)
		printf("; rules 2..%u: %.0f rules/s (the last %u: %.0f rules/s); %u probe insertions with %u rules installed: %.0f rules/s",
		       rules, fill, last_win, fill_last, probes, rules, atn);
	printf("\n");
	printf("RESULT_INSERT rules=%u probes=%u at1=%.0f atn=%.0f fill=%.0f fill_last=%.0f first_us=%.1f\n",
	       rules, probes, at1, atn, fill, fill_last, t_first_rule * 1e6);

	ids = malloc(rq * sizeof(*ids));
	if (!ids)
		fail("malloc", ENOMEM);
	for (i = 0; i < rq; i++)
		ids[i] = i;
	post_recvs(&b, ids, (int)rq, bytes);
	printf("ready\n");
	deadline = sv_now() + timeout;

	for (;;) {
		n = ibv_poll_cq(b.rcq, POLL_BATCH, wc);
		if (!n && b.ch)
			n = wait_cq(&b, wc);
		if (n < 0)
			fail("ibv_poll_cq", EIO);
		now = sv_now();
		if (!n) {
			if (first < 0 && now > deadline) {
				fprintf(stderr, "%s rx: no frame in %.0f s\n",
					prog, timeout);
				printf("RESULT frames=0 secs=0 fps=0 error=noframes\n");
				return 3;
			}
			if (first >= 0 && now >= end)
				break;
			continue;
		}
		if (first < 0) {
			first = now;
			start = first + warm;
			end = start + secs;
		}
		for (i = 0; i < (uint32_t)n; i++) {
			total++;
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
					fprintf(stderr, "%s rx: receive flushed: the QP went to error\n",
						prog);
					return 1;
				}
				errors++;
			} else if (sv_pkt_match(b.buf + wc[i].wr_id * bytes,
						wc[i].byte_len, c) < 0) {
				mismatched++;
			}
			if (now >= start && now < end)
				count++;
			ids[i] = (uint32_t)wc[i].wr_id;
		}
		post_recvs(&b, ids, n, bytes);
		if (now >= end)
			break;
	}
	printf("%s rx: %llu frames in %.3f s: %.0f frames/s with %u rule(s)%s (%llu completions in all, %llu with errors, %llu not of the flows)\n",
	       prog, count, secs, count / secs, rules,
	       dr.levels ? " behind a DR pipeline" : "", total, errors,
	       mismatched);
	printf("RESULT frames=%llu secs=%.3f fps=%.0f rules=%u errors=%llu mismatched=%llu\n",
	       count, secs, count / secs, rules, errors, mismatched);

	t = sv_now();
	for (i = 0; i < rules; i++)
		rule_destroy(flows[i]);
	del = sv_now() - t;
	printf("%s rx: destroyed %u rules in %.3f s: %.0f rules/s\n", prog,
	       rules, del, del > 0 ? rules / del : 0);
	free(flows);
	free(ids);
	dr_teardown();
	teardown(&b);
	return 0;
}

static int tx(const char *dev, const struct sv_pkt_cfg *c, double secs,
	      double warm, uint32_t sq, uint32_t every)
{
	struct ibv_send_wr wr[POST_CHAIN], *bad;
	struct ibv_sge sge[POST_CHAIN];
	struct ibv_wc wc[POLL_BATCH];
	struct bench b = {};
	uint64_t posted = 0, retired = 0, errors = 0, base = 0;
	uint32_t nframes = sq, i, slot;
	double t0, start, end, now, t_end = 0, last_wc;
	int n, m, ret, measuring = 0;

	setup(&b, dev, sq, 1, (size_t)nframes * c->len);
	for (i = 0; i < nframes; i++)
		sv_pkt_build(b.buf + (size_t)i * c->len, c, i % c->flows);
	printf("ready\n");
	t0 = sv_now();
	start = t0 + warm;
	end = start + secs;
	last_wc = t0;
	for (;;) {
		/* Post chains while the SQ has room. */
		while (sq - (posted - retired) >= POST_CHAIN) {
			for (m = 0; m < POST_CHAIN; m++) {
				uint64_t id = posted + (uint64_t)m + 1;

				slot = (uint32_t)(id % nframes);
				sge[m].addr = (uintptr_t)b.buf +
					      (size_t)slot * c->len;
				sge[m].length = c->len;
				sge[m].lkey = b.mr->lkey;
				memset(&wr[m], 0, sizeof(wr[m]));
				wr[m].wr_id = id;
				wr[m].sg_list = &sge[m];
				wr[m].num_sge = 1;
				wr[m].opcode = IBV_WR_SEND;
				wr[m].send_flags = id % every ? 0 :
						   IBV_SEND_SIGNALED;
				wr[m].next = m + 1 < POST_CHAIN ?
					     &wr[m + 1] : NULL;
			}
			ret = ibv_post_send(b.qp, wr, &bad);
			if (ret)
				fail("ibv_post_send", ret);
			posted += POST_CHAIN;
		}
		n = ibv_poll_cq(b.scq, POLL_BATCH, wc);
		if (n < 0)
			fail("ibv_poll_cq", EIO);
		for (i = 0; i < (uint32_t)n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "%s tx: completion status %s\n",
					prog, ibv_wc_status_str(wc[i].status));
				if (++errors > 100)
					return 1;
			}
			retired = wc[i].wr_id;
		}
		now = sv_now();
		if (!n) {
			if (now - last_wc > 10) {
				fprintf(stderr, "%s tx: no completion in 10 s with %llu WRs outstanding\n",
					prog, (unsigned long long)(posted - retired));
				return 1;
			}
			continue;
		}
		last_wc = now;
		if (!measuring && now >= start) {
			measuring = 1;
			base = retired;
			start = now;
			end = start + secs;
		} else if (measuring && now >= end) {
			t_end = now;
			break;
		}
	}
	printf("%s tx: %llu frames of %u bytes in %.3f s: %.0f frames/s (%llu completion errors)\n",
	       prog, (unsigned long long)(retired - base), c->len,
	       t_end - start, (retired - base) / (t_end - start),
	       (unsigned long long)errors);
	printf("RESULT frames=%llu secs=%.3f fps=%.0f errors=%llu\n",
	       (unsigned long long)(retired - base), t_end - start,
	       (retired - base) / (t_end - start), (unsigned long long)errors);
	/* Drain what is still in flight before the QP goes. */
	t0 = sv_now();
	while (retired < posted - posted % every && sv_now() - t0 < 5) {
		n = ibv_poll_cq(b.scq, POLL_BATCH, wc);
		for (i = 0; i < (uint32_t)(n > 0 ? n : 0); i++)
			retired = wc[i].wr_id;
	}
	teardown(&b);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		SV_PKT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sv_pkt_cfg c;
	const char *dev = NULL, *mode;
	double secs = 3, warm = 1, timeout = 30;
	uint32_t rules = 1, probes = 1000, rq = 512, bytes = 2048;
	uint32_t sq = 256, every = 32;
	int opt, ret;

	if (argc < 2)
		return usage(stderr);
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		return usage(stdout);
	if (strcmp(mode, "rx") && strcmp(mode, "tx"))
		return usage(stderr);
	sv_pkt_cfg_default(&c);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "d:n:k:t:w:T:r:b:q:S:L:EM:h", lo,
				  NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
		case 'k':
		case 'r':
		case 'b':
		case 'q':
		case 'S':
			if (sv_parse_u32(optarg, opt == 'n' ? &rules :
					 opt == 'k' ? &probes :
					 opt == 'r' ? &rq :
					 opt == 'b' ? &bytes :
					 opt == 'q' ? &sq : &every, 1u << 24))
				return usage(stderr);
			break;
		case 't':
		case 'w':
		case 'T':
			if (sv_parse_secs(optarg, opt == 't' ? &secs :
					  opt == 'w' ? &warm : &timeout))
				return usage(stderr);
			break;
		case 'L':
			if (sv_parse_u32(optarg, &dr.levels, DR_MAX_LEVELS))
				return usage(stderr);
			break;
		case 'E':
			use_events = true;
			break;
		case 'M': {
			unsigned int cnt, per;
			char end;

			if (sscanf(optarg, "%u:%u%c", &cnt, &per, &end) != 2 ||
			    cnt > UINT16_MAX || per > UINT16_MAX)
				return usage(stderr);
			moderation.cq_count = (uint16_t)cnt;
			moderation.cq_period = (uint16_t)per;
			break;
		}
		case 'h':
			return usage(stdout);
		default:
			ret = sv_pkt_opt(&c, opt, optarg);
			if (ret) {
				if (ret < 0)
					fprintf(stderr, "bad value: %s\n", optarg);
				return usage(stderr);
			}
		}
	}
	if (!dev || optind != argc || secs <= 0 || !rules || !rq ||
	    bytes < c.len || !every || !sq || sq % every || sq % POST_CHAIN ||
	    ((moderation.cq_count || moderation.cq_period) && !use_events) ||
	    sv_pkt_cfg_check(&c)) {
		if (sq % every || sq % POST_CHAIN)
			fprintf(stderr, "-q must be a multiple of -S and of %d\n",
				POST_CHAIN);
		return usage(stderr);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "rx"))
		return rx(dev, &c, rules, probes, secs, warm, timeout, rq,
			  bytes);
	return tx(dev, &c, secs, warm, sq, every);
}
