// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs devices: the "softverbs" class, the char device region, and
 * each device's life (create, sysfs attributes, destroy).
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "compat.h"
#include "sv.h"

static dev_t sv_devt_base;
static DEFINE_IDA(sv_index_ida);

/*
 * Every registered device, by index. Changes under sv_devices_lock (and
 * rtnl, which netdev.c and netlink.c take first); lookups from atomic
 * context under RCU: a device's memory outlives a grace period after it
 * left the registry (sv_device_remove()).
 */
DEFINE_MUTEX(sv_devices_lock);
DEFINE_XARRAY(sv_devices);

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", SV_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_name(dev));
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t node_guid_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	u64 guid = be64_to_cpu(to_sv_device(dev)->node_guid);

	return sysfs_emit(buf, "%04llx:%04llx:%04llx:%04llx\n",
			  (guid >> 48) & 0xffff, (guid >> 32) & 0xffff,
			  (guid >> 16) & 0xffff, guid & 0xffff);
}
static DEVICE_ATTR_RO(node_guid);

/* The device has one system image: its node GUID, as the query reports. */
static ssize_t sys_image_guid_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return node_guid_show(dev, attr, buf);
}
static DEVICE_ATTR_RO(sys_image_guid);

static ssize_t fw_ver_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", SV_FW_VER);
}
static DEVICE_ATTR_RO(fw_ver);

/* As the IB core's node_type: "1: CA". */
static ssize_t node_type_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "1: CA\n");
}
static DEVICE_ATTR_RO(node_type);

/* The device's index, which names it in the kernel (ibv_get_device_index). */
static ssize_t dev_index_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sv_device(dev)->index);
}
static DEVICE_ATTR_RO(dev_index);

/*
 * The cookie of the device's network namespace (SO_NETNS_COOKIE's): the
 * library lists only the devices of its caller's namespace, as the RDMA
 * core's exclusive mode shows a namespace only its own.
 */
static ssize_t net_cookie_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  read_pnet(&to_sv_device(dev)->net)->net_cookie);
}
static DEVICE_ATTR_RO(net_cookie);

static struct attribute *sv_dev_attrs[] = {
	&dev_attr_dev_index.attr,
	&dev_attr_abi_version.attr,
	&dev_attr_ibdev.attr,
	&dev_attr_node_guid.attr,
	&dev_attr_sys_image_guid.attr,
	&dev_attr_fw_ver.attr,
	&dev_attr_node_type.attr,
	&dev_attr_net_cookie.attr,
	NULL,
};
ATTRIBUTE_GROUPS(sv_dev);

static char *sv_devnode(SV_DEVNODE_CONST struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0666;
	return kasprintf(GFP_KERNEL, "infiniband/%s", dev_name(dev));
}

static struct class sv_class = {
	.name = SV_CLASS_NAME,
	.devnode = sv_devnode,
	.dev_groups = sv_dev_groups,
};

/* EUI-64 from a MAC address, as RoCE derives a node GUID. */
static __be64 sv_guid_from_mac(const u8 *mac)
{
	u8 g[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe,
		    mac[3], mac[4], mac[5] };

	return cpu_to_be64(((u64)g[0] << 56) | ((u64)g[1] << 48) |
			   ((u64)g[2] << 40) | ((u64)g[3] << 32) |
			   ((u64)g[4] << 24) | ((u64)g[5] << 16) |
			   ((u64)g[6] << 8) | g[7]);
}

static void sv_device_release(struct device *dev)
{
	struct sv_device *sdev = to_sv_device(dev);

	sv_qp_device_fini(sdev);
	sv_steer_device_fini(sdev);
	sv_limits_device_fini(sdev);
	sv_stats_free(sdev);
	mutex_destroy(&sdev->files_lock);
	ida_free(&sv_index_ida, sdev->index);
	kfree(sdev);
}

/*
 * A new registered device named @name (NULL: softverbsN) with the MAC @mac
 * (NULL: a random one), living in the network namespace @net. Caller holds
 * sv_devices_lock and has checked that the name is free.
 */
struct sv_device *sv_device_create(const char *name, const u8 *mac,
				   struct net *net)
{
	struct sv_device *sdev;
	int index, ret;

	lockdep_assert_held(&sv_devices_lock);
	index = ida_alloc_max(&sv_index_ida, SV_MAX_DEVICES - 1, GFP_KERNEL);
	if (index < 0)
		return ERR_PTR(index);

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev) {
		ida_free(&sv_index_ida, index);
		return ERR_PTR(-ENOMEM);
	}
	sdev->index = index;
	write_pnet(&sdev->net, net);
	mutex_init(&sdev->files_lock);
	INIT_LIST_HEAD(&sdev->files);
	sdev->port_state = SV_PORT_ACTIVE;
	sdev->active_mtu = SV_MTU_4096;
	sdev->idle_us = sv_default_idle_us();
	sv_depth_device_init(sdev);
	sdev->part_id = SV_VENDOR_PART_ID;
	sdev->vendor_id = SV_VENDOR_ID;
	INIT_WORK(&sdev->gid_work, sv_gid_work);
	sv_qp_device_init(sdev);
	if (mac)
		ether_addr_copy(sdev->mac, mac);
	else	/* no netdev: a random, locally administered MAC */
		eth_random_addr(sdev->mac);
	sdev->node_guid = sv_guid_from_mac(sdev->mac);
	sv_gid_table_init(sdev);

	device_initialize(&sdev->dev);
	/*
	 * dma-buf exporters map their buffers for the importing device
	 * (mr/dmabuf.c): a 64-bit DMA mask (direct, no IOMMU: the device
	 * is the CPU), as rxe gives its device.
	 */
	dma_coerce_mask_and_coherent(&sdev->dev, DMA_BIT_MASK(64));
	sdev->dev.class = &sv_class;
	sdev->dev.devt = MKDEV(MAJOR(sv_devt_base), index);
	sdev->dev.release = sv_device_release;
	ret = sv_stats_alloc(sdev);
	if (ret)
		goto err_put;
	ret = sv_steer_device_init(sdev);
	if (ret)
		goto err_put;
	if (name)
		ret = dev_set_name(&sdev->dev, "%s", name);
	else
		ret = dev_set_name(&sdev->dev, "softverbs%d", index);
	if (ret)
		goto err_put;
	ret = sv_limits_device_init(sdev);	/* by name: the rdma cgroup */
	if (ret)
		goto err_put;

	cdev_init(&sdev->cdev, &sv_fops);
	sdev->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&sdev->cdev, &sdev->dev);
	if (ret)
		goto err_put;
	ret = xa_err(xa_store(&sv_devices, index, sdev, GFP_KERNEL));
	if (ret) {
		cdev_device_del(&sdev->cdev, &sdev->dev);
		goto err_put;
	}
	sv_route_changed();	/* its GIDs are reachable now */
	sv_debugfs_add_device(sdev);
	return sdev;

