/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness, with every test's timeout multiplied by $SV_SLOW
 * (scripts/test-debug sets it: KASAN and lockdep make the suite several
 * times slower, and its tests should run, not time out).
 */
#ifndef SV_HARNESS_H
#define SV_HARNESS_H

#include <stdlib.h>

#include "kselftest_harness.h"

/* How many times slower than a stock kernel this run is: $SV_SLOW, >= 1. */
static inline int sv_slow(void)
{
	const char *s = getenv("SV_SLOW");
	int k = s ? atoi(s) : 1;

	return k > 1 ? k : 1;
}

static inline void sv_scale_timeouts(void)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	int k = sv_slow();

	if (k == 1)
		return;
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= k;
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN \
	static void __attribute__((constructor)) \
	__constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) { \
		sv_scale_timeouts(); \
		return test_harness_run(argc, argv); \
	}

#endif /* SV_HARNESS_H */
