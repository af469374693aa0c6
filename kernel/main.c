// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs: a software RDMA device. Module entry points.
 */
#include <linux/module.h>

#include "sv.h"

static struct sv_device *sv_default_dev;

static int __init sv_init(void)
{
	int ret;

	ret = sv_device_class_init();
	if (ret)
		return ret;

	sv_default_dev = sv_device_create();
	if (IS_ERR(sv_default_dev)) {
		sv_device_class_exit();
		return PTR_ERR(sv_default_dev);
	}
	return 0;
}

static void __exit sv_exit(void)
{
	sv_device_destroy(sv_default_dev);
	sv_device_class_exit();
}

module_init(sv_init);
module_exit(sv_exit);

MODULE_DESCRIPTION("softverbs: software RDMA device");
MODULE_AUTHOR("The softverbs authors");
MODULE_LICENSE("GPL");