err_put:
	put_device(&sdev->dev);
	return ERR_PTR(ret);
}

/*
 * The registered device named @name, in any network namespace, or NULL:
 * names are global (they are /dev/infiniband and sysfs names), so a new
 * device's name must be free everywhere. sv_devices_lock held.
 */
struct sv_device *sv_device_find(const char *name)
{
	struct sv_device *sdev;
	unsigned long index;

	lockdep_assert_held(&sv_devices_lock);
	xa_for_each(&sv_devices, index, sdev)
		if (!strcmp(dev_name(&sdev->dev), name))
			return sdev;
	return NULL;
}

/*
 * The registered device named @name if it lives in @net, else NULL: a
 * device of another network namespace is absent for management.
 * sv_devices_lock held.
 */
struct sv_device *sv_device_find_net(const struct net *net, const char *name)
{
	struct sv_device *sdev = sv_device_find(name);

	return sdev && sv_device_in_net(sdev, net) ? sdev : NULL;
}

/* Queue an async event about port 1 on every open file of the device. */
void sv_device_event(struct sv_device *sdev, u32 event_type)
{
	struct sv_file *f;

	mutex_lock(&sdev->files_lock);
	list_for_each_entry(f, &sdev->files, dev_node)
		sv_async_event(f, event_type,
			       event_type == SV_EVENT_DEVICE_FATAL ? 0 :
			       SV_PHYS_PORT_CNT, NULL);
	mutex_unlock(&sdev->files_lock);
}

/*
 * The device is going away while files may still be open: refuse new
 * object commands (sv_ioctl() checks sdev->dead under f->lock), wait for
 * the ones running, and move every QP to the error state.
 */
static void sv_device_kill(struct sv_device *sdev)
{
	struct sv_file *f;
	unsigned long qpn;
	struct sv_qp *qp;
	u8 was = READ_ONCE(sdev->port_state);

	mutex_lock(&sdev->files_lock);
	WRITE_ONCE(sdev->dead, true);
	WRITE_ONCE(sdev->port_state, SV_PORT_DOWN);
	sv_route_changed();
	list_for_each_entry(f, &sdev->files, dev_node) {
		/* Every ioctl that saw the device alive has finished. */
		mutex_lock(&f->lock);
		mutex_unlock(&f->lock);
	}
	mutex_unlock(&sdev->files_lock);

	/* Flushed now, not when the engines next wake on their own. */
	rcu_read_lock();
	xa_for_each(&sdev->qps, qpn, qp)
		sv_qp_fatal(qp);
	rcu_read_unlock();
	if (was == SV_PORT_ACTIVE)
		sv_device_event(sdev, SV_EVENT_PORT_ERR);
	sv_device_event(sdev, SV_EVENT_DEVICE_FATAL);
}

/*
 * Unregister a device: it leaves the registry, its netdev and /dev; open
 * files keep the memory until they close. Caller holds rtnl and
 * sv_devices_lock.
 */
void sv_device_remove(struct sv_device *sdev)
{
	ASSERT_RTNL();
	lockdep_assert_held(&sv_devices_lock);
	xa_erase(&sv_devices, sdev->index);
	sv_netdev_unbind(sdev);
	sv_device_kill(sdev);
	sv_cm_device_gone(sdev);
	sv_debugfs_del_device(sdev);
	cdev_device_del(&sdev->cdev, &sdev->dev);
	/* Address notifiers may still be looking at it under RCU. */
	synchronize_rcu();
	cancel_work_sync(&sdev->gid_work);
	put_device(&sdev->dev);
}

/* Module exit: no file is open. */
void sv_device_remove_all(void)
{
	struct sv_device *sdev;
	unsigned long index;

	rtnl_lock();
	mutex_lock(&sv_devices_lock);
	xa_for_each(&sv_devices, index, sdev)
		sv_device_remove(sdev);
	mutex_unlock(&sv_devices_lock);
	rtnl_unlock();
}

int sv_device_class_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&sv_devt_base, 0, SV_MAX_DEVICES,
				  SV_CLASS_NAME);
	if (ret)
		return ret;
	ret = class_register(&sv_class);
	if (ret) {
		unregister_chrdev_region(sv_devt_base, SV_MAX_DEVICES);
		return ret;
	}
	sv_debugfs_init();
	return 0;
}

void sv_device_class_exit(void)
{
	sv_debugfs_exit();
	class_unregister(&sv_class);
	unregister_chrdev_region(sv_devt_base, SV_MAX_DEVICES);
}
