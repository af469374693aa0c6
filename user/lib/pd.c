// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Protection domains: ibv_alloc_pd(3), ibv_dealloc_pd(3), and
 * ibv_import_pd(3) / ibv_unimport_pd() of a PD made through another
 * context on the same file (ibv_import_device(3)).
 */
#include <stdlib.h>

#include "sv_verbs.h"
#include "sv_system.h"

SV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	SV_SYSTEM_FORWARD(context, ibv_alloc_pd, context);
	struct sv_alloc_pd cmd = { .size = sizeof(cmd) };
	struct sv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_cmd(context, SV_IOC_ALLOC_PD, &cmd);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->ibpd.context = context;
	pd->ibpd.handle = cmd.pd_handle;
	return &pd->ibpd;
}

/* 0, or an errno value (EBUSY while MRs, QPs, ... use the PD). */
SV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_dealloc_pd, pd);
	struct sv_dealloc_pd cmd = {
		.size = sizeof(cmd),
		.pd_handle = pd->handle,
	};
	int ret;

	/* A parent domain is the library's alone (td.c). */
	if (to_svpd(pd)->protection)
		return sv_parent_domain_free(pd);
	if (__atomic_load_n(&to_svpd(pd)->parents, __ATOMIC_ACQUIRE))
		return EBUSY;
	ret = sv_cmd(pd->context, SV_IOC_DEALLOC_PD, &cmd);
	if (ret)
		return ret;
	free(to_svpd(pd));
	return 0;
}

/* The PD pd_handle of context's file, as another context made it. */
SV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
				       uint32_t pd_handle)
{
	SV_SYSTEM_FORWARD(context, ibv_import_pd, context, pd_handle);
	struct sv_query_pd q = { .size = sizeof(q), .pd_handle = pd_handle };
	struct sv_pd *pd;
	int ret;

	ret = sv_cmd(context, SV_IOC_QUERY_PD, &q);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibpd.context = context;
	pd->ibpd.handle = pd_handle;
	return &pd->ibpd;
}

/* Forget an imported PD here; the kernel's PD lives on. */
SV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	if (sv_system_context(pd->context)) {
		SV_SYSTEM_CALL_VOID(ibv_unimport_pd, pd);
		return;
	}
	free(to_svpd(pd));
}
