// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: the InfiniBand CM protocol (IBA vol. 1
 * ch. 12) for RC, with the RDMA IP CM service IDs and private data
 * header that the kernel's rdma_cm puts on it (so that softverbs and a
 * host running rdma_cm over rxe or a RoCE NIC connect either way).
 *
 * Active: connect sends a REQ (retried until the REP, an MRA stretches
 * the wait); the REP is reported as CONNECT_RESPONSE, and once the
 * library has its QP in RTS, establish sends the RTU. Passive: a REQ for
 * a listening port makes a new id reported as CONNECT_REQUEST; accept
 * sends the REP (retried until the RTU, which is reported as
 * ESTABLISHED), reject a REJ. Either side's disconnect sends a DREQ
 * (retried until the DREP); a DREQ is answered with a DREP and reported
 * as DISCONNECTED. A REQ that no one listens for is rejected (invalid
 * service ID); a DREQ for no connection gets its DREP all the same.
 *
 * The starting PSN an end sends in its REQ or REP is the one it expects
 * to receive, and so the other end's send PSN (as rdma_cm has it).
 * A MAD is taken only from the address the connection is with.
 */
#include <linux/random.h>
#include <net/ipv6.h>

#include "cm.h"

#define SV_CM_DEFAULT_BACKLOG	64
#define SV_CM_REQ_PRIVATE	92
#define SV_CM_REP_PRIVATE	196
#define SV_CM_RTU_PRIVATE	224
#define SV_CM_DREQ_PRIVATE	220

/* Offsets in each message (after the MAD header) */
#define REQ_SERVICE_ID		8
#define REQ_CA_GUID		16
#define REQ_QPN			32	/* 24 bits, then responder resources */
#define REQ_INIT_DEPTH		39
#define REQ_TIMEOUT_TYPE	43	/* remote CM timeout:5, type:2, EEFC:1 */
#define REQ_PSN			44	/* 24 bits, local CM timeout:5, retry:3 */
#define REQ_PKEY		48
#define REQ_MTU_RNR		50	/* MTU:4, RDC:1, RNR retry:3 */
#define REQ_RETRIES_SRQ		51	/* max CM retries:4, SRQ:1, ext type:3 */
#define REQ_LOCAL_LID		52
#define REQ_REMOTE_LID		54
#define REQ_LOCAL_GID		56
#define REQ_REMOTE_GID		72
#define REQ_TCLASS		92
#define REQ_HOP_LIMIT		93
#define REQ_ACK_TIMEOUT		95
#define REQ_PRIVATE		140

#define REP_QPN			12
#define REP_PSN			20
#define REP_RESP_RES		24
#define REP_INIT_DEPTH		25
#define REP_ACK_FLAGS		26	/* target ACK delay:5, failover:2, EEFC:1 */
#define REP_RNR_SRQ		27	/* RNR retry:3, SRQ:1 */
#define REP_CA_GUID		28
#define REP_PRIVATE		36

#define REJ_MSG			8	/* message rejected:2 */
#define REJ_INFO_LEN		9	/* ARI length:7 */
#define REJ_REASON		10
#define REJ_PRIVATE		84

#define MRA_MSG			8	/* message MRAed:2 */
#define MRA_TIMEOUT		9	/* service timeout:5 */

#define DREQ_QPN		8
#define RTU_PRIVATE		8
#define DREQ_PRIVATE		12

/* Communication IDs: ours, for the peers' MADs to name their connection. */
static DEFINE_XARRAY_ALLOC(sv_cm_comm_ids);
static u32 sv_cm_next_comm_id;

/* 4.096 us * 2^t, in jiffies, at least 1 ms */
static unsigned long sv_cm_jiffies(u8 t)
{
	return msecs_to_jiffies(t > 8 ? 1U << min_t(u8, t - 8, 20) : 1);
}

/*
 * How long a request waits for its answer: the peer's CM response time
 * and a round trip (REQ, REP), or about a second (DREQ).
 */
unsigned long sv_cm_retry_delay(const struct sv_cm_id *id)
{
	if (id->state == SV_CM_DREQ_SENT)
		return sv_cm_jiffies(SV_CM_PKT_LIFETIME + 2);
	return sv_cm_jiffies(id->peer_cm_timeout) +
	       2 * sv_cm_jiffies(SV_CM_PKT_LIFETIME);
}

void sv_cm_arm(struct sv_cm_id *id, unsigned long delay)
{
	kref_get(&id->ref);
	if (!mod_delayed_work(sv_cm_wq, &id->timer, delay))
		return;
	/* It was pending already, with a reference of its own. */
	sv_cm_id_put(id);
}

void sv_cm_disarm(struct sv_cm_id *id)
{
	if (cancel_delayed_work(&id->timer))
		sv_cm_id_put(id);
}

int sv_cm_comm_id_alloc(struct sv_cm_id *id)
{
	int ret;

	if (!sv_cm_next_comm_id)
		sv_cm_next_comm_id = get_random_u32() | 1;
	ret = xa_alloc_cyclic(&sv_cm_comm_ids, &id->local_comm_id, id,
			      XA_LIMIT(1, U32_MAX), &sv_cm_next_comm_id,
			      GFP_KERNEL);
	return ret < 0 ? ret : 0;
}

