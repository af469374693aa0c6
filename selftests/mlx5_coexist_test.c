// SPDX-License-Identifier: GPL-2.0
/*
 * Our libmlx5.so.1 beside rdma-core's (user/compat/mlx5_system.c): an
 * mlx5 direct-verbs call on a device softverbs does not serve, or on an
 * object made for one, is made by rdma-core's libmlx5, in the namespace
 * of rdma-core's libibverbs that serves that device.
 *
 * There is no mlx5 hardware here. So:
 *  - rdma_core: rdma-core's own libmlx5 answers for an rxe device as it
 *    does without softverbs, and is the provider's instance (mapped
 *    once); softverbs0 is still ours in the same process;
 *  - fake: a recording stand-in (sv_fake_mlx5.c), named by
 *    SOFTVERBS_SYSTEM_LIBMLX5, shows that every exported call reaches it
 *    with the program's arguments and the errno it sets, that the objects
 *    it makes go back to it until destroyed, that softverbs' own do not,
 *    and that our DR actions which name no domain get a twin of its own.
 * Skipped where rdma_rxe cannot be set up.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "sv_harness.h"
#include "sv_test.h"
#include "sv_rxe_test.h"

#define NET0	"svmx0"
#define NET1	"svmx1"
#define RXE	"svmxrxe0"
#define RDMA_CORE_LIBMLX5 "/usr/lib/x86_64-linux-gnu/libmlx5.so.1"

/* Our libibverbs' way into its namespace (user/lib/sv_private.h). */
void *sv_private_system_dlopen(const char *path);

/* sv_fake_mlx5.c's log */
struct sv_fake_call {
	const char *name;
	long arg[6];
	void *acts[4];
};

struct sv_fake_log {
	unsigned long n;
	struct sv_fake_call call[64];
};

struct sv_mx {
	struct ibv_device **list;
	struct ibv_context *rxe, *sv;
	/* with the stand-in: */
	struct sv_fake_log *log;
	void (*ret)(long ret);
	void (*err)(int err);
};

static int sv_mx_open(struct sv_mx *m, bool fake)
{
	static char path[PATH_MAX + 64];
	void *h;

	memset(m, 0, sizeof(*m));
	if (fake) {
		snprintf(path, sizeof(path),
			 "%s/../selftests/libsv_fake_mlx5.so", sv_compat_dir());
		if (access(path, R_OK) ||
		    setenv("SOFTVERBS_SYSTEM_LIBMLX5", path, 1))
			return -1;
	}
	m->list = ibv_get_device_list(NULL);
	m->rxe = ibv_open_device(sv_find_dev(m->list, RXE));
	m->sv = ibv_open_device(sv_find_dev(m->list, "softverbs0"));
	if (!m->rxe || !m->sv)
		return -1;
	if (!fake)
		return 0;
	/* The instance our libmlx5 loads: one file, one namespace */
	h = sv_private_system_dlopen(path);
	if (!h)
		return -1;
	m->log = ((struct sv_fake_log *(*)(void))
		  dlsym(h, "sv_fake_mlx5_log"))();
	m->ret = (void (*)(long))dlsym(h, "sv_fake_mlx5_ret");
	m->err = (void (*)(int))dlsym(h, "sv_fake_mlx5_errno");
	return m->log && m->ret && m->err ? 0 : -1;
}

static void sv_mx_close(struct sv_mx *m)
{
	if (m->sv)
		ibv_close_device(m->sv);
	if (m->rxe)
		ibv_close_device(m->rxe);
	if (m->list)
		ibv_free_device_list(m->list);
}

static const struct sv_fake_call *sv_last(struct sv_mx *m)
{
	return m->log->n ? &m->log->call[(m->log->n - 1) % 64] : NULL;
}

/* How many of the last @back calls were @name */
static int sv_calls_of(struct sv_mx *m, const char *name, unsigned long back)
{
	unsigned long i;
	int k = 0;

	for (i = m->log->n > back ? m->log->n - back : 0; i < m->log->n; i++)
		k += !strcmp(m->log->call[i % 64].name, name);
	return k;
}

/* An object the system's library made (a DevX object, kept as its). */
static void *sv_sys_obj(struct sv_mx *m)
{
	return mlx5dv_devx_obj_create(m->rxe, NULL, 0, NULL, 0);
}

/* ---- rdma-core's libmlx5, for an rxe device ---- */

