// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs API of libsoftverbs for devices: built against the system's
 * <infiniband/verbs.h> and linked with -lsoftverbs. Device list, open and
 * close, the context's ops, and device/port/GID/P_Key queries through the
 * header's inline functions, checked against the raw ioctls.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

/* rdma-core's private call, exported in IBVERBS_PRIVATE_34. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);
/* IBVERBS_1.0, declared in rdma-core's driver.h, not installed. */
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

static uint64_t sysfs_node_guid(void)
{
	unsigned int a, b, c, d;
	char buf[64];

	if (sv_read_attr(SV_SYSFS0 "/node_guid", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &d) != 4)
		return 0;
	return ((uint64_t)a << 48) | ((uint64_t)b << 32) |
	       ((uint64_t)c << 16) | d;
}

static struct ibv_device *find_dev(struct ibv_device **list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

TEST(device_list)
{
	struct ibv_device **list, *dev;
	int n = -1, i;

	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	ASSERT_LE(1, n);
	EXPECT_EQ(NULL, list[n]);
	for (i = 0; i < n; i++)
		EXPECT_NE(NULL, list[i]);
	dev = find_dev(list, "softverbs0");
	ASSERT_NE(NULL, dev);
	EXPECT_STREQ("softverbs0", dev->name);
	EXPECT_STREQ("softverbs0", dev->dev_name);
	EXPECT_STREQ(SV_SYSFS0, dev->ibdev_path);
	EXPECT_STREQ(SV_SYSFS0, dev->dev_path);
	EXPECT_EQ(IBV_NODE_CA, dev->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IB, dev->transport_type);
	EXPECT_EQ(sysfs_node_guid(), be64toh(ibv_get_device_guid(dev)));
	EXPECT_EQ(0, ibv_get_device_index(dev));
	/* Names that do not exist are not listed. */
	EXPECT_EQ(NULL, find_dev(list, "softverbs63"));
	EXPECT_EQ(NULL, find_dev(list, "nosuch"));
	ibv_free_device_list(list);

	/* num_devices is optional. */
	list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, list);
	EXPECT_NE(NULL, find_dev(list, "softverbs0"));
	ibv_free_device_list(list);
	ibv_free_device_list(NULL);
}

TEST(sysfs_helpers)
{
	char buf[64], path[IBV_SYSFS_PATH_MAX];

	EXPECT_STREQ("/sys", ibv_get_sysfs_path());
	EXPECT_EQ(1, ibv_read_sysfs_file(SV_SYSFS0, "abi_version", buf,
					 sizeof(buf)));
	snprintf(path, sizeof(path), "%d", SV_ABI_VERSION);
	EXPECT_STREQ(path, buf);
	/* Truncated to the buffer, always NUL-terminated. */
	EXPECT_EQ(3, ibv_read_sysfs_file(SV_SYSFS0, "node_guid", buf, 4));
	EXPECT_EQ(0, buf[3]);
	EXPECT_EQ(-1, ibv_read_sysfs_file(SV_SYSFS0, "nosuch", buf,
					  sizeof(buf)));
	EXPECT_EQ(ENOENT, errno);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * Devices come from $SYSFS_PATH/class/softverbs: one whose kernel speaks
 * another ABI version is left out; a listed device whose char device is
 * missing fails to open with the open(2) errno.
 */
/* Make root/class/softverbs/name (into dir), with its two files. */
static int fake_dev(const char *root, const char *name, const char *abi,
		    const char *guid, char *dir, size_t len)
{
	snprintf(dir, len, "%s/class", root);
	mkdir(dir, 0755);
	snprintf(dir, len, "%s/class/softverbs", root);
	mkdir(dir, 0755);
	snprintf(dir, len, "%s/class/softverbs/%s", root, name);
	if (mkdir(dir, 0755))
		return -1;
	write_file(dir, "abi_version", abi);
	write_file(dir, "node_guid", guid);
	return 0;
}

TEST(sysfs_path_and_abi_filter)
{
	char root[] = "/tmp/sv_sysfs_XXXXXX", dir[PATH_MAX], abi[16];
	struct ibv_device **list;
	int n = -1;

	ASSERT_NE(NULL, mkdtemp(root));
	ASSERT_EQ(0, fake_dev(root, "softverbs61", "999\n",
			      "0002:c9ff:fe00:0001\n", dir, sizeof(dir)));
	snprintf(abi, sizeof(abi), "%d\n", SV_ABI_VERSION);
	ASSERT_EQ(0, fake_dev(root, "softverbs62", abi,
			      "0002:c9ff:fe00:0002\n", dir, sizeof(dir)));

	ASSERT_EQ(0, setenv("SYSFS_PATH", root, 1));
	EXPECT_STREQ(root, ibv_get_sysfs_path());
	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("softverbs62", ibv_get_device_name(list[0]));
	EXPECT_STREQ(dir, list[0]->ibdev_path);
	EXPECT_EQ(62, ibv_get_device_index(list[0]));
	EXPECT_EQ(htobe64(0x0002c9fffe000002ULL),
		  ibv_get_device_guid(list[0]));
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_device(list[0]));
	EXPECT_EQ(ENOENT, errno);
	ibv_free_device_list(list);

	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	EXPECT_EQ(0, system(dir));
}