void sv_cm_send(struct sv_cm_id *id, const u8 *mad)
{
	sv_cm_mad_send(id->sdev, id->sgid_index, id->dgid, id->tos, mad);
}

/*
 * Send the request in id->mad and wait for its answer in @state: the
 * timer sends it again (sv_cm_timeout()) until it comes.
 */
void sv_cm_request(struct sv_cm_id *id, enum sv_cm_state state)
{
	sv_cm_send(id, id->mad);
	id->retries = 0;
	id->state = state;
	sv_cm_arm(id, sv_cm_retry_delay(id));
}

/* A new MAD of the connection, both communication IDs filled in. */
static void sv_cm_msg(struct sv_cm_id *id, u8 *mad, u16 attr)
{
	sv_cm_mad_init(mad, attr, id->tid);
	sv_cm_put32(mad, 0, id->local_comm_id);
	sv_cm_put32(mad, 4, id->remote_comm_id);
}

static void sv_cm_send_rej(struct sv_cm_id *id, u8 msg, u16 reason,
			   const u8 *data, u8 len)
{
	u8 mad[SV_MAD_LEN];

	sv_cm_msg(id, mad, SV_CM_ATTR_REJ);
	sv_cm_put_bits(mad, REJ_MSG, 0, 2, msg);
	put_unaligned_be16(reason, sv_cm_at(mad, REJ_REASON));
	if (len)
		memcpy(sv_cm_at(mad, REJ_PRIVATE), data, len);
	sv_cm_send(id, mad);
}

/* A DREQ in id->mad (kept there for its retries). */
static void sv_cm_dreq_make(struct sv_cm_id *id)
{
	sv_cm_msg(id, id->mad, SV_CM_ATTR_DREQ);
	sv_cm_put_hi(id->mad, DREQ_QPN, 24, id->remote_qpn);
}

static void sv_cm_send_dreq(struct sv_cm_id *id)
{
	sv_cm_dreq_make(id);
	sv_cm_request(id, SV_CM_DREQ_SENT);
}

/* A pending child is no longer its listener's to count. */
void sv_cm_unpend(struct sv_cm_id *id)
{
	if (!id->listener)
		return;
	id->listener->pending--;
	sv_cm_id_put(id->listener);
	id->listener = NULL;
}

/**
 * sv_cm_id_kill - end what an id is doing, as rdma_destroy_id() does
 * @id: under sv_cm_lock
 *
 * A request in flight is rejected, a connection disconnected (one DREQ,
 * not retried); the id leaves the port and ID tables and its device.
 */
void sv_cm_id_kill(struct sv_cm_id *id)
{
	switch (id->state) {
	case SV_CM_REQ_SENT:
		sv_cm_send_rej(id, 0, SV_REJ_TIMEOUT, NULL, 0);
		break;
	case SV_CM_REQ_RCVD:
		sv_cm_send_rej(id, 0, SV_REJ_CONSUMER, NULL, 0);
		break;
	case SV_CM_REP_RCVD:
	case SV_CM_REP_SENT:
		sv_cm_send_rej(id, 1, SV_REJ_CONSUMER, NULL, 0);
		break;
	case SV_CM_ESTABLISHED:
		sv_cm_dreq_make(id);	/* once: the id is going */
		sv_cm_send(id, id->mad);
		break;
	case SV_CM_SIDR_REQ_RCVD:
		sv_cm_sidr_kill(id);
		break;
	default:
		break;
	}
	id->state = SV_CM_DEAD;
	sv_cm_disarm(id);
	sv_cm_unpend(id);
	sv_cm_unbind(id);
	if (id->local_comm_id)
		xa_erase(&sv_cm_comm_ids, id->local_comm_id);
	id->local_comm_id = 0;
	if (id->sdev)
		put_device(&id->sdev->dev);
	id->sdev = NULL;
}

int sv_cm_listen(struct sv_cm_id *id, u32 backlog)
{
	struct sockaddr_storage any = { .ss_family = AF_INET6 };
	int ret;

	if (id->state == SV_CM_LISTEN) {
		id->backlog = backlog ?: SV_CM_DEFAULT_BACKLOG;
		return 0;
	}
	if (id->state == SV_CM_IDLE) {
		ret = sv_cm_bind(id, &any);
		if (ret)
			return ret;
	}
	if (id->state != SV_CM_BOUND)
		return -EINVAL;
	id->backlog = backlog ?: SV_CM_DEFAULT_BACKLOG;
	id->state = SV_CM_LISTEN;
	return 0;
}

/* The IP CM header: version 0, IP version, source port, addresses. */
void sv_cm_put_hdr(struct sv_cm_id *id, u8 *p)
{
	p[0] = 0;
	p[1] = (id->src.ss_family == AF_INET ? 4 : 6) << 4;
	put_unaligned_be16(id->port, p + 2);
	if (id->src.ss_family == AF_INET) {
		memcpy(p + 4 + 12, id->sgid + 12, 4);
		memcpy(p + 20 + 12, id->dgid + 12, 4);
	} else {
		memcpy(p + 4, id->sgid, 16);
		memcpy(p + 20, id->dgid, 16);
	}
}