FIXTURE(rdma_core) {
	struct sv_mx m;
};

FIXTURE_SETUP(rdma_core)
{
	if (!sv_rxe_up(NET0, NET1, RXE, "192.0.2.79"))
		SKIP(return, "rdma_rxe cannot be set up here");
	if (access(RDMA_CORE_LIBMLX5, R_OK))
		SKIP(return, "no rdma-core libmlx5 (ibverbs-providers)");
	ASSERT_EQ(0, sv_mx_open(&self->m, false));
}

FIXTURE_TEARDOWN(rdma_core)
{
	sv_mx_close(&self->m);
	sv_rxe_down(NET0, RXE);
}

/* What rdma-core's libmlx5 answers for a device that is not mlx5 */
TEST_F(rdma_core, answers_for_rxe)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mlx5dv_context dv = { 0 };
	struct ibv_cq *cq;

	ASSERT_FALSE(mlx5dv_is_supported(self->m.rxe->device));
	ASSERT_TRUE(mlx5dv_is_supported(self->m.sv->device));
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_open_device(self->m.rxe->device, NULL));
	ASSERT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(EOPNOTSUPP, mlx5dv_query_device(self->m.rxe, &dv));
	ASSERT_EQ(0, mlx5dv_query_device(self->m.sv, &dv));
	qa.pd = ibv_alloc_pd(self->m.rxe);
	ASSERT_NE(NULL, qa.pd);
	cq = ibv_create_cq(self->m.rxe, 2, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qa.send_cq = qa.recv_cq = cq;
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_create_qp(self->m.rxe, &qa, NULL));
	ASSERT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(0, ibv_destroy_cq(cq));
	ASSERT_EQ(0, ibv_dealloc_pd(qa.pd));
}

/*
 * The library that answered is the one the namespace's libibverbs loaded
 * as its mlx5 provider: rdma-core's file is mapped once, not twice.
 */
TEST_F(rdma_core, one_instance)
{
	char cmd[256];

	ASSERT_FALSE(mlx5dv_is_supported(self->m.rxe->device));
	snprintf(cmd, sizeof(cmd),
		 "test $(grep -c 'r-xp.*/libmlx5.so.1.[0-9.]*$' /proc/%d/maps)"
		 " = 1", getpid());
	ASSERT_EQ(0, system(cmd));
}

/*
 * A call only rdma-core's library answers otherwise than ours: it looks
 * for the VFIO device's IOMMU group, and there is no such PCI device.
 */
TEST_F(rdma_core, vfio_list)
{
	struct mlx5dv_vfio_context_attr va = { .pci_name = "0000:ff:1f.7" };

	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_get_vfio_device_list(&va));
	ASSERT_EQ(ENOENT, errno);
}

/* ---- the stand-in ---- */

FIXTURE(fake) {
	struct sv_mx m;
};

FIXTURE_SETUP(fake)
{
	if (!sv_rxe_up(NET0, NET1, RXE, "192.0.2.79"))
		SKIP(return, "rdma_rxe cannot be set up here");
	ASSERT_EQ(0, sv_mx_open(&self->m, true));
}

FIXTURE_TEARDOWN(fake)
{
	sv_mx_close(&self->m);
	sv_rxe_down(NET0, RXE);
}

/*
 * Every exported call but those with their own test below, by its
 * parameters in rdma-core's mlx5dv.h: D a device, X a context, q c r w i
 * a m p a QP, CQ, SRQ, WQ, RWQ indirection table, AH, DM, PD, x an
 * ibv_qp_ex, o an mlx5dv object; '-' anything else.
 */
