// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs debugfs: /sys/kernel/debug/softverbs/<dev>/objects lists the
 * live objects of each type, so tests can see that nothing leaked;
 * next_qpn (root only) is where QPN allocation goes on. engines (root
 * only) lists each engine's users with the WQEs the kthread ran for them.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sv.h"

static struct dentry *sv_debugfs_root;

static int sv_objects_show(struct seq_file *m, void *unused)
{
	struct sv_device *sdev = m->private;
	int t;

	for (t = SV_OBJ_NONE + 1; t < SV_OBJ_MAX; t++)
		seq_printf(m, "%s %d\n", sv_obj_name(t),
			   atomic_read(&sdev->nobjs[t]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sv_objects);

static int sv_engines_dbg_show(struct seq_file *m, void *unused)
{
	sv_engines_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sv_engines_dbg);

void sv_debugfs_add_device(struct sv_device *sdev)
{
	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->dev),
					   sv_debugfs_root);
	debugfs_create_file("objects", 0444, sdev->debugfs, sdev,
			    &sv_objects_fops);
	/* The next QPN to try: tests move it to the top of the range. */
	debugfs_create_u32("next_qpn", 0600, sdev->debugfs, &sdev->next_qpn);
	sv_mr_debugfs_add(sdev, sdev->debugfs);
}

void sv_debugfs_del_device(struct sv_device *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}

void sv_debugfs_init(void)
{
	sv_debugfs_root = debugfs_create_dir(SV_CLASS_NAME, NULL);
	/* Per engine, per user: files and WQEs the kthread executed. */
	debugfs_create_file("engines", 0400, sv_debugfs_root, NULL,
			    &sv_engines_dbg_fops);
}

void sv_debugfs_exit(void)
{
	debugfs_remove_recursive(sv_debugfs_root);
}
