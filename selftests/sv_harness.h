/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness, with every test's timeout multiplied by $SV_SLOW
 * (scripts/test-debug sets it: KASAN and lockdep make the suite several
 * times slower, and its tests should run, not time out).
 */
#ifndef SV_HARNESS_H
#define SV_HARNESS_H

#include <stdlib.h>
#include <string.h>

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

/*
 * For a developer's run of a few cases: $SV_ONLY_TEST and
 * $SV_ONLY_VARIANT, when set, keep only the tests (variants) of that
 * exact name. The harness counts what is left for its plan.
 */
static inline void sv_filter_tests(void)
{
	const char *tn = getenv("SV_ONLY_TEST");
	const char *vn = getenv("SV_ONLY_VARIANT");
	struct __fixture_variant_metadata **vp;
	struct __test_metadata **tp;
	struct __fixture_metadata *f;

	for (f = __fixture_list; f; f = f->next) {
		for (tp = &f->tests; tn && *tp;) {
			if (strcmp((*tp)->name, tn))
				*tp = (*tp)->next;
			else
				tp = &(*tp)->next;
		}
		if (!vn || !f->variant)
			continue;
		for (vp = &f->variant; *vp;) {
			if (strcmp((*vp)->name, vn))
				*vp = (*vp)->next;
			else
				vp = &(*vp)->next;
		}
		if (!f->variant)	/* not the harness's one empty variant */
			f->tests = NULL;
	}
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
		sv_filter_tests(); \
		sv_scale_timeouts(); \
		return test_harness_run(argc, argv); \
	}

#endif /* SV_HARNESS_H */