/*
 * As libibverbs: a device is the same struct ibv_device in every list
 * while sysfs shows it, and stays valid after its list is freed; one
 * that sysfs shows with another GUID is a new one, and the old one
 * lives on in the lists that hold it.
 */
TEST(device_cache)
{
	char root[] = "/tmp/sv_sysfs_XXXXXX", dir[PATH_MAX], abi[16];
	struct ibv_device **l1, **l2, **l3, *dev;
	int n = -1;

	ASSERT_NE(NULL, mkdtemp(root));
	snprintf(abi, sizeof(abi), "%d\n", SV_ABI_VERSION);
	ASSERT_EQ(0, fake_dev(root, "softverbs62", abi,
			      "0002:c9ff:fe00:0002\n", dir, sizeof(dir)));
	ASSERT_EQ(0, setenv("SYSFS_PATH", root, 1));

	l1 = ibv_get_device_list(&n);
	ASSERT_NE(NULL, l1);
	ASSERT_EQ(1, n);
	dev = l1[0];
	ibv_free_device_list(l1);
	/* Still the device: named, and opened with the open(2) errno. */
	EXPECT_STREQ("softverbs62", ibv_get_device_name(dev));
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_device(dev));
	EXPECT_EQ(ENOENT, errno);
	l2 = ibv_get_device_list(&n);
	ASSERT_NE(NULL, l2);
	ASSERT_EQ(1, n);
	EXPECT_EQ(dev, l2[0]);

	/* Another device under the name: a new struct, the old one kept. */
	write_file(dir, "node_guid", "0002:c9ff:fe00:0003\n");
	l3 = ibv_get_device_list(&n);
	ASSERT_NE(NULL, l3);
	ASSERT_EQ(1, n);
	EXPECT_NE(dev, l3[0]);
	EXPECT_EQ(htobe64(0x0002c9fffe000003ULL), ibv_get_device_guid(l3[0]));
	EXPECT_EQ(62, ibv_get_device_index(dev));
	EXPECT_STREQ("softverbs62", ibv_get_device_name(dev));
	ibv_free_device_list(l3);

	/* Gone from sysfs: gone from the list, alive in l2. */
	snprintf(dir, sizeof(dir), "rm -rf '%s/class/softverbs/softverbs62'",
		 root);
	ASSERT_EQ(0, system(dir));
	l1 = ibv_get_device_list(&n);
	ASSERT_NE(NULL, l1);
	EXPECT_EQ(0, n);
	EXPECT_EQ(NULL, l1[0]);
	ibv_free_device_list(l1);
	EXPECT_STREQ("softverbs62", ibv_get_device_name(l2[0]));
	ibv_free_device_list(l2);

	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	EXPECT_EQ(0, system(dir));
}

FIXTURE(ctx) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	int fd;			/* a raw fd for comparisons */
};

