/* SPDX-License-Identifier: GPL-2.0 */
/* softverbs: module-internal declarations shared between files. */
#ifndef SV_H
#define SV_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "../uapi/softverbs-abi.h"

#define SV_MAX_DEVICES	64

enum sv_obj_type {
	SV_OBJ_NONE,
	SV_OBJ_PD,
	SV_OBJ_MR,
	SV_OBJ_CQ,
	SV_OBJ_QP,
	SV_OBJ_SRQ,
	SV_OBJ_AH,
	SV_OBJ_COMP_CHANNEL,
	SV_OBJ_WQ,
	SV_OBJ_RWQ_IND_TBL,
	SV_OBJ_FLOW,
	SV_OBJ_MAX
};

/* query.c: one entry of a device's RoCE GID table */
struct sv_gid_entry {
	u8 gid[16];
	u32 type;			/* SV_GID_TYPE_* */
	u32 ifindex;			/* netdev of the address, or 0 */
	bool valid;
};

/*
 * One softverbs device: a char device /dev/infiniband/softverbsN and its
 * sysfs node /sys/class/softverbs/softverbsN. Its lifetime is the embedded
 * struct device's reference count: every open file holds a reference.
 */
struct sv_device {
	struct device dev;
	struct cdev cdev;
	u32 index;
	u8 mac[6];
	__be64 node_guid;
	struct dentry *debugfs;
	atomic_t nobjs[SV_OBJ_MAX];	/* live objects of each type */
	/* query.c: the RoCE GID table of port 1 */
	spinlock_t gid_lock;		/* protects gids[]; BH-safe */
	struct sv_gid_entry gids[SV_GID_TBL_LEN];
};

/* Per-open-file state: the verbs context of one process (or fd). */
struct sv_file {
	struct sv_device *sdev;
	struct mutex lock;		/* serializes control ioctls */
	struct xarray objs;		/* handle -> struct sv_uobj */
};

struct sv_uobj;

struct sv_uobj_ops {
	/* The handle left the table: tear down, drop parents' usecnt. */
	void (*destroy)(struct sv_uobj *u);
	/* The last reference is gone: free the memory. */
	void (*free)(struct sv_uobj *u);
};

/* Embedded first in every object userspace names by handle. */
struct sv_uobj {
	struct kref ref;
	struct sv_file *file;
	u32 handle;
	enum sv_obj_type type;
	atomic_t usecnt;		/* live objects that name this one */
	const struct sv_uobj_ops *ops;
};

static inline struct sv_device *to_sv_device(struct device *dev)
{
	return container_of(dev, struct sv_device, dev);
}

/* device.c */
int sv_device_class_init(void);
void sv_device_class_exit(void);
struct sv_device *sv_device_create(void);
void sv_device_destroy(struct sv_device *sdev);

/* uobj.c */
const char *sv_obj_name(enum sv_obj_type type);
int sv_uobj_add(struct sv_file *f, struct sv_uobj *u, enum sv_obj_type type,
		const struct sv_uobj_ops *ops);
struct sv_uobj *sv_uobj_get(struct sv_file *f, u32 handle,
			    enum sv_obj_type type);
void sv_uobj_put(struct sv_uobj *u);
int sv_uobj_destroy(struct sv_file *f, u32 handle, enum sv_obj_type type);
void sv_uobj_destroy_all(struct sv_file *f);

/* debugfs.c */
void sv_debugfs_init(void);
void sv_debugfs_exit(void);
void sv_debugfs_add_device(struct sv_device *sdev);
void sv_debugfs_del_device(struct sv_device *sdev);

/* query.c: device, port, GID and P_Key queries */
int sv_query_device(struct sv_file *f, void *arg);
int sv_query_port(struct sv_file *f, void *arg);
int sv_query_gid(struct sv_file *f, void *arg);
int sv_query_pkey(struct sv_file *f, void *arg);
void sv_gid_table_init(struct sv_device *sdev);
int sv_gid_add(struct sv_device *sdev, const u8 gid[16], u32 ifindex);
void sv_gid_del(struct sv_device *sdev, const u8 gid[16], u32 ifindex);

/* PD and MR (pd.c, mr.c) */

/* A protection domain. Children pin it: sv_pd_pin() ... sv_pd_unpin(). */
struct sv_pd {
	struct sv_uobj uobj;
};

struct sv_pd *sv_pd_get(struct sv_file *f, u32 handle);
void sv_pd_put(struct sv_pd *pd);
struct sv_pd *sv_pd_pin(struct sv_file *f, u32 handle);
void sv_pd_unpin(struct sv_pd *pd);
int sv_alloc_pd(struct sv_file *f, void *arg);
int sv_dealloc_pd(struct sv_file *f, void *arg);

/* MR keys: a 24-bit index (never 0) and an 8-bit variant. */
#define SV_MR_KEY_INDEX_BITS	24

struct sv_mr;

struct sv_mr *sv_mr_lookup_key(struct sv_device *sdev, u32 key);
void sv_mr_put(struct sv_mr *mr);
int sv_mr_copy_to(struct sv_mr *mr, u32 key, struct sv_pd *pd, u32 access,
		  u64 iova, const void *buf, size_t len);
int sv_mr_copy_from(struct sv_mr *mr, u32 key, struct sv_pd *pd, u32 access,
		    u64 iova, void *buf, size_t len);

/* One side of an MR-to-MR copy: through key, by a QP of pd, needing access. */
struct sv_mr_span {
	struct sv_mr *mr;		/* referenced by the caller */
	u32 key;
	struct sv_pd *pd;
	u32 access;			/* SV_ACCESS_*; 0: local read */
	u64 iova;
};

int sv_mr_copy_mr(const struct sv_mr_span *dst, const struct sv_mr_span *src,
		  size_t len);
void sv_mr_debugfs_add(struct sv_device *sdev, struct dentry *dir);
int sv_reg_mr(struct sv_file *f, void *arg);
int sv_rereg_mr(struct sv_file *f, void *arg);
int sv_dereg_mr(struct sv_file *f, void *arg);

/* file.c */
extern const struct file_operations sv_fops;

#endif /* SV_H */