static const struct { const char *name, *args; } sv_calls[] = {
	{ "_mlx5dv_mkey_check", "o--" },
	{ "_mlx5dv_query_port", "X---" },
	{ "mlx5dv_alloc_dm", "X--" },
	{ "mlx5dv_alloc_var", "X-" },
	{ "mlx5dv_create_cq", "X--" },
	{ "mlx5dv_create_flow", "o---" },
	{ "mlx5dv_create_flow_action_esp", "X--" },
	{ "mlx5dv_create_flow_action_modify_header", "X---" },
	{ "mlx5dv_create_flow_action_packet_reformat", "X----" },
	{ "mlx5dv_create_flow_matcher", "X-" },
	{ "mlx5dv_create_qp", "X--" },
	{ "mlx5dv_create_steering_anchor", "X-" },
	{ "mlx5dv_create_wq", "X--" },
	{ "mlx5dv_crypto_login", "X-" },
	{ "mlx5dv_crypto_login_create", "X-" },
	{ "mlx5dv_crypto_login_destroy", "o" },
	{ "mlx5dv_crypto_login_query", "o-" },
	{ "mlx5dv_crypto_login_query_state", "X-" },
	{ "mlx5dv_crypto_logout", "X" },
	{ "mlx5dv_dci_stream_id_reset", "q-" },
	{ "mlx5dv_dek_create", "X-" },
	{ "mlx5dv_dek_destroy", "o" },
	{ "mlx5dv_dek_query", "o-" },
	{ "mlx5dv_destroy_flow_matcher", "o" },
	{ "mlx5dv_destroy_mkey", "o" },
	{ "mlx5dv_destroy_steering_anchor", "o" },
	{ "mlx5dv_devx_alloc_msi_vector", "X" },
	{ "mlx5dv_devx_alloc_uar", "X-" },
	{ "mlx5dv_devx_cq_modify", "c----" },
	{ "mlx5dv_devx_cq_query", "c----" },
	{ "mlx5dv_devx_create_cmd_comp", "X" },
	{ "mlx5dv_devx_create_eq", "X----" },
	{ "mlx5dv_devx_create_event_channel", "X-" },
	{ "mlx5dv_devx_destroy_cmd_comp", "o" },
	{ "mlx5dv_devx_destroy_eq", "o" },
	{ "mlx5dv_devx_destroy_event_channel", "o" },
	{ "mlx5dv_devx_free_msi_vector", "o" },
	{ "mlx5dv_devx_free_uar", "o" },
	{ "mlx5dv_devx_general_cmd", "X----" },
	{ "mlx5dv_devx_get_async_cmd_comp", "o--" },
	{ "mlx5dv_devx_get_event", "o--" },
	{ "mlx5dv_devx_ind_tbl_modify", "i----" },
	{ "mlx5dv_devx_ind_tbl_query", "i----" },
	{ "mlx5dv_devx_obj_create", "X----" },
	{ "mlx5dv_devx_obj_destroy", "o" },
	{ "mlx5dv_devx_obj_modify", "o----" },
	{ "mlx5dv_devx_obj_query", "o----" },
	{ "mlx5dv_devx_obj_query_async", "o----o" },
	{ "mlx5dv_devx_qp_modify", "q----" },
	{ "mlx5dv_devx_qp_query", "q----" },
	{ "mlx5dv_devx_query_eqn", "X--" },
	{ "mlx5dv_devx_srq_modify", "r----" },
	{ "mlx5dv_devx_srq_query", "r----" },
	{ "mlx5dv_devx_subscribe_devx_event", "oo---" },
	{ "mlx5dv_devx_subscribe_devx_event_fd", "o-o-" },
	{ "mlx5dv_devx_umem_dereg", "o" },
	{ "mlx5dv_devx_umem_reg", "X---" },
	{ "mlx5dv_devx_umem_reg_ex", "X-" },
	{ "mlx5dv_devx_wq_modify", "w----" },
	{ "mlx5dv_devx_wq_query", "w----" },
	{ "mlx5dv_dm_map_op_addr", "m-" },
	{ "mlx5dv_dr_action_create_aso", "oo---" },
	{ "mlx5dv_dr_action_create_dest_devx_tir", "o" },
	{ "mlx5dv_dr_action_create_dest_ib_port", "o-" },
	{ "mlx5dv_dr_action_create_dest_ibv_qp", "q" },
	{ "mlx5dv_dr_action_create_dest_root_table", "o-" },
	{ "mlx5dv_dr_action_create_dest_table", "o" },
	{ "mlx5dv_dr_action_create_dest_vport", "o-" },
	{ "mlx5dv_dr_action_create_flow_counter", "o-" },
	{ "mlx5dv_dr_action_create_modify_header", "o---" },
	{ "mlx5dv_dr_action_create_packet_reformat", "o----" },
	{ "mlx5dv_dr_action_create_push_vlan", "o-" },
	{ "mlx5dv_dr_action_destroy", "o" },
	{ "mlx5dv_dr_action_modify_aso", "o---" },
	{ "mlx5dv_dr_action_modify_flow_meter", "o--" },
	{ "mlx5dv_dr_aso_other_domain_link", "ooo--" },
	{ "mlx5dv_dr_aso_other_domain_unlink", "oo" },
	{ "mlx5dv_dr_domain_allow_duplicate_rules", "o-" },
	{ "mlx5dv_dr_domain_create", "X-" },
	{ "mlx5dv_dr_domain_destroy", "o" },
	{ "mlx5dv_dr_domain_set_reclaim_device_memory", "o-" },
	{ "mlx5dv_dr_domain_sync", "o-" },
	{ "mlx5dv_dr_matcher_create", "o---" },
	{ "mlx5dv_dr_matcher_destroy", "o" },
	{ "mlx5dv_dr_matcher_set_layout", "o-" },
	{ "mlx5dv_dr_rule_destroy", "o" },
	{ "mlx5dv_dr_table_create", "o-" },
	{ "mlx5dv_dr_table_destroy", "o" },
	{ "mlx5dv_dump_dr_domain", "-o" },
	{ "mlx5dv_dump_dr_matcher", "-o" },
	{ "mlx5dv_dump_dr_rule", "-o" },
	{ "mlx5dv_dump_dr_table", "-o" },
	{ "mlx5dv_free_var", "o" },
	{ "mlx5dv_get_clock_info", "X-" },
	{ "mlx5dv_get_vfio_device_list", "-" },
	{ "mlx5dv_is_supported", "D" },
	{ "mlx5dv_map_ah_to_qp", "a-" },
	{ "mlx5dv_modify_qp_lag_port", "q-" },
	{ "mlx5dv_modify_qp_sched_elem", "qoo" },
	{ "mlx5dv_modify_qp_udp_sport", "q-" },
	{ "mlx5dv_open_device", "D-" },
	{ "mlx5dv_pp_alloc", "X---" },
	{ "mlx5dv_pp_free", "o" },
	{ "mlx5dv_qp_cancel_posted_send_wrs", "o-" },
	{ "mlx5dv_qp_ex_from_ibv_qp_ex", "x" },
	{ "mlx5dv_query_device", "X-" },
	{ "mlx5dv_query_qp_lag_port", "q--" },
	{ "mlx5dv_reserved_qpn_alloc", "X-" },
	{ "mlx5dv_reserved_qpn_dealloc", "X-" },
	{ "mlx5dv_sched_leaf_create", "X-" },
	{ "mlx5dv_sched_leaf_destroy", "o" },
	{ "mlx5dv_sched_leaf_modify", "o-" },
	{ "mlx5dv_sched_node_create", "X-" },
	{ "mlx5dv_sched_node_destroy", "o" },
	{ "mlx5dv_sched_node_modify", "o-" },
	{ "mlx5dv_set_context_attr", "X--" },
	{ "mlx5dv_vfio_get_events_fd", "X" },
	{ "mlx5dv_vfio_process_events", "X" },
};

