// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs: a software RDMA device. Module entry points.
 */
#include <linux/module.h>
#include <net/genetlink.h>

#include "sv.h"

static int __init sv_init(void)
{
	struct sv_device *sdev;
	int ret;

	ret = sv_null_mr_init();
	if (ret)
		return ret;
	ret = sv_odp_init();
	if (ret)
		goto err_null;
	ret = sv_engines_init();
	if (ret)
		goto err_odp;
	ret = sv_steer_init();
	if (ret) {
		sv_engines_exit();
		goto err_odp;
	}
	ret = sv_device_class_init();
	if (ret)
		goto err_engines;

	/*
	 * softverbs0: the device without a netdev, always there, in the
	 * initial network namespace.
	 */
	mutex_lock(&sv_devices_lock);
	sdev = sv_device_create(NULL, NULL, &init_net);
	mutex_unlock(&sv_devices_lock);
	if (IS_ERR(sdev)) {
		ret = PTR_ERR(sdev);
		goto err_class;
	}
	ret = sv_netdev_init();
	if (ret)
		goto err_devices;
	ret = sv_cm_init();
	if (ret)
		goto err_netdev;
	ret = sv_netlink_init();
	if (ret)
		goto err_cm;
	return 0;

err_cm:
	sv_netdev_exit();
	sv_cm_exit();
	goto err_devices;
err_netdev:
	sv_netdev_exit();
err_devices:
	sv_device_remove_all();
err_class:
	sv_device_class_exit();
err_engines:
	sv_steer_exit();
	sv_engines_exit();
err_odp:
	sv_odp_exit();
err_null:
	sv_null_mr_exit();
	return ret;
}

static void __exit sv_exit(void)
{
	sv_netlink_exit();
	sv_netdev_exit();
	sv_cm_exit();
	sv_device_remove_all();
	sv_steer_exit();
	sv_device_class_exit();
	sv_engines_exit();
	sv_odp_exit();
	sv_null_mr_exit();
}

module_init(sv_init);
module_exit(sv_exit);

MODULE_DESCRIPTION("softverbs: software RDMA device");
MODULE_AUTHOR("The softverbs authors");
MODULE_LICENSE("GPL");
MODULE_ALIAS_GENL_FAMILY(SV_NL_FAMILY_NAME);
