// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libefa.so.1 stand-in: the efadv_* symbols of rdma-core's libefa (version
 * nodes EFA_1.0 .. EFA_1.2, see libefa.map). No softverbs device is an EFA
 * device, so each call fails as rdma-core's libefa fails it for a device
 * that is not EFA: EOPNOTSUPP, as NULL + errno or as the returned errno.
 */
#include <stdint.h>
#include <infiniband/efadv.h>

#include "sv_compat.h"

SV_EXPORT struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd,
						struct ibv_qp_init_attr *attr,
						uint32_t driver_qp_type)
{
	SV_NOTSUP_NULL;
}

SV_EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
					    struct ibv_qp_init_attr_ex *attr_ex,
					    struct efadv_qp_init_attr *efa_attr,
					    uint32_t inlen)
{
	SV_NOTSUP_NULL;
}

SV_EXPORT int efadv_query_device(struct ibv_context *ibvctx,
				 struct efadv_device_attr *attr,
				 uint32_t inlen)
{
	return EOPNOTSUPP;
}

SV_EXPORT int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr,
			     uint32_t inlen)
{
	return EOPNOTSUPP;
}

SV_EXPORT struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx,
					    struct ibv_cq_init_attr_ex *attr_ex,
					    struct efadv_cq_init_attr *efa_attr,
					    uint32_t inlen)
{
	SV_NOTSUP_NULL;
}

SV_EXPORT struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	SV_NOTSUP_NULL;
}