typedef long (*sv_any_fn)(long, long, long, long, long, long);

/* Each reaches the stand-in once, with every argument as given. */
TEST_F(fake, every_call)
{
	struct ibv_context *rxe = self->m.rxe;
	struct ibv_qp qp = { .context = rxe };
	struct ibv_cq cq = { .context = rxe };
	struct ibv_srq srq = { .context = rxe };
	struct ibv_wq wq = { .context = rxe };
	struct ibv_rwq_ind_table ind = { .context = rxe };
	struct ibv_ah ah = { .context = rxe };
	struct ibv_dm dm = { .context = rxe };
	struct ibv_pd pd = { .context = rxe };
	struct ibv_qp_ex qpx = { .qp_base.context = rxe };
	const struct sv_fake_call *c;
	unsigned long before;
	size_t i, k;
	long a[6];

	for (i = 0; i < sizeof(sv_calls) / sizeof(sv_calls[0]); i++) {
		const char *args = sv_calls[i].args;
		sv_any_fn fn = (sv_any_fn)dlsym(RTLD_DEFAULT, sv_calls[i].name);

		ASSERT_NE(NULL, fn) TH_LOG("%s", sv_calls[i].name);
		for (k = 0; k < 6; k++) {
			switch (k < strlen(args) ? args[k] : '-') {
			case 'D': a[k] = (long)rxe->device; break;
			case 'X': a[k] = (long)rxe; break;
			case 'q': a[k] = (long)&qp; break;
			case 'c': a[k] = (long)&cq; break;
			case 'r': a[k] = (long)&srq; break;
			case 'w': a[k] = (long)&wq; break;
			case 'i': a[k] = (long)&ind; break;
			case 'a': a[k] = (long)&ah; break;
			case 'm': a[k] = (long)&dm; break;
			case 'p': a[k] = (long)&pd; break;
			case 'x': a[k] = (long)&qpx; break;
			case 'o':
				a[k] = (long)sv_sys_obj(&self->m);
				ASSERT_NE(0, a[k]);
				break;
			default: a[k] = 0x20 + k; break;
			}
		}
		before = self->m.log->n;
		fn(a[0], a[1], a[2], a[3], a[4], a[5]);
		ASSERT_EQ(before + 1, self->m.log->n)
			TH_LOG("%s did not reach it", sv_calls[i].name);
		c = sv_last(&self->m);
		ASSERT_STREQ(sv_calls[i].name, c->name);
		for (k = 0; k < strlen(args); k++) {
			long want = a[k], got = c->arg[k];

			/* A narrow one: its low byte; a bool arrives as 1 */
			if (args[k] == '-') {
				got &= 0xff;
				if (got == 1)
					want = 1;
			}
			ASSERT_EQ(want, got)
				TH_LOG("%s argument %zu", c->name, k);
		}
	}
}

