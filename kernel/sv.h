/* SPDX-License-Identifier: GPL-2.0 */
/* softverbs: module-internal declarations shared between files. */
#ifndef SV_H
#define SV_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/types.h>

#include "../uapi/softverbs-abi.h"

#define SV_MAX_DEVICES	64

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

/* file.c */
extern const struct file_operations sv_fops;

#endif /* SV_H */
