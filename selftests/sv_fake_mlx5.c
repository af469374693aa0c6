// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for rdma-core's libmlx5.so.1, for mlx5_coexist_test: what
 * our libmlx5.so.1 hands to "the system's libmlx5" (user/compat/
 * mlx5_system.h) when SOFTVERBS_SYSTEM_LIBMLX5 names this library. There
 * is no mlx5 hardware to hand calls to; this records them instead.
 *
 * Every mlx5dv_* symbol of rdma-core's library is here, in its version
 * nodes (sv_fake_mlx5.map). Each records its name and its first six
 * integer or pointer arguments (the x86-64 argument registers, read
 * whatever the real prototype: no call passes anything else) in a log,
 * and returns a new object of its own (a zeroed block), or the value
 * the test set for the next call (and the errno it set). The three calls
 * that take arrays of DR actions also log the actions, as our library
 * translates them.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define SV_FAKE_LOG	64
#define SV_FAKE_ACTS	4

struct sv_fake_call {
	const char *name;
	long arg[6];
	void *acts[SV_FAKE_ACTS];	/* the DR actions it was given */
};

struct sv_fake_log {
	unsigned long n;		/* calls so far; the last at n - 1 */
	struct sv_fake_call call[SV_FAKE_LOG];
};

static struct sv_fake_log sv_fake_log;
static long sv_fake_next;
static int sv_fake_next_set;
static int sv_fake_errno;
static long sv_fake_obj[1024][8];
static unsigned int sv_fake_nobj;

struct sv_fake_log *sv_fake_mlx5_log(void);
void sv_fake_mlx5_ret(long ret);
void sv_fake_mlx5_errno(int err);

struct sv_fake_log *sv_fake_mlx5_log(void)
{
	return &sv_fake_log;
}

/* The next call returns @ret (once). */
void sv_fake_mlx5_ret(long ret)
{
	sv_fake_next = ret;
	sv_fake_next_set = 1;
}

/* The next call sets errno (this namespace's) to @err (once). */
void sv_fake_mlx5_errno(int err)
{
	sv_fake_errno = err;
}

static struct sv_fake_call *sv_fake_record(const char *name, long a, long b,
					   long c, long d, long e, long f)
{
	struct sv_fake_call *call =
		&sv_fake_log.call[sv_fake_log.n++ % SV_FAKE_LOG];

	memset(call, 0, sizeof(*call));
	call->name = name;
	call->arg[0] = a;
	call->arg[1] = b;
	call->arg[2] = c;
	call->arg[3] = d;
	call->arg[4] = e;
	call->arg[5] = f;
	return call;
}

static long sv_fake_return(void)
{
	if (sv_fake_errno) {
		errno = sv_fake_errno;
		sv_fake_errno = 0;
	}
	if (sv_fake_next_set) {
		sv_fake_next_set = 0;
		return sv_fake_next;
	}
	return (long)sv_fake_obj[sv_fake_nobj++ % 1024];
}