FIXTURE_SETUP(ctx)
{
	struct ibv_device *dev;

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	dev = find_dev(self->list, "softverbs0");
	ASSERT_NE(NULL, dev);
	self->ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("open: %s", strerror(errno));
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
	ibv_free_device_list(self->list);
	close(self->fd);
}

TEST_F(ctx, context_fields)
{
	struct verbs_context *v = verbs_get_ctx(self->ctx);
	void **p;
	size_t i;

	ASSERT_NE(NULL, v);
	EXPECT_EQ(sizeof(*v), v->sz);
	EXPECT_LE(0, self->ctx->cmd_fd);
	EXPECT_EQ(SV_NUM_COMP_VECTORS, self->ctx->num_comp_vectors);
	EXPECT_STREQ("softverbs0", ibv_get_device_name(self->ctx->device));

	/* Every op is set: the inline functions call them unchecked. */
	p = (void **)&self->ctx->ops;
	for (i = 0; i < sizeof(self->ctx->ops) / sizeof(void *); i++)
		EXPECT_NE(NULL, p[i]) TH_LOG("ibv_context_ops slot %zu", i);
	for (i = offsetof(struct verbs_context, query_port);
	     i < offsetof(struct verbs_context, _ABI_placeholder3);
	     i += sizeof(void *)) {
		if (i == offsetof(struct verbs_context, priv))
			continue;
		EXPECT_NE(NULL, *(void **)((char *)v + i))
			TH_LOG("verbs_context offset %zu", i);
	}
}

/* Verbs softverbs lacks so far fail with EOPNOTSUPP (README). */
TEST_F(ctx, unsupported_ops)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_SYNC }, *bad = NULL;
	struct ibv_srq *srq;

	ASSERT_NE(NULL, pd);
	srq = ibv_create_srq(pd, &sa);
	ASSERT_NE(NULL, srq);
	/* Tag lists are TM SRQs' only. */
	EXPECT_EQ(EINVAL, ibv_post_srq_ops(srq, &op, &bad));
	EXPECT_EQ(&op, bad);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(ctx, query_device)
{
	struct sv_query_device q = { .size = sizeof(q) };
	struct ibv_device_attr a;

	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	memset(&a, 0xa5, sizeof(a));
	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_STREQ(q.fw_ver, a.fw_ver);
	EXPECT_EQ(q.node_guid, a.node_guid);
	EXPECT_EQ(sysfs_node_guid(), be64toh(a.node_guid));
	EXPECT_EQ(q.sys_image_guid, a.sys_image_guid);
	EXPECT_EQ(SV_MAX_MR_SIZE, a.max_mr_size);
	EXPECT_EQ(SV_PAGE_SIZE_CAP, a.page_size_cap);
	EXPECT_EQ(SV_VENDOR_ID, a.vendor_id);
	EXPECT_EQ(SV_VENDOR_PART_ID, a.vendor_part_id);
	EXPECT_EQ(SV_HW_VER, a.hw_ver);
	EXPECT_EQ(sv_param("max_qp"), (unsigned int)a.max_qp);
	EXPECT_EQ(SV_DEFAULT_MAX_QP_WR, a.max_qp_wr);
	EXPECT_EQ(IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
		  IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_WINDOW |
		  IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC,
		  a.device_cap_flags);
	EXPECT_EQ(SV_MAX_SGE, a.max_sge);
	EXPECT_EQ(SV_MAX_SGE_RD, a.max_sge_rd);
	EXPECT_EQ(sv_param("max_cq"), (unsigned int)a.max_cq);
	EXPECT_EQ(SV_DEFAULT_MAX_CQE, a.max_cqe);
	EXPECT_EQ(sv_param("max_mr"), (unsigned int)a.max_mr);
	EXPECT_EQ(sv_param("max_pd"), (unsigned int)a.max_pd);
	EXPECT_EQ(SV_MAX_QP_RD_ATOM, a.max_qp_rd_atom);
	EXPECT_EQ(0, a.max_ee_rd_atom);
	EXPECT_EQ(a.max_qp * SV_MAX_QP_RD_ATOM, a.max_res_rd_atom);
	EXPECT_EQ(SV_MAX_QP_INIT_RD_ATOM, a.max_qp_init_rd_atom);
	EXPECT_EQ(0, a.max_ee_init_rd_atom);
	EXPECT_EQ(IBV_ATOMIC_HCA, a.atomic_cap);
	EXPECT_EQ(0, a.max_ee);
	EXPECT_EQ(0, a.max_rdd);
	/* Windows count as MRs (mw_test.c). */
	EXPECT_EQ(sv_param("max_mr"), (unsigned int)a.max_mw);
	EXPECT_EQ(0, a.max_raw_ipv6_qp);
	EXPECT_EQ(0, a.max_raw_ethy_qp);
	EXPECT_EQ(SV_MAX_MCAST_GRP, a.max_mcast_grp);
	EXPECT_EQ(SV_MAX_MCAST_QP_ATTACH, a.max_mcast_qp_attach);
	EXPECT_EQ(SV_MAX_TOTAL_MCAST_QP_ATTACH, a.max_total_mcast_qp_attach);
	EXPECT_EQ(sv_param("max_ah"), (unsigned int)a.max_ah);
	EXPECT_EQ(0, a.max_fmr);
	EXPECT_EQ(0, a.max_map_per_fmr);
	EXPECT_EQ(sv_param("max_srq"), (unsigned int)a.max_srq);
	EXPECT_EQ(SV_DEFAULT_MAX_SRQ_WR, a.max_srq_wr);
	EXPECT_EQ(SV_MAX_SRQ_SGE, a.max_srq_sge);
	EXPECT_EQ(1, a.max_pkeys);
	EXPECT_EQ(SV_LOCAL_CA_ACK_DELAY, a.local_ca_ack_delay);
	EXPECT_EQ(1, a.phys_port_cnt);
}