bool sv_cm_param_ok(const struct sv_cm_conn_param *p, u32 max_private)
{
	return p->private_data_len <= max_private && p->retry_count <= 7 &&
	       p->rnr_retry_count <= 7 && p->flow_control <= 1 &&
	       p->srq <= 1 && !p->reserved && !(p->qp_num & ~SV_QPN_MASK);
}

int sv_cm_connect(struct sv_cm_id *id, const struct sv_cm_conn_param *p)
{
	u8 *mad = id->mad;
	int ret;

	if (id->qp_type == SV_QPT_UD)
		return sv_cm_sidr_connect(id, p);
	if (id->state != SV_CM_ROUTE_RESOLVED)
		return -EINVAL;
	if (!sv_cm_param_ok(p, SV_CM_REQ_PRIVATE - SV_CM_HDR_LEN))
		return -EINVAL;
	ret = sv_cm_comm_id_alloc(id);
	if (ret)
		return ret;
	id->local_qpn = p->qp_num;
	id->local_psn = get_random_u32() & 0xffffff;
	id->resp_res = min_t(u8, p->responder_resources, SV_MAX_QP_RD_ATOM);
	id->init_depth = min_t(u8, p->initiator_depth, SV_MAX_QP_RD_ATOM);
	id->retry_count = p->retry_count;
	id->rnr_retry = p->rnr_retry_count;
	id->srq = p->srq;
	id->max_cm_retries = SV_CM_MAX_RETRIES;
	id->peer_cm_timeout = SV_CM_RESPONSE_TIMEOUT;
	id->tid = get_random_u64();

	sv_cm_mad_init(mad, SV_CM_ATTR_REQ, id->tid);
	sv_cm_put32(mad, 0, id->local_comm_id);
	/* The service: the destination's port in the id's port space */
	put_unaligned_be64(((u64)id->ps << 16) | sv_cm_addr_port(&id->dst),
			   sv_cm_at(mad, REQ_SERVICE_ID));
	memcpy(sv_cm_at(mad, REQ_CA_GUID), &id->sdev->node_guid, 8);
	sv_cm_put_hi(mad, REQ_QPN, 24, id->local_qpn);
	*sv_cm_at(mad, REQ_QPN + 3) = id->resp_res;
	*sv_cm_at(mad, REQ_INIT_DEPTH) = id->init_depth;
	sv_cm_put_bits(mad, REQ_TIMEOUT_TYPE, 0, 5, SV_CM_RESPONSE_TIMEOUT);
	sv_cm_put_bits(mad, REQ_TIMEOUT_TYPE, 5, 2, 0);		/* RC */
	sv_cm_put_bits(mad, REQ_TIMEOUT_TYPE, 7, 1, p->flow_control);
	sv_cm_put_hi(mad, REQ_PSN, 24, id->local_psn);
	sv_cm_put_bits(mad, REQ_PSN + 3, 0, 5, SV_CM_RESPONSE_TIMEOUT);
	sv_cm_put_bits(mad, REQ_PSN + 3, 5, 3, p->retry_count);
	put_unaligned_be16(SV_DEFAULT_PKEY, sv_cm_at(mad, REQ_PKEY));
	sv_cm_put_bits(mad, REQ_MTU_RNR, 0, 4, id->mtu);
	sv_cm_put_bits(mad, REQ_MTU_RNR, 5, 3, p->rnr_retry_count);
	sv_cm_put_bits(mad, REQ_RETRIES_SRQ, 0, 4, SV_CM_MAX_RETRIES);
	sv_cm_put_bits(mad, REQ_RETRIES_SRQ, 4, 1, p->srq);
	/* Routed (hop limit > 1): the permissive LIDs, as the kernel does */
	put_unaligned_be16(0xffff, sv_cm_at(mad, REQ_LOCAL_LID));
	put_unaligned_be16(0xffff, sv_cm_at(mad, REQ_REMOTE_LID));
	memcpy(sv_cm_at(mad, REQ_LOCAL_GID), id->sgid, 16);
	memcpy(sv_cm_at(mad, REQ_REMOTE_GID), id->dgid, 16);
	*sv_cm_at(mad, REQ_TCLASS) = id->tos;
	*sv_cm_at(mad, REQ_HOP_LIMIT) = id->hop_limit;
	sv_cm_put_bits(mad, REQ_ACK_TIMEOUT, 0, 5, SV_CM_PKT_LIFETIME + 1);
	sv_cm_put_hdr(id, sv_cm_at(mad, REQ_PRIVATE));
	memcpy(sv_cm_at(mad, REQ_PRIVATE + SV_CM_HDR_LEN), p->private_data,
	       p->private_data_len);
	sv_cm_request(id, SV_CM_REQ_SENT);
	return 0;
}