#define SV_FAKE(fn)							\
	long fn(long a, long b, long c, long d, long e, long f);	\
	long fn(long a, long b, long c, long d, long e, long f)		\
	{								\
		sv_fake_record(#fn, a, b, c, d, e, f);			\
		return sv_fake_return();				\
	}

SV_FAKE(_mlx5dv_mkey_check)
SV_FAKE(_mlx5dv_query_port)
SV_FAKE(mlx5dv_alloc_dm)
SV_FAKE(mlx5dv_alloc_var)
SV_FAKE(mlx5dv_create_cq)
SV_FAKE(mlx5dv_create_flow)
SV_FAKE(mlx5dv_create_flow_action_esp)
SV_FAKE(mlx5dv_create_flow_action_modify_header)
SV_FAKE(mlx5dv_create_flow_action_packet_reformat)
SV_FAKE(mlx5dv_create_flow_matcher)
SV_FAKE(mlx5dv_create_mkey)
SV_FAKE(mlx5dv_create_qp)
SV_FAKE(mlx5dv_create_steering_anchor)
SV_FAKE(mlx5dv_create_wq)
SV_FAKE(mlx5dv_crypto_login)
SV_FAKE(mlx5dv_crypto_login_create)
SV_FAKE(mlx5dv_crypto_login_destroy)
SV_FAKE(mlx5dv_crypto_login_query)
SV_FAKE(mlx5dv_crypto_login_query_state)
SV_FAKE(mlx5dv_crypto_logout)
SV_FAKE(mlx5dv_dci_stream_id_reset)
SV_FAKE(mlx5dv_dek_create)
SV_FAKE(mlx5dv_dek_destroy)
SV_FAKE(mlx5dv_dek_query)
SV_FAKE(mlx5dv_destroy_flow_matcher)
SV_FAKE(mlx5dv_destroy_mkey)
SV_FAKE(mlx5dv_destroy_steering_anchor)
SV_FAKE(mlx5dv_devx_alloc_msi_vector)
SV_FAKE(mlx5dv_devx_alloc_uar)
SV_FAKE(mlx5dv_devx_cq_modify)
SV_FAKE(mlx5dv_devx_cq_query)
SV_FAKE(mlx5dv_devx_create_cmd_comp)
SV_FAKE(mlx5dv_devx_create_eq)
SV_FAKE(mlx5dv_devx_create_event_channel)
SV_FAKE(mlx5dv_devx_destroy_cmd_comp)
SV_FAKE(mlx5dv_devx_destroy_eq)
SV_FAKE(mlx5dv_devx_destroy_event_channel)
SV_FAKE(mlx5dv_devx_free_msi_vector)
SV_FAKE(mlx5dv_devx_free_uar)
SV_FAKE(mlx5dv_devx_general_cmd)
SV_FAKE(mlx5dv_devx_get_async_cmd_comp)
SV_FAKE(mlx5dv_devx_get_event)
SV_FAKE(mlx5dv_devx_ind_tbl_modify)
SV_FAKE(mlx5dv_devx_ind_tbl_query)
SV_FAKE(mlx5dv_devx_obj_create)
SV_FAKE(mlx5dv_devx_obj_destroy)
SV_FAKE(mlx5dv_devx_obj_modify)
SV_FAKE(mlx5dv_devx_obj_query)
SV_FAKE(mlx5dv_devx_obj_query_async)
SV_FAKE(mlx5dv_devx_qp_modify)
SV_FAKE(mlx5dv_devx_qp_query)
SV_FAKE(mlx5dv_devx_query_eqn)
SV_FAKE(mlx5dv_devx_srq_modify)
SV_FAKE(mlx5dv_devx_srq_query)
SV_FAKE(mlx5dv_devx_subscribe_devx_event)
SV_FAKE(mlx5dv_devx_subscribe_devx_event_fd)
SV_FAKE(mlx5dv_devx_umem_dereg)
SV_FAKE(mlx5dv_devx_umem_reg)
SV_FAKE(mlx5dv_devx_umem_reg_ex)
SV_FAKE(mlx5dv_devx_wq_modify)
SV_FAKE(mlx5dv_devx_wq_query)
SV_FAKE(mlx5dv_dm_map_op_addr)
SV_FAKE(mlx5dv_dr_action_create_aso)
SV_FAKE(mlx5dv_dr_action_create_default_miss)
SV_FAKE(mlx5dv_dr_action_create_dest_devx_tir)
SV_FAKE(mlx5dv_dr_action_create_dest_ib_port)
SV_FAKE(mlx5dv_dr_action_create_dest_ibv_qp)
SV_FAKE(mlx5dv_dr_action_create_dest_root_table)
SV_FAKE(mlx5dv_dr_action_create_dest_table)
SV_FAKE(mlx5dv_dr_action_create_dest_vport)
SV_FAKE(mlx5dv_dr_action_create_drop)
SV_FAKE(mlx5dv_dr_action_create_flow_counter)
SV_FAKE(mlx5dv_dr_action_create_flow_meter)
SV_FAKE(mlx5dv_dr_action_create_modify_header)
SV_FAKE(mlx5dv_dr_action_create_packet_reformat)
SV_FAKE(mlx5dv_dr_action_create_pop_vlan)
SV_FAKE(mlx5dv_dr_action_create_push_vlan)
SV_FAKE(mlx5dv_dr_action_create_tag)
SV_FAKE(mlx5dv_dr_action_destroy)
SV_FAKE(mlx5dv_dr_action_modify_aso)
SV_FAKE(mlx5dv_dr_action_modify_flow_meter)
SV_FAKE(mlx5dv_dr_aso_other_domain_link)
SV_FAKE(mlx5dv_dr_aso_other_domain_unlink)
SV_FAKE(mlx5dv_dr_domain_allow_duplicate_rules)
SV_FAKE(mlx5dv_dr_domain_create)
SV_FAKE(mlx5dv_dr_domain_destroy)
SV_FAKE(mlx5dv_dr_domain_set_reclaim_device_memory)
SV_FAKE(mlx5dv_dr_domain_sync)
SV_FAKE(mlx5dv_dr_matcher_create)
SV_FAKE(mlx5dv_dr_matcher_destroy)
SV_FAKE(mlx5dv_dr_matcher_set_layout)
SV_FAKE(mlx5dv_dr_rule_destroy)
SV_FAKE(mlx5dv_dr_table_create)
SV_FAKE(mlx5dv_dr_table_destroy)
SV_FAKE(mlx5dv_dump_dr_domain)
SV_FAKE(mlx5dv_dump_dr_matcher)
SV_FAKE(mlx5dv_dump_dr_rule)
SV_FAKE(mlx5dv_dump_dr_table)
SV_FAKE(mlx5dv_free_var)
SV_FAKE(mlx5dv_get_clock_info)
SV_FAKE(mlx5dv_get_vfio_device_list)
SV_FAKE(mlx5dv_is_supported)
SV_FAKE(mlx5dv_map_ah_to_qp)
SV_FAKE(mlx5dv_modify_qp_lag_port)
SV_FAKE(mlx5dv_modify_qp_sched_elem)
SV_FAKE(mlx5dv_modify_qp_udp_sport)
SV_FAKE(mlx5dv_open_device)
SV_FAKE(mlx5dv_pp_alloc)
SV_FAKE(mlx5dv_pp_free)
SV_FAKE(mlx5dv_qp_cancel_posted_send_wrs)
SV_FAKE(mlx5dv_qp_ex_from_ibv_qp_ex)
SV_FAKE(mlx5dv_query_device)
SV_FAKE(mlx5dv_query_qp_lag_port)
SV_FAKE(mlx5dv_reserved_qpn_alloc)
SV_FAKE(mlx5dv_reserved_qpn_dealloc)
SV_FAKE(mlx5dv_sched_leaf_create)
SV_FAKE(mlx5dv_sched_leaf_destroy)
SV_FAKE(mlx5dv_sched_leaf_modify)
SV_FAKE(mlx5dv_sched_node_create)
SV_FAKE(mlx5dv_sched_node_destroy)
SV_FAKE(mlx5dv_sched_node_modify)
SV_FAKE(mlx5dv_set_context_attr)
SV_FAKE(mlx5dv_vfio_get_events_fd)
SV_FAKE(mlx5dv_vfio_process_events)

/* mlx5dv_init_obj, in both of its versions */
long sv_fake_init_obj_1_0(long a, long b);
long sv_fake_init_obj_1_2(long a, long b);
__asm__(".symver sv_fake_init_obj_1_0, mlx5dv_init_obj@MLX5_1.0");
__asm__(".symver sv_fake_init_obj_1_2, mlx5dv_init_obj@@MLX5_1.2");

long sv_fake_init_obj_1_0(long a, long b)
{
	sv_fake_record("mlx5dv_init_obj@MLX5_1.0", a, b, 0, 0, 0, 0);
	return sv_fake_return();
}

long sv_fake_init_obj_1_2(long a, long b)
{
	sv_fake_record("mlx5dv_init_obj@MLX5_1.2", a, b, 0, 0, 0, 0);
	return sv_fake_return();
}

static void sv_fake_acts(struct sv_fake_call *call, void **acts, long n)
{
	long i;

	for (i = 0; acts && i < n && i < SV_FAKE_ACTS; i++)
		call->acts[i] = acts[i];
}

long mlx5dv_dr_rule_create(long matcher, long value, long n, void **acts);
long mlx5dv_dr_rule_create(long matcher, long value, long n, void **acts)
{
	sv_fake_acts(sv_fake_record(__func__, matcher, value, n, (long)acts,
				    0, 0), acts, n);
	return sv_fake_return();
}

/* rdma-core's struct mlx5dv_dr_action_dest_attr and _dest_reformat */
struct sv_fake_dest_reformat {
	void *reformat;
	void *dest;
};

struct sv_fake_dest_attr {
	int type;	/* 0: a destination, 1: a reformat and one */
	union {
		void *dest;
		struct sv_fake_dest_reformat *dest_reformat;
	};
};

/* The destinations (a reformat's two take two slots) */
long mlx5dv_dr_action_create_dest_array(long dmn, long n,
					struct sv_fake_dest_attr **d);
long mlx5dv_dr_action_create_dest_array(long dmn, long n,
					struct sv_fake_dest_attr **d)
{
	struct sv_fake_call *call = sv_fake_record(__func__, dmn, n, (long)d,
						   0, 0, 0);
	long i, k = 0;

	for (i = 0; d && i < n && k + 1 < SV_FAKE_ACTS; i++) {
		if (d[i]->type == 1) {
			call->acts[k++] = d[i]->dest_reformat->reformat;
			call->acts[k++] = d[i]->dest_reformat->dest;
		} else {
			call->acts[k++] = d[i]->dest;
		}
	}
	return sv_fake_return();
}

/* rdma-core's struct mlx5dv_dr_flow_sampler_attr */
struct sv_fake_sampler_attr {
	uint32_t sample_ratio;
	void *default_next_table;
	uint32_t num_sample_actions;
	void **sample_actions;
	uint64_t action;
};

long mlx5dv_dr_action_create_flow_sampler(struct sv_fake_sampler_attr *attr);
long mlx5dv_dr_action_create_flow_sampler(struct sv_fake_sampler_attr *attr)
{
	sv_fake_acts(sv_fake_record(__func__, (long)attr, 0, 0, 0, 0, 0),
		     attr->sample_actions, attr->num_sample_actions);
	return sv_fake_return();
}