TEST_F(ctx, query_device_ex)
{
	struct verbs_context *v = verbs_get_ctx(self->ctx);
	struct ibv_query_device_ex_input in = {};
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	memset(&ex, 0xa5, sizeof(ex));
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(0, memcmp(&a, &ex.orig_attr, sizeof(a)));
	EXPECT_EQ(0, ex.comp_mask);
	/* On-demand paging, implicit too, on every transport (odp_test). */
	EXPECT_EQ(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT,
		  ex.odp_caps.general_caps);
	EXPECT_EQ(0x3f, ex.odp_caps.per_transport_caps.rc_odp_caps);
	EXPECT_EQ(0x3f, ex.xrc_odp_caps);
	/* The device clock: ns of CLOCK_MONOTONIC_RAW (rxmeta_test.c). */
	EXPECT_EQ(0x7fffffffffffffffULL, ex.completion_timestamp_mask);
	EXPECT_EQ(1000000, ex.hca_core_clock);
	/*
	 * Bits 38 and 39: IB_UVERBS_DEVICE_FLUSH_GLOBAL and _PERSISTENT
	 * (flush_test.c); 40: _ATOMIC_WRITE (datapath_test.c).
	 */
	EXPECT_EQ(a.device_cap_flags | IBV_DEVICE_PCI_WRITE_END_PADDING |
		  (7ULL << 38), ex.device_cap_flags_ex);
	EXPECT_EQ(SV_MAX_CQ_MOD_COUNT, ex.cq_mod_caps.max_cq_count);
	EXPECT_EQ(SV_MAX_CQ_MOD_PERIOD, ex.cq_mod_caps.max_cq_period);
	EXPECT_EQ(0, ex.tso_caps.max_tso);
	/* softverbs0 has no netdev: WQs, but no RSS QPs or raw packets. */
	EXPECT_EQ(0, ex.rss_caps.max_rwq_indirection_tables);
	EXPECT_EQ(0, ex.rss_caps.supported_qpts);
	EXPECT_EQ(SV_MAX_WQ, ex.max_wq_type_rq);
	EXPECT_EQ(0, ex.raw_packet_caps);
	EXPECT_EQ(SV_MAX_DM_SIZE, ex.max_dm_size);
	EXPECT_EQ(1, ex.phys_port_cnt_ex);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, &in, &ex));

	in.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_query_device_ex(self->ctx, &in, &ex));
	/* The op takes the caller's size: the basic attrs at least. */
	EXPECT_EQ(EINVAL, v->query_device_ex(self->ctx, NULL, &ex,
					     sizeof(ex.orig_attr) - 1));
	memset(&ex, 0xa5, sizeof(ex));
	ASSERT_EQ(0, v->query_device_ex(self->ctx, NULL, &ex,
					sizeof(ex.orig_attr)));
	EXPECT_EQ(sv_param("max_qp"), (unsigned int)ex.orig_attr.max_qp);
	/* Nothing written past the size given. */
	EXPECT_EQ(0xa5a5a5a5, ex.comp_mask);
}

