// SPDX-License-Identifier: GPL-2.0
/*
 * Device, port, GID and P_Key queries through the raw ioctls: the values
 * are the uapi's SV_MAX_* limits, the GID table starts with the link-local
 * pair derived from the node GUID, and bad ports, indices, sizes and
 * reserved fields fail with the documented errno.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <endian.h>

#include "sv_harness.h"
#include "sv_test.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

/* The node GUID in sysfs ("xxxx:xxxx:xxxx:xxxx") as a host-order number. */
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

TEST_F(dev, device_attrs)
{
	struct sv_query_device q;

	memset(&q, 0xa5, sizeof(q));
	q.size = sizeof(q);
	q.comp_mask = 0;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	EXPECT_STREQ(SV_FW_VER, q.fw_ver);
	/* The rest of fw_ver is zeroed, not the caller's bytes. */
	EXPECT_EQ(0, q.fw_ver[sizeof(q.fw_ver) - 1]);
	EXPECT_EQ(sysfs_node_guid(), be64toh(q.node_guid));
	EXPECT_NE(0, q.node_guid);
	EXPECT_EQ(q.node_guid, q.sys_image_guid);
	EXPECT_EQ(SV_MAX_MR_SIZE, q.max_mr_size);
	EXPECT_EQ(SV_PAGE_SIZE_CAP, q.page_size_cap);
	EXPECT_EQ(SV_VENDOR_ID, q.vendor_id);
	EXPECT_EQ(SV_VENDOR_PART_ID, q.vendor_part_id);
	EXPECT_EQ(SV_HW_VER, q.hw_ver);
	EXPECT_EQ(sv_param("max_qp"), q.max_qp);
	EXPECT_EQ(SV_DEFAULT_MAX_QP_WR, q.max_qp_wr);
	EXPECT_EQ(SV_DEVICE_CAP_FLAGS, q.device_cap_flags);
	EXPECT_EQ(SV_MAX_SGE, q.max_sge);
	EXPECT_EQ(SV_MAX_SGE_RD, q.max_sge_rd);
	EXPECT_EQ(sv_param("max_cq"), q.max_cq);
	EXPECT_EQ(SV_DEFAULT_MAX_CQE, q.max_cqe);
	EXPECT_EQ(sv_param("max_mr"), q.max_mr);
	EXPECT_EQ(sv_param("max_pd"), q.max_pd);
	EXPECT_EQ(SV_MAX_QP_RD_ATOM, q.max_qp_rd_atom);
	EXPECT_EQ(q.max_qp * SV_MAX_QP_RD_ATOM, q.max_res_rd_atom);
	EXPECT_EQ(SV_MAX_QP_INIT_RD_ATOM, q.max_qp_init_rd_atom);
	EXPECT_EQ(SV_ATOMIC_HCA, q.atomic_cap);
	EXPECT_EQ(SV_MAX_MCAST_GRP, q.max_mcast_grp);
	EXPECT_EQ(SV_MAX_MCAST_QP_ATTACH, q.max_mcast_qp_attach);
	EXPECT_EQ(SV_MAX_TOTAL_MCAST_QP_ATTACH, q.max_total_mcast_qp_attach);
	EXPECT_EQ(sv_param("max_ah"), q.max_ah);
	EXPECT_EQ(sv_param("max_srq"), q.max_srq);
	EXPECT_EQ(SV_DEFAULT_MAX_SRQ_WR, q.max_srq_wr);
	EXPECT_EQ(SV_MAX_SRQ_SGE, q.max_srq_sge);
	EXPECT_EQ(SV_MAX_PKEYS, q.max_pkeys);
	EXPECT_EQ(SV_LOCAL_CA_ACK_DELAY, q.local_ca_ack_delay);
	EXPECT_EQ(1, q.phys_port_cnt);
	EXPECT_EQ(SV_MAX_INLINE_DATA, q.max_inline_data);
	EXPECT_EQ(SV_NUM_COMP_VECTORS, q.num_comp_vectors);
	EXPECT_EQ(sizeof(q), q.size);
}

TEST_F(dev, device_bad_args)
{
	struct sv_query_device q = { .size = sizeof(q) };
	struct {
		struct sv_query_device q;
		uint64_t tail;
	} big = { .q.size = sizeof(big) };

	q.comp_mask = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	EXPECT_EQ(EINVAL, errno);
	q.comp_mask = 0;
	q.size = SV_QUERY_DEVICE_SIZE_VER0 - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	EXPECT_EQ(EINVAL, errno);
	/* A longer struct with a zero tail is fine, a non-zero one E2BIG. */
	EXPECT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &big));
	EXPECT_EQ(sv_param("max_qp"), big.q.max_qp);
	EXPECT_EQ(0, big.tail);
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &big));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_DEVICE, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, port_1)
{
	struct sv_query_port q;

	memset(&q, 0xa5, sizeof(q));
	q.size = sizeof(q);
	q.port_num = 1;
	q.reserved = 0;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_PORT, &q));
	EXPECT_EQ(1, q.port_num);
	EXPECT_EQ(SV_PORT_ACTIVE, q.state);
	EXPECT_EQ(SV_MTU_4096, q.max_mtu);
	EXPECT_EQ(SV_MTU_4096, q.active_mtu);
	EXPECT_EQ(SV_GID_TBL_LEN, q.gid_tbl_len);
	EXPECT_EQ(SV_PORT_CAP_FLAGS, q.port_cap_flags);
	EXPECT_EQ(SV_MAX_MSG_SZ, q.max_msg_sz);
	EXPECT_EQ(0, q.bad_pkey_cntr);
	EXPECT_EQ(0, q.qkey_viol_cntr);
	EXPECT_EQ(1, q.pkey_tbl_len);
	EXPECT_EQ(0, q.lid);
	EXPECT_EQ(0, q.sm_lid);
	EXPECT_EQ(0, q.lmc);
	EXPECT_EQ(SV_MAX_VL_NUM, q.max_vl_num);
	EXPECT_EQ(0, q.sm_sl);
	EXPECT_EQ(0, q.subnet_timeout);
	EXPECT_EQ(0, q.init_type_reply);
	EXPECT_EQ(SV_WIDTH_4X, q.active_width);
	EXPECT_EQ(SV_SPEED_EDR, q.active_speed);
	EXPECT_EQ(SV_PHYS_STATE_LINK_UP, q.phys_state);
	EXPECT_EQ(SV_LINK_LAYER_ETHERNET, q.link_layer);
	EXPECT_EQ(0, q.flags);
	EXPECT_EQ(0, q.port_cap_flags2);
	EXPECT_EQ(0, q.reserved);
}

