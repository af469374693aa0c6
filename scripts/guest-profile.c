// SPDX-License-Identifier: GPL-2.0
/*
 * A qemu TCG plugin for scripts/guest-profile: it counts the guest
 * instructions executed in every translation block, by the block's first
 * guest virtual address, and writes "vaddr instructions executions" lines
 * when qemu exits. Built against qemu 7.2's plugin ABI (version 1), whose
 * few entry points it declares itself.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info;

typedef void (*sv_tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*sv_udata_cb)(qemu_plugin_id_t id, void *data);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   sv_tb_trans_cb cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
/* op 0 is QEMU_PLUGIN_INLINE_ADD_U64 */
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, sv_udata_cb cb,
				    void *data);

#define SV_EXPORT __attribute__((visibility("default")))

SV_EXPORT int qemu_plugin_version = 1;

struct sv_block {
	uint64_t vaddr;
	uint64_t insns;		/* added to by the translated code */
	uint64_t execs;
	struct sv_block *next;
};

#define SV_BUCKET_BITS	20

static struct sv_block **sv_table;
static pthread_mutex_t sv_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *sv_out = "guest-profile.txt";

/* The block counted at vaddr, made on first sight. Under sv_lock. */
static struct sv_block *sv_block_at(uint64_t vaddr)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ull) >> (64 - SV_BUCKET_BITS);
	struct sv_block *b;

	for (b = sv_table[h]; b; b = b->next)
		if (b->vaddr == vaddr)
			return b;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->vaddr = vaddr;
	b->next = sv_table[h];
	sv_table[h] = b;
	return b;
}

/*
 * Each translation (a block may be translated again) adds its counts to
 * the one record of its address. The adds are not atomic: two vCPUs in
 * one block at once may lose a count, which a profile can afford.
 */
static void sv_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct sv_block *b;

	(void)id;
	pthread_mutex_lock(&sv_lock);
	b = sv_block_at(qemu_plugin_tb_vaddr(tb));
	pthread_mutex_unlock(&sv_lock);
	if (!b)
		return;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &b->insns,
						 qemu_plugin_tb_n_insns(tb));
	qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &b->execs, 1);
}

static void sv_exit(qemu_plugin_id_t id, void *data)
{
	struct sv_block *b;
	FILE *f;
	size_t i;

	(void)id;
	(void)data;
	f = fopen(sv_out, "w");
	if (!f) {
		perror(sv_out);
		return;
	}
	for (i = 0; i < (size_t)1 << SV_BUCKET_BITS; i++)
		for (b = sv_table[i]; b; b = b->next)
			if (b->insns)
				fprintf(f, "%016llx %llu %llu\n",
					(unsigned long long)b->vaddr,
					(unsigned long long)b->insns,
					(unsigned long long)b->execs);
	fclose(f);
}

SV_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				  const struct qemu_info *info,
				  int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			sv_out = strdup(argv[i] + 4);
	sv_table = calloc((size_t)1 << SV_BUCKET_BITS, sizeof(*sv_table));
	if (!sv_table)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, sv_tb_trans);
	qemu_plugin_register_atexit_cb(id, sv_exit, NULL);
	return 0;
}