int sv_cm_accept(struct sv_cm_id *id, const struct sv_cm_conn_param *p)
{
	u8 *mad = id->mad;

	if (id->qp_type == SV_QPT_UD)
		return sv_cm_sidr_accept(id, p);
	if (id->state != SV_CM_REQ_RCVD)
		return -EINVAL;
	if (!sv_cm_param_ok(p, SV_CM_REP_PRIVATE_MAX))
		return -EINVAL;
	id->local_qpn = p->qp_num;
	id->resp_res = min_t(u8, p->responder_resources, SV_MAX_QP_RD_ATOM);
	id->init_depth = min_t(u8, p->initiator_depth, SV_MAX_QP_RD_ATOM);
	sv_cm_unpend(id);

	sv_cm_msg(id, mad, SV_CM_ATTR_REP);
	sv_cm_put_hi(mad, REP_QPN, 24, id->local_qpn);
	sv_cm_put_hi(mad, REP_PSN, 24, id->local_psn);
	*sv_cm_at(mad, REP_RESP_RES) = id->resp_res;
	*sv_cm_at(mad, REP_INIT_DEPTH) = id->init_depth;
	sv_cm_put_bits(mad, REP_ACK_FLAGS, 0, 5, 15);	/* target ACK delay */
	sv_cm_put_bits(mad, REP_ACK_FLAGS, 7, 1, p->flow_control);
	sv_cm_put_bits(mad, REP_RNR_SRQ, 0, 3, p->rnr_retry_count);
	sv_cm_put_bits(mad, REP_RNR_SRQ, 3, 1, p->srq);
	memcpy(sv_cm_at(mad, REP_CA_GUID), &id->sdev->node_guid, 8);
	memcpy(sv_cm_at(mad, REP_PRIVATE), p->private_data,
	       p->private_data_len);
	sv_cm_request(id, SV_CM_REP_SENT);
	return 0;
}

int sv_cm_reject(struct sv_cm_id *id, u16 reason, const u8 *data, u8 len)
{
	if (id->qp_type == SV_QPT_UD)
		return sv_cm_sidr_reject(id, data, len);
	if (id->state != SV_CM_REQ_RCVD && id->state != SV_CM_REP_RCVD)
		return -EINVAL;
	if (len > SV_CM_REJ_PRIVATE_MAX)
		return -EINVAL;
	sv_cm_send_rej(id, id->state == SV_CM_REQ_RCVD ? 0 : 1,
		       reason ?: SV_REJ_CONSUMER, data, len);
	sv_cm_unpend(id);
	id->state = SV_CM_DISCONNECTED;
	return 0;
}

int sv_cm_establish(struct sv_cm_id *id)
{
	u8 mad[SV_MAD_LEN];

	if (id->state != SV_CM_REP_RCVD)
		return -EINVAL;
	sv_cm_msg(id, mad, SV_CM_ATTR_RTU);
	sv_cm_send(id, mad);
	id->state = SV_CM_ESTABLISHED;
	return 0;
}

int sv_cm_disconnect(struct sv_cm_id *id)
{
	switch (id->state) {
	case SV_CM_ESTABLISHED:
	case SV_CM_REP_SENT:
	case SV_CM_REP_RCVD:
		sv_cm_disarm(id);
		sv_cm_send_dreq(id);
		return 0;
	case SV_CM_DREQ_SENT:
	case SV_CM_DISCONNECTED:
	case SV_CM_SIDR_REQ_SENT:	/* UD: no connection to end */
	case SV_CM_SIDR_REQ_RCVD:
	case SV_CM_SIDR_DONE:
		return 0;
	default:
		return -EINVAL;
	}
}

int sv_cm_init_qp_attr(struct sv_cm_id *id, u32 state, u32 *mask,
		       struct sv_qp_attr *a)
{
	bool conn = id->local_comm_id && id->state >= SV_CM_REQ_SENT &&
		    id->state <= SV_CM_DREQ_SENT;

	memset(a, 0, sizeof(*a));
	if (!id->sdev)
		return -EINVAL;
	a->qp_state = state;
	switch (state) {
	case SV_QPS_INIT:
		*mask = SV_QP_STATE | SV_QP_PKEY_INDEX | SV_QP_PORT;
		a->port_num = 1;
		if (id->qp_type == SV_QPT_UD) {
			sv_cm_set_qkey(id, 0);
			a->qkey = id->qkey;
			*mask |= SV_QP_QKEY;
			return 0;
		}
		*mask |= SV_QP_ACCESS_FLAGS;
		if (conn)
			a->qp_access_flags = SV_ACCESS_REMOTE_WRITE |
				(id->resp_res ? SV_ACCESS_REMOTE_READ |
				 SV_ACCESS_REMOTE_ATOMIC : 0);
		return 0;
	case SV_QPS_RTR:
		if (!conn || id->qp_type != SV_QPT_RC)
			return -EINVAL;
		*mask = SV_QP_STATE | SV_QP_AV | SV_QP_PATH_MTU |
			SV_QP_DEST_QPN | SV_QP_RQ_PSN |
			SV_QP_MAX_DEST_RD_ATOMIC | SV_QP_MIN_RNR_TIMER;
		memcpy(a->ah_attr.dgid, id->dgid, 16);
		a->ah_attr.sgid_index = id->sgid_index;
		a->ah_attr.hop_limit = id->hop_limit;
		a->ah_attr.traffic_class = id->tos;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->local_psn;
		a->max_dest_rd_atomic = id->resp_res;
		return 0;
	case SV_QPS_RTS:
		if (!conn || id->qp_type != SV_QPT_RC)
			return -EINVAL;
		*mask = SV_QP_STATE | SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
			SV_QP_RNR_RETRY | SV_QP_SQ_PSN |
			SV_QP_MAX_QP_RD_ATOMIC;
		a->timeout = id->ack_timeout ?: SV_CM_PKT_LIFETIME + 1;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry;
		a->sq_psn = id->remote_psn;
		a->max_rd_atomic = id->init_depth;
		return 0;
	default:
		return -EINVAL;
	}
}