TEST_F(ctx, query_port)
{
	struct sv_query_port q = { .size = sizeof(q), .port_num = 1 };
	struct ibv_port_attr a;

	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_PORT, &q));
	memset(&a, 0xa5, sizeof(a));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &a));
	EXPECT_EQ(IBV_PORT_ACTIVE, a.state);
	EXPECT_EQ(IBV_MTU_4096, a.max_mtu);
	EXPECT_EQ(IBV_MTU_4096, a.active_mtu);
	EXPECT_EQ(SV_GID_TBL_LEN, a.gid_tbl_len);
	EXPECT_EQ(IBV_PORT_IP_BASED_GIDS, a.port_cap_flags);
	EXPECT_EQ(q.max_msg_sz, a.max_msg_sz);
	EXPECT_EQ(0, a.bad_pkey_cntr);
	EXPECT_EQ(0, a.qkey_viol_cntr);
	EXPECT_EQ(1, a.pkey_tbl_len);
	EXPECT_EQ(0, a.lid);
	EXPECT_EQ(0, a.sm_lid);
	EXPECT_EQ(0, a.lmc);
	EXPECT_EQ(1, a.max_vl_num);
	EXPECT_EQ(0, a.sm_sl);
	EXPECT_EQ(0, a.subnet_timeout);
	EXPECT_EQ(0, a.init_type_reply);
	EXPECT_EQ(2, a.active_width);		/* 4X */
	EXPECT_EQ(32, a.active_speed);		/* EDR, 25 Gb/s */
	EXPECT_EQ(5, a.phys_state);		/* LinkUp */
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, a.link_layer);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, a.port_cap_flags2);

	/* The op writes exactly the size it is given, zeroing what it does
	 * not know; the exported symbol serves binaries built against the
	 * old, shorter struct (it ended before flags).
	 */
	{
		struct verbs_context *v = verbs_get_ctx(self->ctx);
		struct {
			struct ibv_port_attr a;
			uint64_t tail[2];
		} big;

		memset(&big, 0xa5, sizeof(big));
		ASSERT_EQ(0, v->query_port(self->ctx, 1, &big.a, sizeof(big)));
		EXPECT_EQ(0, memcmp(&a, &big.a, sizeof(a)));
		EXPECT_EQ(0, big.tail[0]);
		EXPECT_EQ(0, big.tail[1]);
		memset(&big, 0xa5, sizeof(big));
		ASSERT_EQ(0, (ibv_query_port)(self->ctx, 1,
			  (struct _compat_ibv_port_attr *)&big.a));
		EXPECT_EQ(IBV_PORT_ACTIVE, big.a.state);
		EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, big.a.link_layer);
		EXPECT_EQ(0xa5, big.a.flags);
		EXPECT_EQ(0xa5a5, big.a.port_cap_flags2);
	}

	EXPECT_EQ(EINVAL, ibv_query_port(self->ctx, 0, &a));
	EXPECT_EQ(EINVAL, ibv_query_port(self->ctx, 2, &a));
	EXPECT_EQ(EINVAL, ibv_query_port(self->ctx, 255, &a));
}

