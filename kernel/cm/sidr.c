// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: service ID resolution (SIDR, IBA vol. 1
 * 12.11) for UD ids, as rdma_cm does it for RDMA_PS_UDP and RDMA_PS_IB.
 *
 * Active: rdma_connect() on a UD id sends a SIDR REQ for the service
 * (port space and port) with the IP CM header in its private data; it is
 * retried until the SIDR REP. A REP with status 0 gives the remote QP
 * number and Q_Key (ESTABLISHED); any other status, or no REP at all, is
 * UNREACHABLE (status: the REP's, or -ETIMEDOUT).
 *
 * Passive: a SIDR REQ for a UD listener makes a new id, reported as
 * CONNECT_REQUEST; accept answers with the QP number and the id's Q_Key,
 * reject (or destroying the id) with status 2, and a REQ no UD listener
 * takes with status 1. A REQ again after the REP (the REP was lost) gets
 * the same REP again; one while the request is being decided is dropped.
 */
#include <linux/random.h>

#include "cm.h"

/* SIDR REP status values (IBA table 121) */
#define SV_SIDR_SUCCESS		0
#define SV_SIDR_UNSUPPORTED	1
#define SV_SIDR_REJECT		2

/* Offsets (after the MAD header) */
#define SREQ_REQUEST_ID		0
#define SREQ_PKEY		4
#define SREQ_SERVICE_ID		8
#define SREQ_PRIVATE		16
#define SREQ_PRIVATE_LEN	216

#define SREP_REQUEST_ID		0
#define SREP_STATUS		4
#define SREP_QPN		8
#define SREP_SERVICE_ID		12
#define SREP_QKEY		20
#define SREP_PRIVATE		96

/**
 * sv_cm_set_qkey - the Q_Key of a UD id, as rdma_cm sets it
 * @id: the id
 * @qkey: one asked for (0: the default, RDMA_UDP_QKEY)
 *
 * Once set it stays: another one is -EINVAL.
 */
int sv_cm_set_qkey(struct sv_cm_id *id, u32 qkey)
{
	if (id->qkey)
		return qkey && qkey != id->qkey ? -EINVAL : 0;
	id->qkey = qkey ?: SV_CM_UDP_QKEY;
	return 0;
}

static u64 sv_cm_service_id(const struct sv_cm_id *id)
{
	return ((u64)id->ps << 16) | sv_cm_addr_port(&id->dst);
}

int sv_cm_sidr_connect(struct sv_cm_id *id, const struct sv_cm_conn_param *p)
{
	u8 *mad = id->mad;
	int ret;

	if (id->state != SV_CM_ROUTE_RESOLVED)
		return -EINVAL;
	if (!sv_cm_param_ok(p, SV_CM_SIDR_REQ_PRIVATE_MAX))
		return -EINVAL;
	ret = sv_cm_comm_id_alloc(id);
	if (ret)
		return ret;
	id->local_qpn = p->qp_num;
	id->max_cm_retries = SV_CM_MAX_RETRIES;
	id->peer_cm_timeout = SV_CM_RESPONSE_TIMEOUT;
	id->tid = get_random_u64();

	sv_cm_mad_init(mad, SV_CM_ATTR_SIDR_REQ, id->tid);
	sv_cm_put32(mad, SREQ_REQUEST_ID, id->local_comm_id);
	put_unaligned_be16(SV_DEFAULT_PKEY, sv_cm_at(mad, SREQ_PKEY));
	put_unaligned_be64(sv_cm_service_id(id),
			   sv_cm_at(mad, SREQ_SERVICE_ID));
	sv_cm_put_hdr(id, sv_cm_at(mad, SREQ_PRIVATE));
	memcpy(sv_cm_at(mad, SREQ_PRIVATE + SV_CM_HDR_LEN), p->private_data,
	       p->private_data_len);
	sv_cm_request(id, SV_CM_SIDR_REQ_SENT);
	return 0;
}

/* A SIDR REP of @status for the request @id has, kept in id->mad. */
static void sv_cm_sidr_rep_out(struct sv_cm_id *id, u8 status,
			       const u8 *data, u8 len)
{
	u8 *mad = id->mad;

	sv_cm_mad_init(mad, SV_CM_ATTR_SIDR_REP, id->tid);
	sv_cm_put32(mad, SREP_REQUEST_ID, id->remote_comm_id);
	*sv_cm_at(mad, SREP_STATUS) = status;
	put_unaligned_be64(sv_cm_service_id(id),
			   sv_cm_at(mad, SREP_SERVICE_ID));
	if (status == SV_SIDR_SUCCESS) {
		sv_cm_put_hi(mad, SREP_QPN, 24, id->local_qpn);
		sv_cm_put32(mad, SREP_QKEY, id->qkey);
	}
	if (len)
		memcpy(sv_cm_at(mad, SREP_PRIVATE), data, len);
	sv_cm_send(id, mad);
	sv_cm_unpend(id);
	id->state = SV_CM_SIDR_DONE;
}

int sv_cm_sidr_accept(struct sv_cm_id *id, const struct sv_cm_conn_param *p)
{
	int ret;

	if (id->state != SV_CM_SIDR_REQ_RCVD)
		return -EINVAL;
	if (!sv_cm_param_ok(p, SV_CM_SIDR_REP_PRIVATE_MAX))
		return -EINVAL;
	ret = sv_cm_set_qkey(id, p->qkey);
	if (ret)
		return ret;
	id->local_qpn = p->qp_num;
	sv_cm_sidr_rep_out(id, SV_SIDR_SUCCESS, p->private_data,
			   p->private_data_len);
	return 0;
}

int sv_cm_sidr_reject(struct sv_cm_id *id, const u8 *data, u8 len)
{
	if (id->state != SV_CM_SIDR_REQ_RCVD)
		return -EINVAL;
	if (len > SV_CM_SIDR_REP_PRIVATE_MAX)
		return -EINVAL;
	sv_cm_sidr_rep_out(id, SV_SIDR_REJECT, data, len);
	return 0;
}

/* A request destroyed before it was answered: rejected. */
void sv_cm_sidr_kill(struct sv_cm_id *id)
{
	sv_cm_sidr_rep_out(id, SV_SIDR_REJECT, NULL, 0);
}

/* The passive id of this request (same request ID, same peer), if any. */
static struct sv_cm_id *sv_cm_sidr_dup(const struct sv_cm_rx *rx)
{
	u32 remote = sv_cm_get32(rx->mad, SREQ_REQUEST_ID);
	struct sv_cm_id *id;
	unsigned long i;

	xa_for_each(&sv_cm_all_ids, i, id)
		if ((id->state == SV_CM_SIDR_REQ_RCVD ||
		     (id->state == SV_CM_SIDR_DONE &&
		      sv_cm_attr(id->mad) == SV_CM_ATTR_SIDR_REP)) &&
		    id->remote_comm_id == remote && id->sdev == rx->sdev &&
		    !memcmp(id->dgid, rx->sgid, 16))
			return id;
	return NULL;
}

/* Answer a SIDR REQ that no id takes. */
static void sv_cm_sidr_refuse(const struct sv_cm_rx *rx, u8 status)
{
	u8 mad[SV_MAD_LEN];

	sv_cm_mad_init(mad, SV_CM_ATTR_SIDR_REP,
		       get_unaligned_be64(rx->mad + 8));
	sv_cm_put32(mad, SREP_REQUEST_ID,
		    sv_cm_get32(rx->mad, SREQ_REQUEST_ID));
	*sv_cm_at(mad, SREP_STATUS) = status;
	memcpy(sv_cm_at(mad, SREP_SERVICE_ID),
	       sv_cm_at((u8 *)rx->mad, SREQ_SERVICE_ID), 8);
	sv_cm_mad_reply(rx, mad);
}

void sv_cm_sidr_req(struct sv_cm_rx *rx)
{
	const u8 *mad = rx->mad;
	u64 sid = get_unaligned_be64(mad + SV_MAD_HDR_LEN + SREQ_SERVICE_ID);
	struct sv_cm_conn_param param = {};
	struct sockaddr_storage src, dst;
	u16 ps = (sid >> 16) & 0xffff;
	struct sv_cm_id *lis, *id;

	id = sv_cm_sidr_dup(rx);
	if (id) {
		/* Our REP was lost: again. Else it is in hand already. */
		if (id->state == SV_CM_SIDR_DONE)
			sv_cm_send(id, id->mad);
		return;
	}
	if ((sid >> 32) || (ps != SV_CM_PS_UDP && ps != SV_CM_PS_IB) ||
	    !sv_cm_get_hdr(mad + SV_MAD_HDR_LEN + SREQ_PRIVATE, &src, &dst)) {
		sv_cm_sidr_refuse(rx, SV_SIDR_UNSUPPORTED);
		return;
	}
	lis = sv_cm_req_listener(rx, ps, sid & 0xffff, &dst, SV_QPT_UD);
	if (IS_ERR(lis)) {
		sv_cm_sidr_refuse(rx, PTR_ERR(lis) == -ENOSPC ? SV_SIDR_REJECT :
				  SV_SIDR_UNSUPPORTED);
		return;
	}
	id = sv_cm_new_child(rx, lis, ps, &src, rx->dgid);
	if (IS_ERR(id)) {
		sv_cm_sidr_refuse(rx, SV_SIDR_REJECT);
		return;
	}
	id->tos = rx->tclass;
	id->hop_limit = 64;
	id->mtu = READ_ONCE(rx->sdev->active_mtu);
	id->route = true;
	id->state = SV_CM_SIDR_REQ_RCVD;
	kref_get(&lis->ref);
	id->listener = lis;
	lis->pending++;
	sv_cm_conn_param(&param, mad + SV_MAD_HDR_LEN + SREQ_PRIVATE +
			 SV_CM_HDR_LEN, SREQ_PRIVATE_LEN - SV_CM_HDR_LEN);
	sv_cm_event(lis, SV_CM_EVENT_CONNECT_REQUEST, 0, &param, id);
}

void sv_cm_sidr_rep(struct sv_cm_rx *rx)
{
	struct sv_cm_id *id = sv_cm_mine(rx, SREP_REQUEST_ID);
	struct sv_cm_conn_param param = {};
	const u8 *mad = rx->mad;
	u8 status = mad[SV_MAD_HDR_LEN + SREP_STATUS];
	u32 qkey = sv_cm_get32(mad, SREP_QKEY);

	if (!id || id->state != SV_CM_SIDR_REQ_SENT)
		return;
	sv_cm_disarm(id);
	sv_cm_conn_param(&param, mad + SV_MAD_HDR_LEN + SREP_PRIVATE,
			 SV_CM_SIDR_REP_PRIVATE_MAX);
	if (status != SV_SIDR_SUCCESS) {
		id->state = SV_CM_DISCONNECTED;
		sv_cm_event(id, SV_CM_EVENT_UNREACHABLE, status, &param, NULL);
		return;
	}
	if (sv_cm_set_qkey(id, qkey)) {
		/* Not the Q_Key of the port space: rdma_cm's ADDR_ERROR */
		id->state = SV_CM_DISCONNECTED;
		sv_cm_event(id, SV_CM_EVENT_ADDR_ERROR, -EINVAL, NULL, NULL);
		return;
	}
	id->remote_qpn = sv_cm_get_hi(mad, SREP_QPN, 24);
	param.qp_num = id->remote_qpn;
	param.qkey = qkey;
	id->state = SV_CM_SIDR_DONE;
	sv_cm_event(id, SV_CM_EVENT_ESTABLISHED, 0, &param, NULL);
}

/* No SIDR REP after every retry. */
void sv_cm_sidr_timeout(struct sv_cm_id *id)
{
	id->state = SV_CM_DISCONNECTED;
	sv_cm_event(id, SV_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL);
}