/* Its errno comes back; softverbs' devices and objects stay ours. */
TEST_F(fake, errno_and_ours)
{
	struct mlx5dv_context dv = { 0 };
	struct mlx5dv_dr_domain *d;
	unsigned long before;

	self->m.ret(0);
	self->m.err(EPROTONOSUPPORT);
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_open_device(self->m.rxe->device, NULL));
	ASSERT_EQ(EPROTONOSUPPORT, errno);

	before = self->m.log->n;
	ASSERT_TRUE(mlx5dv_is_supported(self->m.sv->device));
	ASSERT_EQ(0, mlx5dv_query_device(self->m.sv, &dv));
	d = mlx5dv_dr_domain_create(self->m.sv, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, mlx5dv_dr_domain_sync(d, MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW));
	ASSERT_EQ(0, mlx5dv_dr_domain_destroy(d));
	ASSERT_EQ(before, self->m.log->n);
}

/*
 * An object is the system's from its creation until a destroy that
 * succeeds; an address handed out twice is forgotten once per destroy.
 */
TEST_F(fake, objects_until_destroyed)
{
	struct mlx5dv_dr_domain *d, *d2;
	unsigned long before;

	d = mlx5dv_dr_domain_create(self->m.rxe, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_NE(NULL, d);
	ASSERT_EQ((long)self->m.rxe, sv_last(&self->m)->arg[0]);

	self->m.ret(EBUSY);
	ASSERT_EQ(EBUSY, mlx5dv_dr_domain_destroy(d));
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dump_dr_domain(stdout, d));
	ASSERT_STREQ("mlx5dv_dump_dr_domain", sv_last(&self->m)->name);

	/* The same address again, from a second creation */
	self->m.ret((long)d);
	d2 = mlx5dv_dr_domain_create(self->m.rxe, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_EQ(d, d2);
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dr_domain_destroy(d));
	before = self->m.log->n;
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dump_dr_domain(stdout, d));
	ASSERT_EQ(before + 1, self->m.log->n);

	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dr_domain_destroy(d));
	/* Gone: now our stub's answer, and the stand-in hears nothing */
	before = self->m.log->n;
	ASSERT_EQ(EOPNOTSUPP, mlx5dv_dump_dr_domain(stdout, d));
	ASSERT_EQ(before, self->m.log->n);
}