TEST_F(ctx, query_gid)
{
	struct sv_query_gid q = { .size = sizeof(q), .port_num = 1 };
	enum ibv_gid_type_sysfs type;
	union ibv_gid gid, zero = {};
	int i;

	for (i = 0; i < 2; i++) {
		q.index = i;
		ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_GID, &q));
		memset(&gid, 0xa5, sizeof(gid));
		ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, i, &gid));
		EXPECT_EQ(0, memcmp(q.gid, gid.raw, 16));
		EXPECT_EQ(htobe64(0xfe80ULL << 48), gid.global.subnet_prefix);
		EXPECT_EQ(htobe64(sysfs_node_guid()), gid.global.interface_id);
		ASSERT_EQ(0, ibv_query_gid_type(self->ctx, 1, i, &type));
		EXPECT_EQ(i ? IBV_GID_TYPE_SYSFS_ROCE_V2 :
			  IBV_GID_TYPE_SYSFS_IB_ROCE_V1, type);
	}
	/* An empty entry reads as the zero GID, successfully. */
	memset(&gid, 0xa5, sizeof(gid));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 2, &gid));
	EXPECT_EQ(0, memcmp(&zero, &gid, sizeof(gid)));
	ASSERT_EQ(0, ibv_query_gid_type(self->ctx, 1, 2, &type));
	/* Out of the table or a bad port: -1 with errno. */
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 1, SV_GID_TBL_LEN, &gid));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 1, -1, &gid));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 2, 0, &gid));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ibv_query_gid_type(self->ctx, 1, SV_GID_TBL_LEN, &type));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ctx, query_gid_ex)
{
	struct ibv_gid_entry e, tab[SV_GID_TBL_LEN];
	union ibv_gid gid;

	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	memset(&e, 0xa5, sizeof(e));
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 0, &e, 0));
	EXPECT_EQ(0, memcmp(&gid, &e.gid, sizeof(gid)));
	EXPECT_EQ(0, e.gid_index);
	EXPECT_EQ(1, e.port_num);
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V1, e.gid_type);
	EXPECT_EQ(0, e.ndev_ifindex);
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 1, &e, 0));
	EXPECT_EQ(1, e.gid_index);
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, e.gid_type);
	EXPECT_EQ(0, memcmp(&gid, &e.gid, sizeof(gid)));

	EXPECT_EQ(ENODATA, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));
	EXPECT_EQ(EINVAL, ibv_query_gid_ex(self->ctx, 1, SV_GID_TBL_LEN,
					   &e, 0));
	EXPECT_EQ(EINVAL, ibv_query_gid_ex(self->ctx, 0, 0, &e, 0));
	EXPECT_EQ(EINVAL, ibv_query_gid_ex(self->ctx, 1, 0, &e, 1));

	/* The table lists only the valid entries. */
	ASSERT_EQ(2, ibv_query_gid_table(self->ctx, tab, SV_GID_TBL_LEN, 0));
	EXPECT_EQ(0, tab[0].gid_index);
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V1, tab[0].gid_type);
	EXPECT_EQ(1, tab[1].gid_index);
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, tab[1].gid_type);
	EXPECT_EQ(1, tab[1].port_num);
	EXPECT_EQ(-EINVAL, ibv_query_gid_table(self->ctx, tab, 1, 0));
	EXPECT_EQ(-EINVAL, ibv_query_gid_table(self->ctx, tab, 2, 1));
}

TEST_F(ctx, query_pkey)
{
	__be16 pkey = 0;

	ASSERT_EQ(0, ibv_query_pkey(self->ctx, 1, 0, &pkey));
	EXPECT_EQ(htobe16(0xffff), pkey);
	EXPECT_EQ(-1, ibv_query_pkey(self->ctx, 1, 1, &pkey));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ibv_query_pkey(self->ctx, 1, -1, &pkey));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ibv_query_pkey(self->ctx, 2, 0, &pkey));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_get_pkey_index(self->ctx, 1, htobe16(0xffff)));
	EXPECT_EQ(-1, ibv_get_pkey_index(self->ctx, 1, htobe16(0x7fff)));
	EXPECT_EQ(-1, ibv_get_pkey_index(self->ctx, 2, htobe16(0xffff)));
}

