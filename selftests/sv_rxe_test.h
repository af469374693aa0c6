/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The machine's other RDMA device beside softverbs, for the tests of our
 * libraries beside rdma-core's: an rdma_rxe device on one end of a veth
 * pair, which rdma-core's libibverbs serves (user/lib/system.c).
 */
#ifndef SV_RXE_TEST_H
#define SV_RXE_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static inline void sv_rxe_down(const char *net0, const char *rxe)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rdma link del %s 2>/dev/null; "
		 "ip link del %s 2>/dev/null", rxe, net0);
	if (system(cmd)) {
		/* Usually there is nothing to clean up. */
	}
}

/* @rxe on @net0 (address @ip/24), @net1 its veth peer; false if not. */
static inline bool sv_rxe_up(const char *net0, const char *net1,
			     const char *rxe, const char *ip)
{
	char cmd[512];

	sv_rxe_down(net0, rxe);
	snprintf(cmd, sizeof(cmd), "modprobe rdma_rxe 2>/dev/null && "
		 "ip link add %s type veth peer name %s && "
		 "ip addr add %s/24 dev %s && "
		 "ip link set %s up && ip link set %s up && "
		 "rdma link add %s type rxe netdev %s",
		 net0, net1, ip, net0, net0, net1, rxe, net0);
	return !system(cmd);
}

static inline struct ibv_device *sv_find_dev(struct ibv_device **l,
					     const char *name)
{
	for (; l && *l; l++)
		if (!strcmp(ibv_get_device_name(*l), name))
			return *l;
	return NULL;
}

#endif /* SV_RXE_TEST_H */