/* The id a MAD's "remote communication ID" names: ours, from its peer. */
struct sv_cm_id *sv_cm_mine(const struct sv_cm_rx *rx, u32 off)
{
	struct sv_cm_id *id = xa_load(&sv_cm_comm_ids,
				      sv_cm_get32(rx->mad, off));

	if (!id || id->sdev != rx->sdev || memcmp(id->dgid, rx->sgid, 16))
		return NULL;
	return id;
}

void sv_cm_conn_param(struct sv_cm_conn_param *p, const u8 *data, u32 len)
{
	p->private_data_len = min_t(u32, len, sizeof(p->private_data));
	memcpy(p->private_data, data, p->private_data_len);
}

/* A REQ with the same communication ID and CA GUID, if one is known. */
static struct sv_cm_id *sv_cm_dup_req(const struct sv_cm_rx *rx)
{
	u32 remote = sv_cm_get32(rx->mad, 0);
	struct sv_cm_id *id;
	unsigned long i;

	xa_for_each(&sv_cm_comm_ids, i, id)
		if (id->remote_comm_id == remote && id->sdev == rx->sdev &&
		    !memcmp(&id->remote_guid, rx->mad + SV_MAD_HDR_LEN +
			    REQ_CA_GUID, 8) &&
		    id->state >= SV_CM_REQ_RCVD)
			return id;
	return NULL;
}

/* Answer a REQ we will not take, from no id. */
static void sv_cm_rej_req(const struct sv_cm_rx *rx, u16 reason)
{
	u8 mad[SV_MAD_LEN];

	sv_cm_mad_init(mad, SV_CM_ATTR_REJ, get_unaligned_be64(rx->mad + 8));
	sv_cm_put32(mad, 4, sv_cm_get32(rx->mad, 0));
	sv_cm_put_bits(mad, REJ_MSG, 0, 2, 0);
	put_unaligned_be16(reason, sv_cm_at(mad, REJ_REASON));
	sv_cm_mad_reply(rx, mad);
}

/* The IP CM header's addresses: the REQ's source and destination. */
bool sv_cm_get_hdr(const u8 *h, struct sockaddr_storage *src,
		   struct sockaddr_storage *dst)
{
	u8 gs[16], gd[16];

	if (h[0] != 0)
		return false;
	if ((h[1] >> 4) == 4) {
		ipv6_addr_set_v4mapped(get_unaligned((__be32 *)(h + 16)),
				       (struct in6_addr *)gs);
		ipv6_addr_set_v4mapped(get_unaligned((__be32 *)(h + 32)),
				       (struct in6_addr *)gd);
	} else if ((h[1] >> 4) == 6) {
		memcpy(gs, h + 4, 16);
		memcpy(gd, h + 20, 16);
	} else {
		return false;
	}
	sv_cm_gid_to_addr(gs, get_unaligned_be16(h + 2), src);
	sv_cm_gid_to_addr(gd, 0, dst);
	return true;
}

/**
 * sv_cm_req_listener - the listener of a request that came in as rx
 * @rx: the request
 * @ps: the port space and port of its service ID
 * @port: the port
 * @dst: the address it was sent to (the IP CM header's)
 * @qp_type: of the ids the request is for: a listener of another is none
 *
 * -ENOENT: no one listens; -ENOSPC: the listener's backlog is full.
 */
struct sv_cm_id *sv_cm_req_listener(const struct sv_cm_rx *rx, u16 ps,
				    u16 port,
				    const struct sockaddr_storage *dst,
				    u32 qp_type)
{
	struct sv_cm_id *lis;

	lis = sv_cm_port_listener(read_pnet(&rx->sdev->net), ps, port, dst,
				  rx->sdev);
	if (!lis || lis->qp_type != qp_type)
		return ERR_PTR(-ENOENT);
	if (lis->pending >= lis->backlog)
		return ERR_PTR(-ENOSPC);
	return lis;
}

/**
 * sv_cm_new_child - the id a request to a listener makes
 * @rx: the request, as it came in (on rx->sdev, from rx->sgid)
 * @lis: the listener
 * @ps: the request's port space
 * @src: the peer's address (the IP CM header's source)
 * @sgid: ours, that the request was for
 *
 * The id has a communication ID of its own and the request's; its
 * answers go to where the request came from. -EADDRNOTAVAIL: @sgid is
 * not the device's.
 */