/* A context keeps its device alive after the list is freed. */
TEST(open_after_free_list)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr a;

	list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, list);
	ASSERT_NE(NULL, find_dev(list, "softverbs0"));
	ctx = ibv_open_device(find_dev(list, "softverbs0"));
	ASSERT_NE(NULL, ctx);
	ibv_free_device_list(list);
	EXPECT_STREQ("softverbs0", ibv_get_device_name(ctx->device));
	EXPECT_EQ(0, ibv_query_device(ctx, &a));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * A device found in a list that is freed before it is opened, as
 * pyverbs opens a provider's context: rdma-core allows it.
 */
TEST(open_from_freed_list)
{
	struct ibv_device **list, **again, *dev;
	struct ibv_context *ctx;
	struct ibv_device_attr a;

	list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, list);
	dev = find_dev(list, "softverbs0");
	ASSERT_NE(NULL, dev);
	ibv_free_device_list(list);
	ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, ctx);
	EXPECT_EQ(dev, ctx->device);
	EXPECT_EQ(0, ibv_query_device(ctx, &a));
	again = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, again);
	EXPECT_EQ(dev, find_dev(again, "softverbs0"));
	ibv_free_device_list(again);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * svctl dev set vendor_id: what ibv_query_device() reports, at once, for
 * programs that take a vendor's path only on its id; back to softverbs'
 * own after.
 */
TEST(vendor_id_set_by_svctl)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_device_attr a;
	char svctl[PATH_MAX], cmd[PATH_MAX + 64];

	ASSERT_NE(NULL, list);
	ctx = sv_open_named(list, "softverbs0");
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, sv_svctl_path(svctl, sizeof(svctl)));
	snprintf(cmd, sizeof(cmd), "%s dev set softverbs0 vendor_id 0x02c9",
		 svctl);
	EXPECT_EQ(0, system(cmd));
	EXPECT_EQ(0, ibv_query_device(ctx, &a));
	EXPECT_EQ(0x02c9, a.vendor_id);
	snprintf(cmd, sizeof(cmd), "%s dev set softverbs0 vendor_id %d",
		 svctl, SV_VENDOR_ID);
	EXPECT_EQ(0, system(cmd));
	EXPECT_EQ(0, ibv_query_device(ctx, &a));
	EXPECT_EQ(SV_VENDOR_ID, a.vendor_id);
	EXPECT_EQ(0, ibv_close_device(ctx));
	ibv_free_device_list(list);
}

TEST(many_contexts)
{
	struct ibv_context *ctx[16];
	struct ibv_device **list;
	int i;

	list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, list);
	for (i = 0; i < 16; i++) {
		ctx[i] = ibv_open_device(find_dev(list, "softverbs0"));
		ASSERT_NE(NULL, ctx[i]);
	}
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, ibv_close_device(ctx[i]));
	ibv_free_device_list(list);
}

TEST(strings_and_fork)
{
	EXPECT_STREQ("InfiniBand channel adapter",
		     ibv_node_type_str(IBV_NODE_CA));
	EXPECT_STREQ("unknown", ibv_node_type_str(99));
	EXPECT_STREQ("active", ibv_port_state_str(IBV_PORT_ACTIVE));
	EXPECT_STREQ("port active", ibv_event_type_str(IBV_EVENT_PORT_ACTIVE));
	EXPECT_STREQ("success", ibv_wc_status_str(IBV_WC_SUCCESS));
	EXPECT_STREQ("Work Request Flushed Error",
		     ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	EXPECT_STREQ("unknown", ibv_wc_status_str(-1));
	EXPECT_EQ(4, ibv_rate_to_mult(IBV_RATE_10_GBPS));
	EXPECT_EQ(IBV_RATE_40_GBPS, mult_to_ibv_rate(16));
	EXPECT_EQ(IBV_RATE_MAX, mult_to_ibv_rate(-1));
	EXPECT_EQ(103125, ibv_rate_to_mbps(IBV_RATE_100_GBPS));
	EXPECT_EQ(IBV_RATE_25_GBPS, mbps_to_ibv_rate(25781));
	/* Registered pages are pinned long-term: fork needs no setup. */
	EXPECT_EQ(0, ibv_fork_init());
	EXPECT_EQ(IBV_FORK_UNNEEDED, ibv_is_fork_initialized());
}

TEST_HARNESS_MAIN