/* mlx5dv_init_obj in both versions, by the first object it names */
TEST_F(fake, init_obj)
{
	struct ibv_qp qp = { .context = self->m.rxe };
	struct ibv_cq cq = { .context = self->m.rxe };
	struct ibv_qp svqp = { .context = self->m.sv };
	int (*v10)(struct mlx5dv_obj *, uint64_t);
	struct mlx5dv_obj obj = { .qp.in = &qp };
	unsigned long before;

	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	ASSERT_STREQ("mlx5dv_init_obj@MLX5_1.2", sv_last(&self->m)->name);
	ASSERT_EQ((long)&obj, sv_last(&self->m)->arg[0]);
	ASSERT_EQ(MLX5DV_OBJ_QP, sv_last(&self->m)->arg[1]);

	v10 = dlvsym(RTLD_DEFAULT, "mlx5dv_init_obj", "MLX5_1.0");
	ASSERT_NE(NULL, v10);
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = &cq;
	self->m.ret(0);
	ASSERT_EQ(0, v10(&obj, MLX5DV_OBJ_CQ));
	ASSERT_STREQ("mlx5dv_init_obj@MLX5_1.0", sv_last(&self->m)->name);

	/* A softverbs QP has no mlx5 layout */
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = &svqp;
	before = self->m.log->n;
	ASSERT_EQ(EOPNOTSUPP, mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	ASSERT_EQ(before, self->m.log->n);
}

/* Calls whose object is inside an attribute */
TEST_F(fake, objects_in_attributes)
{
	struct ibv_pd pd = { .context = self->m.rxe };
	struct mlx5dv_mkey_init_attr ma = { .pd = &pd };
	struct mlx5dv_dr_flow_meter_attr fm = { 0 };
	struct mlx5dv_mkey *mk;

	mk = mlx5dv_create_mkey(&ma);
	ASSERT_NE(NULL, mk);
	ASSERT_STREQ("mlx5dv_create_mkey", sv_last(&self->m)->name);
	ASSERT_EQ((long)&ma, sv_last(&self->m)->arg[0]);
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_destroy_mkey(mk));
	ASSERT_EQ((long)mk, sv_last(&self->m)->arg[0]);

	fm.next_table = (struct mlx5dv_dr_table *)sv_sys_obj(&self->m);
	ASSERT_NE(NULL, mlx5dv_dr_action_create_flow_meter(&fm));
	ASSERT_STREQ("mlx5dv_dr_action_create_flow_meter",
		     sv_last(&self->m)->name);
	ASSERT_EQ((long)&fm, sv_last(&self->m)->arg[0]);
}

/*
 * A drop, tag, default miss or pop VLAN action names no domain: in the
 * system's rules it is a twin the system's library made, once per
 * action; an action of one of our domains is refused there (EINVAL).
 */