struct sv_cm_id *sv_cm_new_child(struct sv_cm_rx *rx, struct sv_cm_id *lis,
				 u16 ps, const struct sockaddr_storage *src,
				 const u8 *sgid)
{
	int index = sv_gid_index(rx->sdev, sgid, SV_GID_TYPE_ROCE_V2);
	struct sv_cm_id *id;
	int ret;

	if (index < 0)
		return ERR_PTR(-EADDRNOTAVAIL);
	id = sv_cm_id_new(lis->chan, ps, lis->qp_type, lis->uid);
	if (IS_ERR(id))
		return id;
	sv_cm_set_dev(id, rx->sdev);
	id->sgid_index = index;
	memcpy(id->sgid, sgid, 16);
	memcpy(id->dgid, rx->sgid, 16);
	ret = sv_cm_comm_id_alloc(id);
	if (ret) {
		sv_cm_destroy(id);
		return ERR_PTR(ret);
	}
	sv_cm_gid_to_addr(id->sgid, lis->port, &id->src);
	memcpy(&id->dst, src, sizeof(*src));
	id->tid = get_unaligned_be64(rx->mad + 8);
	id->remote_comm_id = sv_cm_get32(rx->mad, 0);
	return id;
}

static void sv_cm_req(struct sv_cm_rx *rx)
{
	const u8 *mad = rx->mad;
	u64 sid = get_unaligned_be64(mad + SV_MAD_HDR_LEN + REQ_SERVICE_ID);
	struct sv_cm_conn_param param = {};
	struct sockaddr_storage src, dst;
	struct sv_cm_id *lis, *id;
	u16 ps = (sid >> 16) & 0xffff;

	id = sv_cm_dup_req(rx);
	if (id) {
		/* Our REP was lost: again. Else it is in hand already. */
		if (id->state == SV_CM_REP_SENT)
			sv_cm_send(id, id->mad);
		return;
	}
	if ((sid >> 32) || (ps != SV_CM_PS_TCP && ps != SV_CM_PS_IB) ||
	    sv_cm_get_bits(mad, REQ_TIMEOUT_TYPE, 5, 2) != 0 ||
	    !sv_cm_get_hdr(mad + SV_MAD_HDR_LEN + REQ_PRIVATE, &src, &dst)) {
		sv_cm_rej_req(rx, SV_REJ_INVALID_SERVICE);
		return;
	}
	/* Our answers go where the REQ came from (its path's local GID). */
	if (memcmp(mad + SV_MAD_HDR_LEN + REQ_LOCAL_GID, rx->sgid, 16)) {
		sv_cm_rej_req(rx, SV_REJ_INVALID_GID);
		return;
	}
	lis = sv_cm_req_listener(rx, ps, sid & 0xffff, &dst, SV_QPT_RC);
	if (IS_ERR(lis)) {
		sv_cm_rej_req(rx, PTR_ERR(lis) == -ENOSPC ? SV_REJ_CONSUMER :
			      SV_REJ_INVALID_SERVICE);
		return;
	}
	id = sv_cm_new_child(rx, lis, ps, &src,
			     mad + SV_MAD_HDR_LEN + REQ_REMOTE_GID);
	if (IS_ERR(id)) {
		sv_cm_rej_req(rx, PTR_ERR(id) == -EADDRNOTAVAIL ?
			      SV_REJ_INVALID_GID : SV_REJ_CONSUMER);
		return;
	}
	memcpy(&id->remote_guid, mad + SV_MAD_HDR_LEN + REQ_CA_GUID, 8);
	id->remote_qpn = sv_cm_get_hi(mad, REQ_QPN, 24);
	id->remote_psn = sv_cm_get_hi(mad, REQ_PSN, 24);
	id->local_psn = get_random_u32() & 0xffffff;
	param.initiator_depth = mad[SV_MAD_HDR_LEN + REQ_QPN + 3];
	param.responder_resources = mad[SV_MAD_HDR_LEN + REQ_INIT_DEPTH];
	id->resp_res = param.responder_resources;
	id->init_depth = param.initiator_depth;
	param.flow_control = sv_cm_get_bits(mad, REQ_TIMEOUT_TYPE, 7, 1);
	id->peer_cm_timeout = sv_cm_get_bits(mad, REQ_PSN + 3, 0, 5);
	id->retry_count = sv_cm_get_bits(mad, REQ_PSN + 3, 5, 3);
	param.retry_count = id->retry_count;
	id->mtu = min_t(u8, sv_cm_get_bits(mad, REQ_MTU_RNR, 0, 4),
			READ_ONCE(rx->sdev->active_mtu));
	id->rnr_retry = sv_cm_get_bits(mad, REQ_MTU_RNR, 5, 3);
	param.rnr_retry_count = id->rnr_retry;
	id->max_cm_retries = sv_cm_get_bits(mad, REQ_RETRIES_SRQ, 0, 4);
	param.srq = sv_cm_get_bits(mad, REQ_RETRIES_SRQ, 4, 1);
	id->srq = param.srq;
	id->tos = mad[SV_MAD_HDR_LEN + REQ_TCLASS];
	id->hop_limit = mad[SV_MAD_HDR_LEN + REQ_HOP_LIMIT];
	id->ack_timeout = sv_cm_get_bits(mad, REQ_ACK_TIMEOUT, 0, 5);
	param.qp_num = id->remote_qpn;
	sv_cm_conn_param(&param, mad + SV_MAD_HDR_LEN + REQ_PRIVATE +
			 SV_CM_HDR_LEN, SV_CM_REQ_PRIVATE - SV_CM_HDR_LEN);
	id->route = true;
	id->state = SV_CM_REQ_RCVD;
	kref_get(&lis->ref);
	id->listener = lis;
	lis->pending++;
	sv_cm_event(lis, SV_CM_EVENT_CONNECT_REQUEST, 0, &param, id);
}

