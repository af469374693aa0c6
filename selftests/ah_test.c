// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles through the raw ioctls: a RoCE address vector is
 * checked (GRH, port, GID index), the AH pins its PD, handles are per file.
 */
#include <fcntl.h>

#include "sv_harness.h"
#include "sv_qp_test.h"

FIXTURE(dev) {
	int fd;
	uint32_t pd;
	struct sv_create_ah c;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	self->pd = sv_alloc_pd(self->fd);
	ASSERT_NE(0, self->pd);
	memset(&self->c, 0, sizeof(self->c));
	self->c.size = sizeof(self->c);
	self->c.pd_handle = self->pd;
	sv_good_av(&self->c.attr);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

static int destroy_ah(int fd, uint32_t ah)
{
	struct sv_destroy_ah d = { .size = sizeof(d), .handle = ah };

	return sv_ioc(fd, SV_IOC_DESTROY_AH, &d);
}

TEST_F(dev, create_destroy)
{
	uint32_t h;

	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	EXPECT_NE(0, self->c.handle);
	h = self->c.handle;
	/* dlid and src_path_bits mean nothing on RoCE: accepted. */
	self->c.attr.dlid = 0xffff;
	self->c.attr.src_path_bits = 0x7f;
	self->c.attr.sgid_index = 0;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	EXPECT_NE(h, self->c.handle);
	EXPECT_EQ(EBUSY, sv_dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(0, destroy_ah(self->fd, h));
	EXPECT_EQ(ENOENT, destroy_ah(self->fd, h));
	EXPECT_EQ(0, destroy_ah(self->fd, self->c.handle));
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

/*
 * A flow label wider than 20 bits and an SL above 15 are taken, as rxe and
 * mlx5 take them, keeping the bits the wire has (isolation_test checks a
 * QP's AV the same way).
 */
TEST_F(dev, wide_flow_label_and_sl)
{
	struct sv_destroy_ah d = { .size = sizeof(d) };

	self->c.attr.flow_label = 0xffffffff;
	self->c.attr.sl = 0xff;
	self->c.attr.dlid = 0x1234;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	d.handle = self->c.handle;
	EXPECT_EQ(0, sv_ioc(self->fd, SV_IOC_DESTROY_AH, &d));
}

TEST_F(dev, bad_attr)
{
	struct sv_create_ah good = self->c;

	self->c.attr.is_global = 0;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c = good;
	self->c.attr.port_num = 0;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c.attr.port_num = 2;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c = good;
	self->c.attr.sgid_index = SV_GID_TBL_LEN;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c.attr.sgid_index = 255;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c.attr.sgid_index = SV_TEST_EMPTY_SGID;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c = good;
	self->c.attr.reserved[0] = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c = good;
	self->c.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c = good;
	self->c.size = SV_CREATE_AH_SIZE_VER0 - 4;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	/* Nothing was created: the PD is free. */
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

TEST_F(dev, bad_pd)
{
	uint32_t cq = sv_create_cq(self->fd);

	self->c.pd_handle = 0;
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c.pd_handle = 4000;
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	self->c.pd_handle = cq;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_AH, &self->c));
	EXPECT_EQ(EINVAL, destroy_ah(self->fd, cq));
	EXPECT_EQ(ENOENT, destroy_ah(self->fd, 4000));
}

TEST(foreign_ah)
{
	int a = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	int b = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	struct sv_create_ah c = { .size = sizeof(c) };
	int base = sv_obj_count("ah");

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	c.pd_handle = sv_alloc_pd(a);
	sv_good_av(&c.attr);
	ASSERT_EQ(0, sv_ioc(a, SV_IOC_CREATE_AH, &c));
	EXPECT_EQ(ENOENT, destroy_ah(b, c.handle));
	c.pd_handle = 1;
	ASSERT_EQ(ENOENT, sv_ioc(b, SV_IOC_CREATE_AH, &c));
	if (base >= 0)
		EXPECT_EQ(base + 1, sv_obj_count("ah"));
	close(a);
	if (base >= 0)
		EXPECT_EQ(base, sv_obj_count("ah"));
	close(b);
}

TEST_HARNESS_MAIN