TEST_F(fake, dr_action_twins)
{
	struct mlx5dv_dr_action *drop, *tag, *mine, *sys, *acts[3];
	struct mlx5dv_dr_flow_sampler_attr sa = { 0 };
	struct mlx5dv_dr_action_dest_reformat ref;
	struct mlx5dv_dr_action_dest_attr da[2], *dp[2] = { &da[0], &da[1] };
	struct ibv_qp svqp = { .context = self->m.sv };
	struct mlx5dv_dr_domain *mine_d;
	struct mlx5dv_dr_matcher *m;
	const struct sv_fake_call *c;
	unsigned long before;
	void *twin;

	m = (struct mlx5dv_dr_matcher *)sv_sys_obj(&self->m);
	sys = (struct mlx5dv_dr_action *)sv_sys_obj(&self->m);
	before = self->m.log->n;
	drop = mlx5dv_dr_action_create_drop();
	tag = mlx5dv_dr_action_create_tag(0x1234);
	ASSERT_NE(NULL, drop);
	ASSERT_NE(NULL, tag);
	ASSERT_EQ(before, self->m.log->n);

	acts[0] = drop;
	acts[1] = tag;
	acts[2] = sys;
	ASSERT_NE(NULL, mlx5dv_dr_rule_create(m, NULL, 3, acts));
	ASSERT_EQ(1, sv_calls_of(&self->m, "mlx5dv_dr_action_create_drop", 4));
	ASSERT_EQ(1, sv_calls_of(&self->m, "mlx5dv_dr_action_create_tag", 4));
	c = sv_last(&self->m);
	ASSERT_STREQ("mlx5dv_dr_rule_create", c->name);
	twin = c->acts[0];
	ASSERT_NE(NULL, twin);
	ASSERT_NE((void *)drop, twin);
	ASSERT_NE(NULL, c->acts[1]);
	ASSERT_NE((void *)tag, c->acts[1]);
	ASSERT_EQ((void *)sys, c->acts[2]);
	ASSERT_EQ(3, c->arg[2]);

	/* The same twin again, made once */
	before = self->m.log->n;
	acts[1] = sys;
	ASSERT_NE(NULL, mlx5dv_dr_rule_create(m, NULL, 2, acts));
	ASSERT_EQ(before + 1, self->m.log->n);
	ASSERT_EQ(twin, sv_last(&self->m)->acts[0]);

	/* In a dest array and a sampler */
	da[0].type = MLX5DV_DR_ACTION_DEST;
	da[0].dest = drop;
	ref.reformat = sys;
	ref.dest = sys;
	da[1].type = MLX5DV_DR_ACTION_DEST_REFORMAT;
	da[1].dest_reformat = &ref;
	ASSERT_NE(NULL, mlx5dv_dr_action_create_dest_array(
		(struct mlx5dv_dr_domain *)sv_sys_obj(&self->m), 2, dp));
	c = sv_last(&self->m);
	ASSERT_STREQ("mlx5dv_dr_action_create_dest_array", c->name);
	ASSERT_EQ(twin, c->acts[0]);
	ASSERT_EQ((void *)sys, c->acts[1]);
	ASSERT_EQ((void *)sys, c->acts[2]);
	ASSERT_EQ((struct mlx5dv_dr_action *)drop, da[0].dest);

	sa.default_next_table = (struct mlx5dv_dr_table *)sv_sys_obj(&self->m);
	sa.num_sample_actions = 2;
	sa.sample_actions = acts;
	ASSERT_NE(NULL, mlx5dv_dr_action_create_flow_sampler(&sa));
	c = sv_last(&self->m);
	ASSERT_STREQ("mlx5dv_dr_action_create_flow_sampler", c->name);
	ASSERT_EQ(twin, c->acts[0]);
	ASSERT_EQ((void *)sys, c->acts[1]);

	/* One of our domains' actions: not for the system's rules */
	mine = mlx5dv_dr_action_create_dest_ibv_qp(&svqp);
	ASSERT_NE(NULL, mine);
	acts[0] = mine;
	before = self->m.log->n;
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_dr_rule_create(m, NULL, 1, acts));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(before, self->m.log->n);
	ASSERT_EQ(0, mlx5dv_dr_action_destroy(mine));

	/* ... nor the system's actions for ours */
	mine_d = mlx5dv_dr_domain_create(self->m.sv,
					 MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_NE(NULL, mine_d);
	da[0].dest = sys;
	da[1].type = MLX5DV_DR_ACTION_DEST;
	da[1].dest = sys;
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_dr_action_create_dest_array(mine_d, 2, dp));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(before, self->m.log->n);
	ASSERT_EQ(0, mlx5dv_dr_domain_destroy(mine_d));

	/* Destroyed with its twin; while the system's is busy, neither */
	self->m.ret(EBUSY);
	ASSERT_EQ(EBUSY, mlx5dv_dr_action_destroy(drop));
	c = sv_last(&self->m);
	ASSERT_STREQ("mlx5dv_dr_action_destroy", c->name);
	ASSERT_EQ((long)twin, c->arg[0]);
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dr_action_destroy(drop));
	ASSERT_EQ((long)twin, sv_last(&self->m)->arg[0]);
	/* A tag that no rule of ours uses */
	self->m.ret(0);
	ASSERT_EQ(0, mlx5dv_dr_action_destroy(tag));
	ASSERT_STREQ("mlx5dv_dr_action_destroy", sv_last(&self->m)->name);
}

/* SOFTVERBS_SYSTEM_LIBMLX5=none: the system's devices get EOPNOTSUPP */
TEST(none)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct mlx5dv_vfio_context_attr va = { .pci_name = "0000:ff:1f.7" };
	struct mlx5dv_context dv = { 0 };

	if (!sv_rxe_up(NET0, NET1, RXE, "192.0.2.79"))
		SKIP(return, "rdma_rxe cannot be set up here");
	ASSERT_EQ(0, setenv("SOFTVERBS_SYSTEM_LIBMLX5", "none", 1));
	list = ibv_get_device_list(NULL);
	ctx = ibv_open_device(sv_find_dev(list, RXE));
	ASSERT_NE(NULL, ctx);
	ASSERT_FALSE(mlx5dv_is_supported(ctx->device));
	ASSERT_EQ(EOPNOTSUPP, mlx5dv_query_device(ctx, &dv));
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_dr_domain_create(ctx,
						MLX5DV_DR_DOMAIN_TYPE_NIC_RX));
	ASSERT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	ASSERT_EQ(NULL, mlx5dv_get_vfio_device_list(&va));
	ASSERT_EQ(EOPNOTSUPP, errno);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	sv_rxe_down(NET0, RXE);
}

TEST_HARNESS_MAIN
