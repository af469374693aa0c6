/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs flow steering: the frames a device bound to a netdev receives
 * (and, on the e-switch, sends to itself) go through the device's verbs
 * rules before the kernel's own receive path.
 *
 *   flow.c   SV_IOC_CREATE_FLOW / SV_IOC_DESTROY_FLOW: the verbs specs
 *            (struct ibv_flow_attr and its specs, byte for byte) become a
 *            rule: a masked match key, a priority, actions
 *   table.c  the device's tables: per priority, one exact-match hash
 *            table per distinct mask (as NIC hardware does); writers
 *            under a mutex, the frame path under RCU
 *   parse.c  a frame's headers -> struct sv_flow_key
 *   matcher.c  flow matchers (mlx5dv_create_flow_matcher()): a mask and
 *            a priority that flows with an SV_FLOW_SPEC_MATCHER spec use
 *   sandbox.c  steering tables and anchors (mlx5dv DR, steering anchors):
 *            rule sets of their own that rules send frames to, and ways
 *            back into the device's tables at a priority
 *   action.c steering actions (mlx5dv DR's push_vlan, modify_header,
 *            packet_reformat, dest_array): objects that rules use to
 *            rewrite a frame or send it to several destinations
 *   rewrite.c  the rewrites on a private copy of a frame: VLAN push and
 *            pop, header fields (with the checksums they are under),
 *            tunnel encap and decap
 *   counters.c  flow counters: the counters objects of ACTION_COUNT,
 *            bound to flows, counted per CPU on the frame path
 *   egress.c the egress rules (IBV_FLOW_ATTR_FLAGS_EGRESS): the
 *            device's transmit table, which may drop a frame being sent
 *   rx.c     the netdev rx_handler, the rules' verdict on a frame,
 *            delivery to RAW_PACKET/UD QPs (a bounded queue per QP that
 *            the file's engine drains into the receive queue)
 *   tx.c     the RAW_PACKET QP's transmit path: a send WQE's frame, or a
 *            TSO WQE's segments, through the e-switch loopback and
 *            dev_queue_xmit()
 *   offload.c  the transmit offloads on a frame: IP_CSUM's checksums,
 *            TSO's header per segment
 *   rxmeta.c what a receive queue reports of a frame besides its bytes:
 *            checksum verdict, stripped VLAN, FCS, arrival time
 *            (sv_rx_frame_prep(), for exec.c's sv_exec_recv_frame())
 */
#ifndef SV_STEER_H
#define SV_STEER_H

#include <linux/rhashtable.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "../sv.h"

/*
 * struct sv_flow_hdrs and struct sv_flow_key, what a rule matches on, are
 * uapi (flow matchers hand them in): uapi/softverbs-abi.h. A key's
 * padding is always zero, so whole keys hash and compare as bytes.
 */
enum {
	SV_TUN_NONE = SV_FLOW_TUN_NONE,
	SV_TUN_VXLAN = SV_FLOW_TUN_VXLAN,
	SV_TUN_GRE = SV_FLOW_TUN_GRE,
};

struct sv_counters;
struct sv_flow_rw;

/* One flow: a verbs rule and its uobj. */
struct sv_flow {
	struct sv_uobj uobj;		/* first */
	struct rhlist_head hnode;	/* in its mask's table */
	struct list_head list;		/* on the default/sniffer lists */
	struct sv_steer_mask *mask;	/* NORMAL rules */
	struct sv_flow_key val;		/* already masked */
	struct sv_device *sdev;		/* its tables' (the file holds it) */
	struct sv_qp *qp;		/* referenced, usecnt held; or NULL */
	struct sv_uobj *matcher;	/* SPEC_MATCHER: referenced, usecnt */
	struct sv_uobj *table;		/* its steering table (the matcher's) */
	struct sv_uobj *dest_table;	/* DEST_TABLE: referenced, usecnt */
	struct sv_steer *dest_st;	/* ... its rules */
	struct sv_uobj *dest_anchor;	/* DEST_ANCHOR: referenced, usecnt */
	u16 anchor_prio;		/* ... its priority */
	struct sv_flow_rw *rw;		/* rewrites, a mirror (action.c) */
	struct sv_counters *counters;	/* ACTION_COUNT: referenced, usecnt */
	u32 counters_handle;		/* ... as the spec named it */
	bool count;			/* ... there is such a spec */
	u64 seq;			/* creation order: earlier wins ties */
	u32 type;			/* SV_FLOW_ATTR_* */
	u32 flags;			/* SV_FLOW_ATTR_FLAGS_* */
	u32 tag;
	u16 priority;
	bool drop;
	bool miss;			/* SPEC_DEFAULT_MISS */
	bool tagged;			/* an ACTION_TAG spec (dumps) */
	u8 nspecs;			/* num_of_specs (dumps) */
	struct list_head counters_node;	/* on counters' flows (counters.c) */
	/* What sv_steer_remove() emptied, freed with the flow (table.c) */
	struct sv_steer_mask *dead_mask;
	struct sv_steer_prio *dead_prio;
	struct rcu_work free_work;	/* the free, after a grace period */
};

/* The device's tables (table.c). */
struct sv_steer {
	struct mutex lock;		/* writers */
	struct list_head prios;		/* struct sv_steer_prio, ascending */
	struct list_head defaults;	/* ALL/MC_DEFAULT rules, by priority */
	struct list_head sniffers;	/* SNIFFER rules */
	u64 next_seq;
	atomic_t nrules;		/* 0: the frame path does nothing */
};

/* table.c */
struct sv_steer *sv_steer_alloc(void);
void sv_steer_free(struct sv_steer *st);
int sv_steer_insert(struct sv_steer *st, struct sv_flow *fl,
		    const struct sv_flow_key *mask);
void sv_steer_remove(struct sv_steer *st, struct sv_flow *fl);
void sv_steer_release(struct sv_flow *fl);
void sv_steer_defer(struct rcu_work *rw, work_func_t fn);

/* The verdict on one frame (rx.c, via table.c). */
struct sv_steer_verdict {
	struct sv_flow *deliver[16];	/* rules whose QP gets a copy */
	u32 n;
	bool trapped;			/* the kernel stack does not see it */
	bool dropped;			/* an ACTION_DROP rule took it */
	bool missed;			/* a DEFAULT_MISS rule passed it on */
	bool looped;			/* dropped: anchors and tables looped */
	bool path_tagged;		/* a rule that sent it on tagged it */
	u32 path_tag;			/* ... the last such tag */
	u32 trap_idx;			/* deliver[] of the deciding rule */
	bool matched;			/* a NORMAL rule took it */
	u32 copies;			/* of deliver[]: DONT_TRAP, SNIFFER */
	u32 len;			/* in: the frame's length, for counters */
	/* A rule that rewrites or mirrors it took it: the caller goes on */
	struct sv_flow *act;
	/*
	 * Where the walk is: the table, from which priority, the priority
	 * it left the device's tables at, the tables and anchors passed.
	 * With resume, sv_steer_lookup() goes on from there (a rewritten
	 * frame); without, it starts at the device's table.
	 */
	bool resume;
	struct sv_steer *cur;
	int from;
	int left;
	u32 hops;
};

void sv_steer_lookup(struct sv_steer *st, const struct sv_flow_key *key,
		     bool multicast, struct sv_qp *src_qp,
		     struct sv_steer_verdict *v);

bool sv_verdict_next(struct sv_steer_verdict *v, struct sv_steer *st,
		     const struct sv_flow *fl);
bool sv_verdict_table(struct sv_steer_verdict *v, struct sv_steer *dest);

/*
 * The tag deliver[i]'s copy carries: its rule's; or, for the rule that
 * decided, when it has none, what a rule that sent the frame on to it
 * through the sandbox's tables tagged it with (as mlx5 DR carries it).
 */
static inline u32 sv_verdict_tag(const struct sv_steer_verdict *v, u32 i)
{
	const struct sv_flow *fl = v->deliver[i];

	if (i == v->trap_idx && !fl->tagged && v->path_tagged)
		return v->path_tag;
	return fl->tag;
}

/* parse.c: the key of a frame whose data is at the network header. */
void sv_steer_parse(const struct sk_buff *skb, struct sv_flow_key *key);
void sv_steer_parse_tx(const struct sk_buff *skb, struct sv_flow_key *key);

/* egress.c */
struct sk_buff *sv_steer_egress(struct sv_device *sdev, struct sk_buff *skb);

/* rx.c, for tx.c's e-switch: steer a frame (data at the network header) */
bool sv_steer_frame(struct sv_device *sdev, struct sk_buff *skb,
		    struct sv_qp *src_qp);
int sv_steer_rx_init(void);
void sv_steer_rx_exit(void);
void sv_steer_enqueue(struct sv_device *sdev, struct sv_flow *fl,
		      struct sk_buff *skb);
u32 sv_steer_frame_len(const struct sk_buff *skb);

/* offload.c: a TSO header's layers */
struct sv_tso_hdr {
	u32 hdr_sz;
	u32 l3off;
	u32 l4off;
	bool v6;
};

void sv_tx_csum(u8 *d, u32 len);
int sv_tso_parse(const u8 *h, u32 hdr_sz, struct sv_tso_hdr *t);
void sv_tso_fix(const struct sv_tso_hdr *t, u8 *seg, u32 len, u32 off,
		u32 i, bool last);

/* counters.c */
int sv_counters_spec(struct sv_flow *fl, const void *spec);
int sv_counters_bind(struct sv_file *f, struct sv_flow *fl);
void sv_counters_unbind(struct sv_flow *fl);
void sv_counters_put(struct sv_flow *fl);
void sv_counters_add(struct sv_counters *c, u32 len);
void sv_counters_link(struct sv_flow *fl);
u32 sv_counters_handle(const struct sv_flow *fl);
u32 sv_counters_flows(struct sv_uobj *u, u32 *handles, u32 max);

/* A frame of len bytes hit fl's rule. Under RCU, BH off. */
static inline void sv_flow_count(const struct sv_flow *fl, u32 len)
{
	if (fl->counters)
		sv_counters_add(fl->counters, len);
}

/* matcher.c */
int sv_flow_matcher_apply(struct sv_file *f, struct sv_flow *fl,
			  struct sv_flow_key *km,
			  const struct sv_flow_spec_matcher *s);
void sv_flow_matcher_unbind(struct sv_flow *fl);
void sv_flow_matcher_put(struct sv_flow *fl);
void sv_flow_matcher_info(struct sv_uobj *u, u16 *priority, u32 *flags,
			  u32 *table);

/* sandbox.c */
struct sv_uobj *sv_steer_table_use(struct sv_file *f, u32 handle, u32 flags);
void sv_steer_table_unuse(struct sv_uobj *u);
struct sv_steer *sv_steer_table_st(struct sv_uobj *u);
u32 sv_steer_table_level(struct sv_uobj *u);
int sv_flow_dest_apply(struct sv_file *f, struct sv_flow *fl,
		       const struct sv_flow_spec_dest *s);
void sv_flow_dest_unbind(struct sv_flow *fl);
void sv_flow_dest_put(struct sv_flow *fl);
void sv_sandbox_info(struct sv_uobj *u, u32 *level, u32 *flags, u16 *prio);

/* action.c: one steering action (SV_IOC_CREATE_STEER_ACTION) */
enum {
	SV_MW_ETH,			/* the MAC header */
	SV_MW_ETYPE,			/* the ethertype after a VLAN tag */
	SV_MW_VLAN,			/* the first VLAN tag (TPID, TCI) */
	SV_MW_IP,			/* IPv4 or IPv6 (DSCP, ECN) */
	SV_MW_IP4,
	SV_MW_IP6,
	SV_MW_TCP,
	SV_MW_UDP,
};

#define SV_MF_ADD	0x1		/* an add action may change it */
#define SV_MF_PSEUDO	0x2		/* in the TCP/UDP pseudo-header */

/* A header field that modify-header actions name */
struct sv_mod_field {
	u8 where;			/* SV_MW_* */
	u8 off;				/* the bytes that hold it: offset, */
	u8 bytes;			/* ... 1, 2 or 4 of them, */
	u8 shift;			/* ... its bit 0 there */
	u8 width;			/* bits */
	u8 flags;			/* SV_MF_* */
};

struct sv_rw_mod {
	const struct sv_mod_field *field;
	u8 type;			/* 1 set, 2 add */
	u8 off;				/* set: bits [off, off + len) */
	u8 len;
	u32 data;
};

struct sv_steer_action;

struct sv_mirror_dest {
	struct sv_qp *qp;		/* referenced, usecnt; or */
	struct sv_uobj *table;		/* ... referenced, usecnt */
	struct sv_steer *st;		/* ... its rules */
	struct sv_steer_action *encap;	/* referenced, usecnt, or NULL */
};

struct sv_steer_action {
	struct sv_uobj uobj;		/* first */
	u32 type;			/* SV_STEER_ACT_* */
	u32 flags;			/* 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	__be32 vlan_hdr;		/* PUSH_VLAN */
	u32 n;				/* mods, header bytes, dests */
	struct sv_rw_mod *mods;		/* MODIFY */
	u8 *hdr;			/* ENCAP */
	u8 l3, udp;			/* ... IP version, a UDP header */
	u16 l3off, l4off;		/* ... where they are */
	struct sv_mirror_dest *dests;	/* MIRROR */
	u32 min_level;			/* ... its lowest table's level */
};

/* What a flow does to frames besides its destination */
struct sv_flow_rw {
	struct sv_steer_action *mirror;	/* DEST_MIRROR: referenced, usecnt */
	u32 n;
	/* REWRITE specs in order, referenced, usecnt; NULL: POP_VLAN */
	struct sv_steer_action *act[SV_FLOW_MAX_REWRITE];
};

int sv_flow_rw_apply(struct sv_file *f, struct sv_flow *fl,
		     const u32 *handles, u32 n, u32 mirror, bool has_mirror);
void sv_flow_rw_unbind(struct sv_flow *fl);
void sv_flow_rw_put(struct sv_flow *fl);

/* rewrite.c */
struct sk_buff *sv_rw_run(const struct sk_buff *skb,
			  struct sv_steer_action *const *acts, u32 n, bool rx);

/* flow.c */
int sv_create_flow(struct sv_file *f, void *arg);
int sv_destroy_flow(struct sv_file *f, void *arg);

#endif /* SV_STEER_H */
