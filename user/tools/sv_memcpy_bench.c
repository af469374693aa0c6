// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_memcpy_bench: the memcpy baseline of scripts/bench. One thread copies
 * a block of SIZE bytes from one buffer to another ITERS times and reports
 * the bandwidth in perftest's unit, MB/sec with MB = 2^20 bytes, so that the
 * figure sits next to ib_write_bw's "BW average[MB/sec]". Like perftest's
 * default (one message buffer per side, reused by every work request), the
 * same source and destination blocks are copied each time.
 *
 *   sv_memcpy_bench [-s SIZE] [-n ITERS]     defaults: 65536, 20000
 *
 * Output, one line: "#bytes #iterations BW[MB/sec] MsgRate[Mpps]" values.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long parse(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || !v) {
		fprintf(stderr, "sv_memcpy_bench: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long size = 65536, iters = 20000, i;
	unsigned char *src, *dst;
	double t0, t;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:h")) != -1) {
		switch (opt) {
		case 's':
			size = parse(optarg, "size");
			break;
		case 'n':
			iters = parse(optarg, "iterations");
			break;
		default:
			fprintf(stderr, "usage: %s [-s SIZE] [-n ITERS]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (posix_memalign((void **)&src, 4096, size) ||
	    posix_memalign((void **)&dst, 4096, size)) {
		fprintf(stderr, "sv_memcpy_bench: out of memory\n");
		return 1;
	}
	memset(src, 0x5a, size);
	memset(dst, 0, size);
	/* One warm-up copy: page faults are not part of the figure. */
	memcpy(dst, src, size);

	t0 = now();
	for (i = 0; i < iters; i++) {
		memcpy(dst, src, size);
		/* The copy is used: the compiler may not drop or merge it. */
		__asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
	}
	t = now() - t0;
	if (dst[size - 1] != 0x5a) {
		fprintf(stderr, "sv_memcpy_bench: copy check failed\n");
		return 1;
	}
	printf("#bytes #iterations BW[MB/sec] MsgRate[Mpps]\n");
	printf("%lu %lu %.2f %.6f\n", size, iters,
	       (double)size * iters / t / (1 << 20), iters / t / 1e6);
	free(src);
	free(dst);
	return 0;
}