TEST_F(dev, port_bad_args)
{
	struct sv_query_port q = { .size = sizeof(q) };
	unsigned int bad[] = { 0, 2, 255, 256, 0xffffffff };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q.port_num = bad[i];
		EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PORT, &q));
		EXPECT_EQ(EINVAL, errno) TH_LOG("port %u", bad[i]);
	}
	q.port_num = 1;
	q.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PORT, &q));
	EXPECT_EQ(EINVAL, errno);
	q.reserved = 0;
	q.size = SV_QUERY_PORT_SIZE_VER0 - 4;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PORT, &q));
	EXPECT_EQ(EINVAL, errno);
}

static int query_gid(int fd, unsigned int port, unsigned int index,
		     struct sv_query_gid *q)
{
	memset(q, 0xa5, sizeof(*q));
	q->size = sizeof(*q);
	q->port_num = port;
	q->index = index;
	q->reserved = 0;
	return ioctl(fd, SV_IOC_QUERY_GID, q);
}

TEST_F(dev, gid_link_local)
{
	uint64_t guid = sysfs_node_guid();
	uint8_t want[16] = { 0xfe, 0x80 };
	struct sv_query_gid q;
	int i;

	for (i = 0; i < 8; i++)
		want[8 + i] = guid >> (56 - 8 * i);
	ASSERT_EQ(0, query_gid(self->fd, 1, 0, &q));
	EXPECT_EQ(0, memcmp(want, q.gid, 16));
	EXPECT_EQ(SV_GID_TYPE_ROCE_V1, q.gid_type);
	EXPECT_EQ(0, q.ndev_ifindex);
	EXPECT_EQ(0, q.reserved);
	ASSERT_EQ(0, query_gid(self->fd, 1, 1, &q));
	EXPECT_EQ(0, memcmp(want, q.gid, 16));
	EXPECT_EQ(SV_GID_TYPE_ROCE_V2, q.gid_type);
	EXPECT_EQ(0, q.ndev_ifindex);
	/* The EUI-64 of a MAC: ff:fe in the middle, U/L bit flipped. */
	EXPECT_EQ(0xff, q.gid[11]);
	EXPECT_EQ(0xfe, q.gid[12]);
}

TEST_F(dev, gid_empty_and_out_of_range)
{
	struct sv_query_gid q;

	/* The loopback device has no addresses: entry 2 on are empty. */
	EXPECT_EQ(-1, query_gid(self->fd, 1, 2, &q));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, query_gid(self->fd, 1, SV_GID_TBL_LEN - 1, &q));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, query_gid(self->fd, 1, SV_GID_TBL_LEN, &q));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, query_gid(self->fd, 1, 0xffffffff, &q));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, query_gid(self->fd, 0, 0, &q));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, query_gid(self->fd, 2, 0, &q));
	EXPECT_EQ(EINVAL, errno);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.port_num = 1;
	q.reserved = 7;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_GID, &q));
	EXPECT_EQ(EINVAL, errno);
	q.reserved = 0;
	q.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_GID, &q));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, pkey)
{
	struct sv_query_pkey q = { .size = sizeof(q), .port_num = 1 };

	q.pkey = 0x1234;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(0xffff, q.pkey);
	q.index = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(EINVAL, errno);
	q.index = 0xffffffff;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(EINVAL, errno);
	q.index = 0;
	q.port_num = 2;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(EINVAL, errno);
	q.port_num = 1;
	q.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(EINVAL, errno);
	q.reserved = 0;
	q.size = SV_QUERY_PKEY_SIZE_VER0 - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_PKEY, &q));
	EXPECT_EQ(EINVAL, errno);
}

TEST(sysfs_attrs)
{
	char buf[128];

	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/fw_ver", buf, sizeof(buf)));
	EXPECT_STREQ(SV_FW_VER, buf);
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/node_type", buf, sizeof(buf)));
	EXPECT_STREQ("1: CA", buf);
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/sys_image_guid", buf,
				  sizeof(buf)));
	{
		char guid[128];

		ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/node_guid", guid,
					  sizeof(guid)));
		EXPECT_STREQ(guid, buf);
	}
}

TEST_HARNESS_MAIN