static void sv_cm_rep(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);
	struct sv_cm_conn_param param = {};
	const u8 *mad = rx->mad;
	u8 rtu[SV_MAD_LEN];

	if (!id)
		return;
	if (id->state == SV_CM_ESTABLISHED &&
	    id->remote_comm_id == sv_cm_get32(mad, 0)) {
		/* Our RTU was lost */
		sv_cm_msg(id, rtu, SV_CM_ATTR_RTU);
		sv_cm_send(id, rtu);
		return;
	}
	if (id->state != SV_CM_REQ_SENT)
		return;
	sv_cm_disarm(id);
	id->remote_comm_id = sv_cm_get32(mad, 0);
	memcpy(&id->remote_guid, mad + SV_MAD_HDR_LEN + REP_CA_GUID, 8);
	id->remote_qpn = sv_cm_get_hi(mad, REP_QPN, 24);
	id->remote_psn = sv_cm_get_hi(mad, REP_PSN, 24);
	/* Its responder resources are our reads' depth, and back. */
	id->init_depth = min(id->init_depth, mad[SV_MAD_HDR_LEN + REP_RESP_RES]);
	id->resp_res = min(id->resp_res, mad[SV_MAD_HDR_LEN + REP_INIT_DEPTH]);
	id->rnr_retry = sv_cm_get_bits(mad, REP_RNR_SRQ, 0, 3);
	param.qp_num = id->remote_qpn;
	param.responder_resources = mad[SV_MAD_HDR_LEN + REP_RESP_RES];
	param.initiator_depth = mad[SV_MAD_HDR_LEN + REP_INIT_DEPTH];
	param.flow_control = sv_cm_get_bits(mad, REP_ACK_FLAGS, 7, 1);
	param.rnr_retry_count = id->rnr_retry;
	param.srq = sv_cm_get_bits(mad, REP_RNR_SRQ, 3, 1);
	sv_cm_conn_param(&param, mad + SV_MAD_HDR_LEN + REP_PRIVATE,
			 SV_CM_REP_PRIVATE);
	id->state = SV_CM_REP_RCVD;
	sv_cm_event(id, SV_CM_EVENT_CONNECT_RESPONSE, 0, &param, NULL);
}

static void sv_cm_rtu(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);
	struct sv_cm_conn_param param = {};

	if (!id || id->state != SV_CM_REP_SENT ||
	    id->remote_comm_id != sv_cm_get32(rx->mad, 0))
		return;
	sv_cm_disarm(id);
	id->state = SV_CM_ESTABLISHED;
	sv_cm_conn_param(&param, rx->mad + SV_MAD_HDR_LEN + RTU_PRIVATE,
			 SV_CM_RTU_PRIVATE);
	param.qp_num = id->remote_qpn;
	sv_cm_event(id, SV_CM_EVENT_ESTABLISHED, 0, &param, NULL);
}

static void sv_cm_rej(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);
	struct sv_cm_conn_param param = {};
	u16 reason = get_unaligned_be16(rx->mad + SV_MAD_HDR_LEN + REJ_REASON);

	if (!id)
		return;
	switch (id->state) {
	case SV_CM_REQ_SENT:
	case SV_CM_REP_RCVD:
	case SV_CM_REP_SENT:
		break;
	default:
		return;
	}
	/* A REJ of our REQ may come before the peer had an ID for it. */
	if (id->state != SV_CM_REQ_SENT &&
	    id->remote_comm_id != sv_cm_get32(rx->mad, 0))
		return;
	sv_cm_disarm(id);
	sv_cm_unpend(id);
	id->state = SV_CM_DISCONNECTED;
	sv_cm_conn_param(&param, rx->mad + SV_MAD_HDR_LEN + REJ_PRIVATE,
			 SV_CM_REJ_PRIVATE_MAX);
	sv_cm_event(id, SV_CM_EVENT_REJECTED, reason, &param, NULL);
}

static void sv_cm_mra(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);
	u8 msg = sv_cm_get_bits(rx->mad, MRA_MSG, 0, 2);
	u8 t = sv_cm_get_bits(rx->mad, MRA_TIMEOUT, 0, 5);

	if (!id || !((id->state == SV_CM_REQ_SENT && msg == 0) ||
		     (id->state == SV_CM_REP_SENT && msg == 1)))
		return;
	/* The peer needs longer: wait that, and count no retry for it. */
	sv_cm_arm(id, sv_cm_jiffies(t) + 2 * sv_cm_jiffies(SV_CM_PKT_LIFETIME));
}

static void sv_cm_dreq(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);
	struct sv_cm_conn_param param = {};
	u8 drep[SV_MAD_LEN];

	if (id && (id->remote_comm_id != sv_cm_get32(rx->mad, 0) ||
		   id->local_qpn != sv_cm_get_hi(rx->mad, DREQ_QPN, 24)))
		return;
	if (!id || id->state == SV_CM_DISCONNECTED) {
		/* No connection (any more): its DREP all the same. */
		sv_cm_mad_init(drep, SV_CM_ATTR_DREP,
			       get_unaligned_be64(rx->mad + 8));
		sv_cm_put32(drep, 0, sv_cm_get32(rx->mad, 4));
		sv_cm_put32(drep, 4, sv_cm_get32(rx->mad, 0));
		sv_cm_mad_reply(rx, drep);
		return;
	}
	switch (id->state) {
	case SV_CM_ESTABLISHED:
	case SV_CM_REP_SENT:
	case SV_CM_REP_RCVD:
	case SV_CM_DREQ_SENT:
		break;
	default:
		return;
	}
	sv_cm_disarm(id);
	sv_cm_msg(id, drep, SV_CM_ATTR_DREP);
	sv_cm_send(id, drep);
	id->state = SV_CM_DISCONNECTED;
	sv_cm_conn_param(&param, rx->mad + SV_MAD_HDR_LEN + DREQ_PRIVATE,
			 SV_CM_DREQ_PRIVATE);
	sv_cm_event(id, SV_CM_EVENT_DISCONNECTED, 0, &param, NULL);
}

static void sv_cm_drep(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, 4);

	if (!id || id->state != SV_CM_DREQ_SENT ||
	    id->remote_comm_id != sv_cm_get32(rx->mad, 0))
		return;
	sv_cm_disarm(id);
	id->state = SV_CM_DISCONNECTED;
	sv_cm_event(id, SV_CM_EVENT_DISCONNECTED, 0, NULL, NULL);
}

/* A MAD from the queue (mad.c), under sv_cm_lock. */
void sv_cm_handle(struct sv_cm_rx *rx)
{
	lockdep_assert_held(&sv_cm_lock);
	switch (sv_cm_attr(rx->mad)) {
	case SV_CM_ATTR_REQ:
		sv_cm_req(rx);
		break;
	case SV_CM_ATTR_REP:
		sv_cm_rep(rx);
		break;
	case SV_CM_ATTR_RTU:
		sv_cm_rtu(rx);
		break;
	case SV_CM_ATTR_REJ:
		sv_cm_rej(rx);
		break;
	case SV_CM_ATTR_MRA:
		sv_cm_mra(rx);
		break;
	case SV_CM_ATTR_DREQ:
		sv_cm_dreq(rx);
		break;
	case SV_CM_ATTR_DREP:
		sv_cm_drep(rx);
		break;
	case SV_CM_ATTR_SIDR_REQ:
		sv_cm_sidr_req(rx);
		break;
	case SV_CM_ATTR_SIDR_REP:
		sv_cm_sidr_rep(rx);
		break;
	default:
		break;		/* LAP, APR: not spoken */
	}
}

/* A retry timer: the request again, or give up and say so. */
void sv_cm_timeout(struct work_struct *work)
{
	struct sv_cm_id *id = container_of(to_delayed_work(work),
					   struct sv_cm_id, timer);

	mutex_lock(&sv_cm_lock);
	if (id->state != SV_CM_REQ_SENT && id->state != SV_CM_REP_SENT &&
	    id->state != SV_CM_DREQ_SENT && id->state != SV_CM_SIDR_REQ_SENT)
		goto out;
	if (id->retries++ < id->max_cm_retries) {
		sv_cm_send(id, id->mad);
		sv_cm_arm(id, sv_cm_retry_delay(id));
		goto out;
	}
	switch (id->state) {
	case SV_CM_SIDR_REQ_SENT:
		sv_cm_sidr_timeout(id);
		break;
	case SV_CM_REQ_SENT:
		sv_cm_send_rej(id, 0, SV_REJ_TIMEOUT, NULL, 0);
		id->state = SV_CM_DISCONNECTED;
		sv_cm_event(id, SV_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL,
			    NULL);
		break;
	case SV_CM_REP_SENT:
		sv_cm_send_rej(id, 1, SV_REJ_TIMEOUT, NULL, 0);
		id->state = SV_CM_DISCONNECTED;
		sv_cm_event(id, SV_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, NULL,
			    NULL);
		break;
	default:
		id->state = SV_CM_DISCONNECTED;
		sv_cm_event(id, SV_CM_EVENT_DISCONNECTED, 0, NULL, NULL);
		break;
	}
out:
	mutex_unlock(&sv_cm_lock);
	sv_cm_id_put(id);
}

/*
 * A device is being removed (rtnl and sv_devices_lock held): its ids are
 * told (DEVICE_REMOVAL) and let go of it.
 */
void sv_cm_device_gone(struct sv_device *sdev)
{
	struct sv_cm_id *id;
	unsigned long i;

	mutex_lock(&sv_cm_lock);
	xa_for_each(&sv_cm_all_ids, i, id) {
		if (id->sdev != sdev || id->state == SV_CM_DEAD)
			continue;
		sv_cm_event(id, SV_CM_EVENT_DEVICE_REMOVAL, 0, NULL, NULL);
		sv_cm_id_kill(id);
	}
	mutex_unlock(&sv_cm_lock);
}
